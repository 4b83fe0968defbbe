package handlers

import (
	"net/http"
	"reflect"
	"strings"
	"sync"

	"couponsvc/models"
	"couponsvc/services"

	"github.com/gin-gonic/gin"
)

// The route tables: every endpoint of the service is one row here, and both
// the router (registerRoutes) and the OpenAPI document (openapi.go) are made
// from these rows, so that they cannot disagree.
//
// Adding an endpoint is one row and a handler: write the handler (a method of
// *Server taking *gin.Context), its request struct with json tags (doc:"..."
// for the description, binding:"required" for a field that must be present),
// and add a row below naming the method, path, roles, handler, request type,
// answer payload, success status and result words, and the error result words
// the handler answers besides those every route shares (see routeErrors).
// TestRouteOneRowIsAnEndpoint does just that. TestOpenAPIMatchesRouter,
// TestOpenAPIRequestBodies and TestSecurityMatrix then check the new
// endpoint; the last one wants a row of fixtures (the URL and body to call it
// with) in handlers/security_test.go when it has a path parameter or a body.

// apiPrefix is where the JSON API lives. Its routes find out who calls
// (authenticate) before anything else.
const apiPrefix = "/api/v1/"

// route is one endpoint of the JSON API or of the operational endpoints.
type route struct {
	method, path string // gin's syntax: /templates/:id
	// roles may call it (requireRole); nil means anyone, also anonymous.
	roles []string
	// guard runs before the role check (the claim's admission control).
	guard func(*Server) gin.HandlerFunc
	// handler answers the request; build makes one handler for the router's
	// life instead (for handlers that hold state).
	handler func(*Server, *gin.Context)
	build   func(*Server) gin.HandlerFunc

	tag, summary, description string
	// request is the JSON body's struct (nil: no body).
	request reflect.Type
	// query and header list the parameters besides the path's.
	query, header []param
	// status and results of the success answer; answer is the struct of its
	// payload (the keys beside code, result and error).
	status  int
	results []string
	answer  reflect.Type
	// duplicate200 adds a 200 "duplicate" answer beside a 201.
	duplicate200 bool
	// errors are the result words of the errors particular to this route, by
	// HTTP status; routeErrors adds those every route of its kind answers.
	errors map[int][]string
	// raw is a success answer that is not the JSON result body.
	raw *rawAnswer
}

// param is a query or header parameter.
type param struct {
	name, description string
	required          bool
	schema            map[string]any
}

// rawAnswer is a success answer in another format than the JSON result body.
type rawAnswer struct {
	mediaType string
	schema    map[string]any
}

// typeOf names a request or answer type in a row.
func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

func roles(r ...string) []string { return r }

// apiRoutes is the table of the operational endpoints and the JSON API.
func apiRoutes() []route {
	admin := roles(models.RoleAdmin)
	return []route{
		// Operations.
		{method: "GET", path: "/healthz", handler: (*Server).healthz,
			tag: "operations", summary: "The process is up", status: 200, results: []string{"ok"}},
		{method: "GET", path: "/readyz", handler: (*Server).readyz,
			tag: "operations", summary: "The database and Redis answer", status: 200, results: []string{"ok"},
			errors: map[int][]string{503: {errDown}}},
		{method: "GET", path: "/metrics", build: (*Server).metricsHandler,
			tag: "operations", summary: "Prometheus metrics (text exposition format)",
			status: 200, raw: &rawAnswer{"text/plain", map[string]any{"type": "string"}}},
		{method: "GET", path: "/api/openapi.json", handler: (*Server).serveOpenAPI,
			tag: "operations", summary: "This document",
			status: 200, raw: &rawAnswer{"application/json", map[string]any{"type": "object"}}},

		// Campaigns and templates.
		{method: "POST", path: "/api/v1/campaigns", roles: admin, handler: (*Server).createCampaign,
			tag: "campaigns", summary: "Create a campaign", request: typeOf[createCampaignRequest](), status: 201, results: []string{"ok"}, answer: typeOf[struct {
				Campaign models.Campaign `json:"campaign"`
			}]()},
		{method: "GET", path: "/api/v1/campaigns", roles: admin, handler: (*Server).listCampaigns,
			tag: "campaigns", summary: "List the campaigns",
			status: 200, results: []string{"ok"}, answer: typeOf[struct {
				Campaigns []models.Campaign `json:"campaigns"`
			}]()},
		{method: "GET", path: "/api/v1/campaigns/:id", roles: admin, handler: (*Server).getCampaign,
			tag: "campaigns", summary: "Show a campaign",
			status: 200, results: []string{"ok"}, answer: typeOf[struct {
				Campaign models.Campaign `json:"campaign"`
			}](),
			errors: map[int][]string{404: {errFound}}},
		{method: "POST", path: "/api/v1/templates", roles: admin, handler: (*Server).createTemplate,
			tag: "campaigns", summary: "Create a coupon template", request: typeOf[createTemplateRequest](), status: 201, results: []string{"ok"}, answer: typeOf[struct {
				Template models.Template `json:"template"`
			}](),
			errors: map[int][]string{404: {errFound}}},
		{method: "GET", path: "/api/v1/templates", handler: (*Server).listTemplates,
			tag: "campaigns", summary: "List the templates on offer, with the stock left",
			description: "Anyone, also anonymous, sees the templates on offer: active, claims open now, coupons still valid " +
				"(sold out ones included); with all=1 an admin sees every template.",
			query: []param{{name: "all", description: "1: every template, also paused, not yet open or closed ones (admin only)",
				schema: map[string]any{"type": "string", "enum": []string{"1"}}}},
			status: 200, results: []string{"ok"}, answer: typeOf[struct {
				Templates []services.TemplateView `json:"templates"`
			}](),
			errors: map[int][]string{403: {errForb}}},
		{method: "GET", path: "/api/v1/templates/:id", handler: (*Server).getTemplate,
			tag: "campaigns", summary: "Show a template with the stock left",
			description: "Admins see every template; anyone else only one the list shows them, and 404 for another.",
			status:      200, results: []string{"ok"}, answer: typeOf[struct {
				Template  models.Template `json:"template"`
				Remaining *int64          `json:"remaining" doc:"stock left; null when Redis cannot tell"`
			}](),
			errors: map[int][]string{404: {errFound}}},
		{method: "PATCH", path: "/api/v1/templates/:id", roles: admin, handler: (*Server).updateTemplate,
			tag: "campaigns", summary: "Change a template's name, description, claim window or status",
			request: typeOf[updateTemplateRequest](), status: 200, results: []string{"ok"}, answer: typeOf[struct {
				Template models.Template `json:"template"`
			}](),
			errors: map[int][]string{404: {errFound}}},
		{method: "POST", path: "/api/v1/templates/:id/stock", roles: admin, handler: (*Server).addStock,
			tag: "campaigns", summary: "Add stock to a template", request: typeOf[addStockRequest](), status: 200, results: []string{"ok"}, answer: typeOf[struct {
				Template models.Template `json:"template"`
			}](),
			errors: map[int][]string{404: {errFound}}},
		{method: "GET", path: "/api/v1/templates/:id/stats", roles: admin, handler: (*Server).templateStats,
			tag: "campaigns", summary: "A template's figures and its activity per hour",
			query: []param{{name: "hours", description: "how many hours of activity (default 24)",
				schema: map[string]any{"type": "integer", "minimum": 1, "maximum": services.MaxStatsHours}}},
			status: 200, results: []string{"ok"}, answer: typeOf[struct {
				Stats services.TemplateStats `json:"stats"`
			}](),
			errors: map[int][]string{400: {errBody}, 404: {errFound}}},

		// Claims.
		{method: "POST", path: "/api/v1/templates/:id/claim", roles: roles(models.RoleApp, models.RoleShopper),
			guard: func(s *Server) gin.HandlerFunc { return s.claims.admit }, handler: (*Server).claimCoupon,
			tag: "claims", summary: "Claim a coupon",
			description: "An app token names the user in the body; a shopper's session claims for the shopper (body optional). " +
				"The Idempotency-Key header (1-128 printable ASCII) makes a retry answer 200 duplicate with the first coupon.",
			request: typeOf[claimRequest](),
			header: []param{{name: "Idempotency-Key", required: true,
				description: "1-128 printable ASCII; a retry with the same key answers the first result",
				schema:      map[string]any{"type": "string", "minLength": 1, "maxLength": 128}}},
			status: 201, results: []string{"claimed"}, duplicate200: true, answer: typeOf[struct {
				Coupon    models.CouponView `json:"coupon"`
				Remaining int64             `json:"remaining" doc:"stock left after this claim"`
			}](),
			errors: map[int][]string{404: {errFound},
				409: {"sold_out", "user_limit_reached", "budget_exhausted", "not_claimable", "in_progress"},
				422: {"idempotency_mismatch"}, 429: {"rate_limited"}}},

		// Checkout.
		{method: "POST", path: "/api/v1/redemptions", roles: roles(models.RoleCashier, models.RoleApp),
			handler: (*Server).redeemCoupon, tag: "checkout", summary: "Redeem a coupon on an order",
			description: "Uses the coupon on the order and answers the discount and the amount to pay. The same coupon and " +
				"order again answers 200 duplicate with the first answer (its amounts, whatever amount the retry carried). " +
				"With user_id the coupon must belong to that user (403 forbidden otherwise). A coupon whose redemption " +
				"by an order was refunded may be redeemed again, by that order or another.",
			request: typeOf[redeemRequest](), status: 200, results: []string{"redeemed", "duplicate"}, answer: typeOf[struct {
				Coupon           models.CouponView `json:"coupon"`
				OrderAmountCents int64             `json:"order_amount_cents" doc:"the order amount the discount was computed on"`
				DiscountCents    int64             `json:"discount_cents" doc:"fixed: min(face value, amount); percent: floor(amount × percent / 100) capped"`
				PayableCents     int64             `json:"payable_cents" doc:"order amount − discount"`
			}](),
			errors: map[int][]string{404: {errFound}, 409: {"already_used", "revoked", "not_valid_now"},
				422: {"below_minimum"}, 429: {"busy"}}},
		{method: "POST", path: "/api/v1/refunds", roles: roles(models.RoleCashier, models.RoleApp),
			handler: (*Server).refundCoupon, tag: "checkout", summary: "Refund a coupon's use by a cancelled order",
			description: "Restore policy: the coupon is issued again to its holder (with extend_on_refund its validity moves " +
				"forward by the time the order held it; without it, a coupon that expired meanwhile comes back expired). " +
				"Recycle policy: the coupon is revoked and its stock, budget and the holder's limit go back to the pool " +
				"(stock_returned). Again → 200 duplicate.",
			request: typeOf[refundRequest](), status: 200, results: []string{"refunded", "duplicate"}, answer: typeOf[struct {
				Coupon        models.CouponView `json:"coupon"`
				StockReturned bool              `json:"stock_returned" doc:"the coupon went back to the pool (policy recycle)"`
			}](),
			errors: map[int][]string{404: {errFound}, 409: {"not_redeemed"}, 429: {"busy"}}},

		// Coupons.
		{method: "GET", path: "/api/v1/coupons/:code", roles: roles(models.RoleCashier, models.RoleAdmin, models.RoleApp),
			handler: (*Server).getCoupon, tag: "coupons", summary: "Show a coupon and its template",
			status: 200, results: []string{"ok"}, answer: typeOf[services.CouponDetail](),
			errors: map[int][]string{404: {errFound}}},
		{method: "POST", path: "/api/v1/coupons/:code/revoke", roles: admin, handler: (*Server).revokeCoupon,
			tag: "coupons", summary: "Revoke a coupon",
			description: "An issued (or expired) coupon is revoked, with an audit entry of who and why. With return_stock its " +
				"stock, budget and the holder's limit go back to the pool; without it the revoked coupon keeps counting " +
				"against both. A revoked coupon again → 200 duplicate (unless it now asks for the stock back). A used " +
				"coupon → 409 already_used: refund its order first.",
			request: typeOf[revokeRequest](), status: 200, results: []string{"ok", "duplicate"}, answer: typeOf[struct {
				Coupon        models.CouponView `json:"coupon"`
				StockReturned bool              `json:"stock_returned" doc:"the coupon no longer holds stock"`
			}](),
			errors: map[int][]string{404: {errFound}, 409: {"already_used"}, 429: {"busy"}}},
		{method: "GET", path: "/api/v1/users/:user_id/coupons", roles: roles(models.RoleApp, models.RoleAdmin, models.RoleShopper),
			handler: (*Server).listUserCoupons, tag: "coupons", summary: "List a user's coupons",
			description: "Newest first, at most 1000, each with its effective status (an issued coupon past valid_until is " +
				"expired). A shopper sees only their own.",
			status: 200, results: []string{"ok"}, answer: typeOf[struct {
				Coupons []models.CouponView `json:"coupons"`
			}]()},

		// Administration.
		{method: "POST", path: "/api/v1/tokens", roles: admin, handler: (*Server).createToken,
			tag: "admin", summary: "Create an API token (shown once)", request: typeOf[createTokenRequest](), status: 201, results: []string{"ok"}, answer: typeOf[struct {
				Token     string          `json:"token" doc:"the token: shown this once, stored hashed"`
				TokenInfo models.APIToken `json:"token_info"`
			}]()},
		{method: "GET", path: "/api/v1/tokens", roles: admin, handler: (*Server).listTokens,
			tag: "admin", summary: "List the API tokens (never their secrets), newest first",
			status: 200, results: []string{"ok"}, answer: typeOf[struct {
				Tokens []services.TokenView `json:"tokens"`
			}]()},
		{method: "POST", path: "/api/v1/tokens/:id/revoke", roles: admin, handler: (*Server).revokeToken,
			tag: "admin", summary: "Revoke an API token",
			description: "The token stops working at once on this instance and within 5 seconds on the others, with an " +
				"audit entry. A revoked token again → 200 duplicate.",
			status: 200, results: []string{"ok", "duplicate"}, answer: typeOf[struct {
				Token services.TokenView `json:"token"`
			}](),
			errors: map[int][]string{404: {errFound}}},
		{method: "POST", path: "/api/v1/users", roles: admin, handler: (*Server).createUser,
			tag: "admin", summary: "Create a user of the pages", request: typeOf[createUserRequest](), status: 201, results: []string{"ok"}, answer: typeOf[struct {
				User models.User `json:"user"`
			}](),
			errors: map[int][]string{409: {errBody}}},
		{method: "POST", path: "/api/v1/reconcile", roles: admin, handler: (*Server).reconcileCounters,
			tag: "admin", summary: "Compare Redis with the database, and repair", request: typeOf[reconcileRequest](), status: 200, results: []string{"ok"}, answer: typeOf[services.ReconcileReport](),
			errors: map[int][]string{404: {errFound}}},
	}
}

// pageRoute is one server-rendered page or form post of one. Its forms are
// posted as application/x-www-form-urlencoded with a CSRF token; it answers
// HTML (or a redirect after a successful post).
type pageRoute struct {
	method, path string
	// roles may see it (pages.requireRole); nil means anyone, also a visitor.
	roles   []string
	handler func(*pages, *gin.Context)
	summary string
	// asset is served without the session and its CSRF check, with status
	// and raw as its answer.
	asset  bool
	status int
	raw    *rawAnswer
}

// pageRoutes is the table of the pages, in the style of apiRoutes.
func pageRoutes() []pageRoute {
	shopper, cashier, admin := roles(models.RoleShopper), roles(models.RoleCashier), roles(models.RoleAdmin)
	return []pageRoute{
		{method: "GET", path: "/static/*file", handler: (*pages).serveStatic, asset: true,
			summary: "The pages' static assets (fingerprinted names)", status: 200,
			raw: &rawAnswer{"application/octet-stream", map[string]any{"type": "string", "format": "binary"}}},
		{method: "GET", path: "/favicon.ico", asset: true, status: 301, summary: "Redirects to the icon",
			handler: func(p *pages, c *gin.Context) { c.Redirect(http.StatusMovedPermanently, p.assets["favicon.svg"]) }},

		{method: "GET", path: "/", handler: (*pages).showShop, summary: "The shop: coupons on offer with the stock left"},
		{method: "GET", path: "/login", handler: (*pages).showLogin, summary: "The login form"},
		{method: "POST", path: "/login", handler: (*pages).login, summary: "Log in"},
		{method: "GET", path: "/logout", handler: (*pages).showLogout, summary: "The logout confirmation"},
		{method: "POST", path: "/logout", handler: (*pages).logout, summary: "Log out"},
		{method: "GET", path: "/wallet", roles: shopper, handler: (*pages).showWallet,
			summary: "The shopper's coupons with their QR codes"},

		{method: "GET", path: "/pos", roles: cashier, handler: (*pages).showPOS, summary: "The cashier's checkout"},
		{method: "POST", path: "/pos/preview", roles: cashier, handler: (*pages).previewRedemption,
			summary: "Preview a redemption's discount"},
		{method: "POST", path: "/pos/redeem", roles: cashier, handler: (*pages).redeemCoupon, summary: "Redeem a coupon"},
		{method: "POST", path: "/pos/refund", roles: cashier, handler: (*pages).refundCoupon, summary: "Refund a coupon"},

		{method: "GET", path: "/admin", roles: admin, handler: (*pages).showAdmin, summary: "The admin console with live figures"},
		{method: "GET", path: "/admin/campaigns/new", roles: admin, handler: (*pages).showNewCampaign,
			summary: "The new campaign form"},
		{method: "POST", path: "/admin/campaigns", roles: admin, handler: (*pages).createCampaign, summary: "Create a campaign"},
		{method: "GET", path: "/admin/templates/new", roles: admin, handler: (*pages).showNewTemplate,
			summary: "The new template form"},
		{method: "POST", path: "/admin/templates", roles: admin, handler: (*pages).createTemplate, summary: "Create a template"},
		{method: "GET", path: "/admin/templates/:id", roles: admin, handler: (*pages).showTemplate,
			summary: "A template: figures, charts, edit form"},
		{method: "POST", path: "/admin/templates/:id", roles: admin, handler: (*pages).updateTemplate, summary: "Edit a template"},
		{method: "POST", path: "/admin/templates/:id/status", roles: admin, handler: (*pages).setTemplateStatus,
			summary: "Pause or resume a template"},
		{method: "POST", path: "/admin/templates/:id/stock", roles: admin, handler: (*pages).addStock, summary: "Add stock"},
		{method: "GET", path: "/admin/coupons", roles: admin, handler: (*pages).showCoupons, summary: "Look a coupon up"},
		{method: "POST", path: "/admin/coupons/revoke", roles: admin, handler: (*pages).revokeCoupon, summary: "Revoke a coupon"},
		{method: "GET", path: "/admin/reconcile", roles: admin, handler: (*pages).showReconcile,
			summary: "The reconciliation report"},
		{method: "POST", path: "/admin/reconcile", roles: admin, handler: (*pages).reconcile,
			summary: "Run a reconciliation (and repair)"},
		{method: "GET", path: "/admin/tokens", roles: admin, handler: (*pages).showTokens,
			summary: "The API tokens, with a revoke button each"},
		{method: "POST", path: "/admin/tokens/:id/revoke", roles: admin, handler: (*pages).revokeToken,
			summary: "Revoke an API token"},
		{method: "GET", path: "/admin/audit", roles: admin, handler: (*pages).showAudit, summary: "The audit log"},
	}
}

// registerRoutes wires the rows of both tables into r, each behind the
// middleware its kind needs, and answers unknown paths and methods. The
// OpenAPI document is made of the same rows.
func (s *Server) registerRoutes(r *gin.Engine, p *pages, api []route, pageRows []pageRoute) {
	s.openAPI = sync.OnceValue(func() []byte { return openAPIJSON(api, pageRows) })
	for _, rt := range api {
		var chain []gin.HandlerFunc
		if strings.HasPrefix(rt.path, apiPrefix) {
			chain = append(chain, s.authenticate)
		}
		if rt.guard != nil {
			chain = append(chain, rt.guard(s))
		}
		if rt.roles != nil {
			chain = append(chain, requireRole(rt.roles...))
		}
		r.Handle(rt.method, rt.path, append(chain, s.handlerOf(rt))...)
	}
	for _, pr := range pageRows {
		chain := []gin.HandlerFunc{p.securityHeaders}
		if !pr.asset {
			chain = append(chain, p.checkCSRF, p.loadSession)
		}
		if pr.roles != nil {
			chain = append(chain, p.requireRole(pr.roles...))
		}
		handler := pr.handler
		r.Handle(pr.method, pr.path, append(chain, func(c *gin.Context) { handler(p, c) })...)
	}

	// Unknown paths: JSON under /api, a page elsewhere.
	r.NoRoute(func(c *gin.Context) {
		if strings.HasPrefix(c.Request.URL.Path, "/api/") {
			respondError(c, models.Errorf(models.CodeNotFound, "no such endpoint"))
			return
		}
		p.securityHeaders(c)
		p.renderError(c, http.StatusNotFound, "Page not found", "There is no page at this address.")
	})
	r.NoMethod(func(c *gin.Context) {
		respondError(c, withStatus(http.StatusMethodNotAllowed,
			models.Errorf(models.CodeInvalidRequest, "method not allowed on this endpoint")))
	})
}

// handlerOf returns the gin handler of a row.
func (s *Server) handlerOf(rt route) gin.HandlerFunc {
	if rt.build != nil {
		return rt.build(s)
	}
	handler := rt.handler
	return func(c *gin.Context) { handler(s, c) }
}
