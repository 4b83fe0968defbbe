package handlers

import (
	"encoding/json"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"couponsvc/models"
	"couponsvc/services"

	"github.com/gin-gonic/gin"
)

// serveOpenAPI serves the OpenAPI 3 document of every route of the router:
// the JSON API of SPEC §5, the operational endpoints and the pages of SPEC §6.
// TestOpenAPIMatchesRouter fails when a route and the document disagree.
func serveOpenAPI(c *gin.Context) {
	c.Header("Cache-Control", "public, max-age=300")
	c.Data(http.StatusOK, "application/json; charset=utf-8", openAPIJSON())
}

var openAPIDoc = sync.OnceValue(func() []byte {
	b, err := json.MarshalIndent(openAPIDocument(), "", "  ")
	if err != nil {
		panic("couponsvc: the OpenAPI document does not marshal: " + err.Error()) // a bug caught by any test
	}
	return b
})

func openAPIJSON() []byte { return openAPIDoc() }

// apiOp describes one operation; openAPIDocument turns the list into paths.
type apiOp struct {
	method, path string // gin's syntax: /templates/:id
	tag          string
	summary      string
	description  string
	// roles may call it; empty means anyone, also anonymous.
	roles []string
	// body is the JSON request body's schema (nil: no body).
	body map[string]any
	// query lists the query parameters.
	query []apiParam
	// status and results of the success answer, and its payload properties.
	status  int
	results []string
	payload map[string]any
	// errors are the HTTP statuses of the errors the operation answers, each
	// with the result words it may carry.
	errors map[int][]string
	// duplicate200 adds a 200 "duplicate" answer beside a 201.
	duplicate200 bool
	// page is a server-rendered page (text/html) or a form post of one.
	page bool
	// raw is the schema of a success answer that is not the JSON result body.
	raw map[string]any
	// rawType is the media type of raw.
	rawType string
}

type apiParam struct {
	name, description string
	schema            map[string]any
}

// The schemas of the answers, from the Go types the handlers render, so that
// a field added to a model shows in the document.
var openAPISchemas = map[string]reflect.Type{
	"Campaign":      reflect.TypeFor[models.Campaign](),
	"Template":      reflect.TypeFor[models.Template](),
	"TemplateView":  reflect.TypeFor[services.TemplateView](),
	"Coupon":        reflect.TypeFor[models.CouponView](),
	"APIToken":      reflect.TypeFor[models.APIToken](),
	"User":          reflect.TypeFor[models.User](),
	"TemplateDrift": reflect.TypeFor[services.TemplateDrift](),
	"TemplateStats": reflect.TypeFor[services.TemplateStats](),
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

func arrayOf(s map[string]any) map[string]any { return map[string]any{"type": "array", "items": s} }

func str(description string) map[string]any {
	return map[string]any{"type": "string", "description": description}
}

func integer(description string) map[string]any {
	return map[string]any{"type": "integer", "format": "int64", "description": description}
}

func boolean(description string) map[string]any {
	return map[string]any{"type": "boolean", "description": description}
}

func dateTime(description string) map[string]any {
	return map[string]any{"type": "string", "format": "date-time", "description": description}
}

func nullable(s map[string]any) map[string]any {
	out := map[string]any{"nullable": true}
	for k, v := range s {
		out[k] = v
	}
	return out
}

// object returns an object schema; required names the properties that must be
// present.
func object(props map[string]any, required ...string) map[string]any {
	o := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

// Common error answers of the JSON API.
const (
	errBody  = "invalid_request"
	errAuth  = "unauthorized"
	errForb  = "forbidden"
	errFound = "not_found"
	errDown  = "unavailable"
)

// withAuth adds the 401/403 of a role-protected operation and the 503 every
// operation may answer.
func withAuth(errs map[int][]string) map[int][]string {
	out := map[int][]string{401: {errAuth}, 403: {errForb}, 503: {errDown}}
	for k, v := range errs {
		out[k] = append(out[k], v...)
	}
	return out
}

// withBody adds the answers of a JSON body that cannot be read.
func withBody(errs map[int][]string) map[int][]string {
	out := withAuth(errs)
	out[400] = append(out[400], errBody)
	out[415] = []string{errBody}
	return out
}

var (
	couponCodeParam = "a coupon code: 13 characters of 23456789ABCDEFGHJKLMNPQRSTUVWXYZ with a check character; " +
		"lower case, spaces and dashes are accepted"
	orderIDSchema = map[string]any{"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[!-~]+$",
		"description": "the shop's order id: 1-64 printable ASCII characters without spaces"}
	userIDSchema = map[string]any{"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[A-Za-z0-9._:@-]+$",
		"description": "the shop's user id"}
)

// apiOps lists every route of the router.
func apiOps() []apiOp {
	admin := []string{models.RoleAdmin}
	templateBody := object(map[string]any{
		"campaign_id":        integer("the campaign the template belongs to"),
		"name":               str("1-100 characters"),
		"description":        str("at most 2000 characters"),
		"kind":               map[string]any{"type": "string", "enum": []string{models.KindFixed, models.KindPercent}},
		"face_value_cents":   integer("fixed: the discount, > 0"),
		"percent_off":        integer("percent: 1..99"),
		"max_discount_cents": integer("percent: the cap of the discount, > 0"),
		"min_order_cents":    integer("the smallest order the coupon applies to, >= 0"),
		"total_stock":        integer("1..10,000,000"),
		"per_user_limit":     integer("1..100"),
		"claim_starts_at":    dateTime("RFC 3339; now when left out"),
		"claim_ends_at":      dateTime("RFC 3339; optional"),
		"valid_from":         dateTime("absolute validity, with valid_until"),
		"valid_until":        dateTime("absolute validity, with valid_from"),
		"valid_days":         integer("validity counted from the claim, 1..3650 (instead of valid_from/valid_until)"),
		"refund_policy":      map[string]any{"type": "string", "enum": []string{models.RefundRestore, models.RefundRecycle}},
		"extend_on_refund":   boolean("a refunded coupon's validity is extended by the time its order held it"),
		"status":             map[string]any{"type": "string", "enum": []string{models.TemplateActive, models.TemplatePaused}},
	}, "campaign_id", "name", "kind", "total_stock", "per_user_limit")
	ops := []apiOp{
		// Operations.
		{method: "GET", path: "/healthz", tag: "operations", summary: "The process is up",
			status: 200, results: []string{"ok"}},
		{method: "GET", path: "/readyz", tag: "operations", summary: "The database and Redis answer",
			status: 200, results: []string{"ok"}, errors: map[int][]string{503: {errDown}}},
		{method: "GET", path: "/metrics", tag: "operations", summary: "Prometheus metrics (text exposition format)",
			status: 200, raw: map[string]any{"type": "string"}, rawType: "text/plain"},
		{method: "GET", path: "/api/openapi.json", tag: "operations", summary: "This document",
			status: 200, raw: map[string]any{"type": "object"}, rawType: "application/json"},

		// Campaigns and templates.
		{method: "POST", path: "/api/v1/campaigns", tag: "campaigns", summary: "Create a campaign", roles: admin,
			body: object(map[string]any{"name": str("1-100 characters"),
				"budget_cents": integer("0 (no budget) up to 10^12")}, "name"),
			status: 201, results: []string{"ok"}, payload: map[string]any{"campaign": ref("Campaign")},
			errors: withBody(nil)},
		{method: "GET", path: "/api/v1/campaigns", tag: "campaigns", summary: "List the campaigns", roles: admin,
			status: 200, results: []string{"ok"}, payload: map[string]any{"campaigns": arrayOf(ref("Campaign"))},
			errors: withAuth(nil)},
		{method: "GET", path: "/api/v1/campaigns/:id", tag: "campaigns", summary: "Show a campaign", roles: admin,
			status: 200, results: []string{"ok"}, payload: map[string]any{"campaign": ref("Campaign")},
			errors: withAuth(map[int][]string{400: {errBody}, 404: {errFound}})},
		{method: "POST", path: "/api/v1/templates", tag: "campaigns", summary: "Create a coupon template", roles: admin,
			body: templateBody, status: 201, results: []string{"ok"}, payload: map[string]any{"template": ref("Template")},
			errors: withBody(map[int][]string{404: {errFound}})},
		{method: "GET", path: "/api/v1/templates", tag: "campaigns", summary: "List the templates on offer, with the stock left",
			description: "Anyone, also anonymous, sees the templates on offer: active, claims open now, coupons still valid " +
				"(sold out ones included); with all=1 an admin sees every template.",
			query: []apiParam{{name: "all", description: "1: every template, also paused, not yet open or closed ones (admin only)",
				schema: map[string]any{"type": "string", "enum": []string{"1"}}}},
			status: 200, results: []string{"ok"}, payload: map[string]any{"templates": arrayOf(ref("TemplateView"))},
			errors: map[int][]string{401: {errAuth}, 403: {errForb}, 503: {errDown}}},
		{method: "GET", path: "/api/v1/templates/:id", tag: "campaigns", summary: "Show a template with the stock left",
			description: "Admins see every template; anyone else only one the list shows them, and 404 for another.",
			status:      200, results: []string{"ok"},
			payload: map[string]any{"template": ref("Template"), "remaining": nullable(integer("stock left; null when Redis cannot tell"))},
			errors:  map[int][]string{400: {errBody}, 401: {errAuth}, 404: {errFound}, 503: {errDown}}},
		{method: "PATCH", path: "/api/v1/templates/:id", tag: "campaigns", summary: "Change a template's name, description, claim window or status",
			roles: admin,
			body: object(map[string]any{"name": str("1-100 characters"), "description": str("at most 2000 characters"),
				"claim_starts_at": dateTime("RFC 3339"), "claim_ends_at": nullable(dateTime("RFC 3339, or null to remove the end")),
				"status": map[string]any{"type": "string", "enum": []string{models.TemplateActive, models.TemplatePaused}}}),
			status: 200, results: []string{"ok"}, payload: map[string]any{"template": ref("Template")},
			errors: withBody(map[int][]string{404: {errFound}})},
		{method: "POST", path: "/api/v1/templates/:id/stock", tag: "campaigns", summary: "Add stock to a template", roles: admin,
			body:   object(map[string]any{"delta": integer("stock to add, > 0"), "reason": str("why, for the audit log")}, "delta", "reason"),
			status: 200, results: []string{"ok"}, payload: map[string]any{"template": ref("Template")},
			errors: withBody(map[int][]string{404: {errFound}})},
		{method: "GET", path: "/api/v1/templates/:id/stats", tag: "campaigns", summary: "A template's figures and its activity per hour",
			roles: admin,
			query: []apiParam{{name: "hours", description: "how many hours of activity (default 24)",
				schema: map[string]any{"type": "integer", "minimum": 1, "maximum": services.MaxStatsHours}}},
			status: 200, results: []string{"ok"}, payload: map[string]any{"stats": ref("TemplateStats")},
			errors: withAuth(map[int][]string{400: {errBody}, 404: {errFound}})},

		// Claims.
		{method: "POST", path: "/api/v1/templates/:id/claim", tag: "claims", summary: "Claim a coupon",
			description: "An app token names the user in the body; a shopper's session claims for the shopper (body optional). " +
				"The Idempotency-Key header (1-128 printable ASCII) makes a retry answer 200 duplicate with the first coupon.",
			roles:  []string{models.RoleApp, models.RoleShopper},
			body:   object(map[string]any{"user_id": userIDSchema}),
			status: 201, results: []string{"claimed"}, duplicate200: true,
			payload: map[string]any{"coupon": ref("Coupon"), "remaining": integer("stock left after this claim")},
			errors: withBody(map[int][]string{404: {errFound},
				409: {"sold_out", "user_limit_reached", "budget_exhausted", "not_claimable", "in_progress"},
				422: {"idempotency_mismatch"}, 429: {"rate_limited"}, 503: {errDown}})},

		// Checkout.
		{method: "POST", path: "/api/v1/redemptions", tag: "checkout", summary: "Redeem a coupon on an order",
			description: "Uses the coupon on the order and answers the discount and the amount to pay. The same coupon and " +
				"order again answers 200 duplicate with the first answer (its amounts, whatever amount the retry carried). " +
				"With user_id the coupon must belong to that user (403 forbidden otherwise). A coupon whose redemption " +
				"by an order was refunded may be redeemed again, by that order or another.",
			roles: []string{models.RoleCashier, models.RoleApp},
			body: object(map[string]any{
				"coupon_code":        map[string]any{"type": "string", "description": couponCodeParam},
				"order_id":           orderIDSchema,
				"order_amount_cents": map[string]any{"type": "integer", "format": "int64", "minimum": 1, "maximum": models.MaxMoneyCents},
				"user_id":            userIDSchema,
			}, "coupon_code", "order_id", "order_amount_cents"),
			status: 200, results: []string{"redeemed", "duplicate"},
			payload: map[string]any{"coupon": ref("Coupon"),
				"order_amount_cents": integer("the order amount the discount was computed on"),
				"discount_cents":     integer("fixed: min(face value, amount); percent: floor(amount × percent / 100) capped"),
				"payable_cents":      integer("order amount − discount")},
			errors: withBody(map[int][]string{404: {errFound},
				409: {"already_used", "revoked", "not_valid_now"}, 422: {"below_minimum"}, 429: {"busy"}})},
		{method: "POST", path: "/api/v1/refunds", tag: "checkout", summary: "Refund a coupon's use by a cancelled order",
			description: "Restore policy: the coupon is issued again to its holder (with extend_on_refund its validity moves " +
				"forward by the time the order held it; without it, a coupon that expired meanwhile comes back expired). " +
				"Recycle policy: the coupon is revoked and its stock, budget and the holder's limit go back to the pool " +
				"(stock_returned). Again → 200 duplicate.",
			roles: []string{models.RoleCashier, models.RoleApp},
			body: object(map[string]any{
				"coupon_code": map[string]any{"type": "string", "description": couponCodeParam},
				"order_id":    orderIDSchema,
			}, "coupon_code", "order_id"),
			status: 200, results: []string{"refunded", "duplicate"},
			payload: map[string]any{"coupon": ref("Coupon"), "stock_returned": boolean("the coupon went back to the pool (policy recycle)")},
			errors:  withBody(map[int][]string{404: {errFound}, 409: {"not_redeemed"}, 429: {"busy"}})},

		// Coupons.
		{method: "GET", path: "/api/v1/coupons/:code", tag: "coupons", summary: "Show a coupon and its template",
			roles:  []string{models.RoleCashier, models.RoleAdmin, models.RoleApp},
			status: 200, results: []string{"ok"}, payload: map[string]any{"coupon": ref("Coupon"), "template": ref("Template")},
			errors: withAuth(map[int][]string{400: {errBody}, 404: {errFound}})},
		{method: "POST", path: "/api/v1/coupons/:code/revoke", tag: "coupons", summary: "Revoke a coupon",
			description: "An issued (or expired) coupon is revoked, with an audit entry of who and why. With return_stock its " +
				"stock, budget and the holder's limit go back to the pool; without it the revoked coupon keeps counting " +
				"against both. A revoked coupon again → 200 duplicate (unless it now asks for the stock back). A used " +
				"coupon → 409 already_used: refund its order first.",
			roles: admin,
			body: object(map[string]any{"return_stock": boolean("give the stock back (default false)"),
				"reason": str("why, for the audit log: 1-500 characters")}, "reason"),
			status: 200, results: []string{"ok", "duplicate"},
			payload: map[string]any{"coupon": ref("Coupon"), "stock_returned": boolean("the coupon no longer holds stock")},
			errors:  withBody(map[int][]string{404: {errFound}, 409: {"already_used"}, 429: {"busy"}})},
		{method: "GET", path: "/api/v1/users/:user_id/coupons", tag: "coupons", summary: "List a user's coupons",
			description: "Newest first, at most 1000, each with its effective status (an issued coupon past valid_until is " +
				"expired). A shopper sees only their own.",
			roles:  []string{models.RoleApp, models.RoleAdmin, models.RoleShopper},
			status: 200, results: []string{"ok"}, payload: map[string]any{"coupons": arrayOf(ref("Coupon"))},
			errors: withAuth(map[int][]string{400: {errBody}})},

		// Administration.
		{method: "POST", path: "/api/v1/tokens", tag: "admin", summary: "Create an API token (shown once)", roles: admin,
			body: object(map[string]any{"role": map[string]any{"type": "string", "enum": []string{models.RoleAdmin, models.RoleCashier, models.RoleApp}},
				"name": str("1-100 characters")}, "role", "name"),
			status: 201, results: []string{"ok"},
			payload: map[string]any{"token": str("the token: shown this once, stored hashed"), "token_info": ref("APIToken")},
			errors:  withBody(nil)},
		{method: "POST", path: "/api/v1/users", tag: "admin", summary: "Create a user of the pages", roles: admin,
			body: object(map[string]any{"username": userIDSchema, "password": str("the password"),
				"role": map[string]any{"type": "string", "enum": []string{models.RoleShopper, models.RoleCashier, models.RoleAdmin}}},
				"username", "password", "role"),
			status: 201, results: []string{"ok"}, payload: map[string]any{"user": ref("User")},
			errors: withBody(map[int][]string{409: {errBody}})},
		{method: "POST", path: "/api/v1/reconcile", tag: "admin", summary: "Compare Redis with the database, and repair",
			roles: admin,
			body: object(map[string]any{"template_id": integer("one template (all when left out)"),
				"repair": boolean("rebuild the counters that drifted")}, "repair"),
			status: 200, results: []string{"ok"}, payload: map[string]any{"templates": arrayOf(ref("TemplateDrift"))},
			errors: withBody(map[int][]string{404: {errFound}})},
	}
	return append(ops, pageOps()...)
}

// pageOps lists the server-rendered pages (SPEC §6). Their forms are posted as
// application/x-www-form-urlencoded with a CSRF token; they answer HTML (or a
// redirect after a successful post) and are not meant for programs.
func pageOps() []apiOp {
	page := func(method, path, summary string, roles ...string) apiOp {
		return apiOp{method: method, path: path, tag: "pages", summary: summary, roles: roles, page: true}
	}
	shopper, cashier, admin := models.RoleShopper, models.RoleCashier, models.RoleAdmin
	return []apiOp{
		page("GET", "/", "The shop: coupons on offer with the stock left"),
		page("GET", "/login", "The login form"),
		page("POST", "/login", "Log in"),
		page("GET", "/logout", "The logout confirmation"),
		page("POST", "/logout", "Log out"),
		page("GET", "/wallet", "The shopper's coupons with their QR codes", shopper),
		page("GET", "/pos", "The cashier's checkout", cashier),
		page("POST", "/pos/preview", "Preview a redemption's discount", cashier),
		page("POST", "/pos/redeem", "Redeem a coupon", cashier),
		page("POST", "/pos/refund", "Refund a coupon", cashier),
		page("GET", "/admin", "The admin console with live figures", admin),
		page("GET", "/admin/campaigns/new", "The new campaign form", admin),
		page("POST", "/admin/campaigns", "Create a campaign", admin),
		page("GET", "/admin/templates/new", "The new template form", admin),
		page("POST", "/admin/templates", "Create a template", admin),
		page("GET", "/admin/templates/:id", "A template: figures, charts, edit form", admin),
		page("POST", "/admin/templates/:id", "Edit a template", admin),
		page("POST", "/admin/templates/:id/status", "Pause or resume a template", admin),
		page("POST", "/admin/templates/:id/stock", "Add stock", admin),
		page("GET", "/admin/coupons", "Look a coupon up", admin),
		page("POST", "/admin/coupons/revoke", "Revoke a coupon", admin),
		page("GET", "/admin/reconcile", "The reconciliation report", admin),
		page("POST", "/admin/reconcile", "Run a reconciliation (and repair)", admin),
		page("GET", "/admin/audit", "The audit log", admin),
		{method: "GET", path: "/static/*file", tag: "pages", summary: "The pages' static assets (fingerprinted names)",
			status: 200, raw: map[string]any{"type": "string", "format": "binary"}, rawType: "application/octet-stream"},
		{method: "GET", path: "/favicon.ico", tag: "pages", summary: "Redirects to the icon", status: 301},
	}
}

// openAPIPath turns gin's /templates/:id and /static/*file into OpenAPI's
// /templates/{id} and /static/{file}.
func openAPIPath(ginPath string) string {
	parts := strings.Split(ginPath, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, ":") || strings.HasPrefix(p, "*") {
			parts[i] = "{" + p[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}

// openAPIDocument builds the document from apiOps.
func openAPIDocument() map[string]any {
	paths := map[string]map[string]any{}
	for _, op := range apiOps() {
		p := openAPIPath(op.path)
		if paths[p] == nil {
			paths[p] = map[string]any{}
		}
		paths[p][strings.ToLower(op.method)] = op.operation()
	}
	schemas := map[string]any{
		"Error": object(map[string]any{
			"code":   map[string]any{"type": "integer", "description": "the result code of SPEC §5 (99: internal error)"},
			"result": str("the result word: invalid_request, sold_out, busy…"),
			"error":  str("a message for people"),
			"field":  str("the request field at fault (invalid_request and a few others)"),
		}, "code", "result", "error"),
	}
	for name, t := range openAPISchemas {
		schemas[name] = schemaOf(t)
	}
	errResponse := func(description string, retryAfter bool) map[string]any {
		r := map[string]any{"description": description,
			"content": map[string]any{"application/json": map[string]any{"schema": ref("Error")}}}
		if retryAfter {
			r["headers"] = map[string]any{"Retry-After": map[string]any{"description": "seconds to wait before trying again",
				"schema": map[string]any{"type": "integer"}}}
		}
		return r
	}
	return map[string]any{
		"openapi": "3.0.3",
		"info": map[string]any{
			"title":   "couponsvc",
			"version": "1",
			"description": "Coupons: claim, redeem at checkout, refund, revoke. Every JSON answer is " +
				"{\"code\": N, \"result\": \"word\", \"error\": \"message\", ...payload}: code 0 done, 1 duplicate " +
				"(a replay answered with the first answer), other codes as in the error responses. " +
				"Money is integer cents; times are RFC 3339 UTC.",
		},
		"servers": []any{map[string]any{"url": "/"}},
		"tags": []any{
			map[string]any{"name": "claims", "description": "Shoppers claim coupons"},
			map[string]any{"name": "checkout", "description": "Cashiers redeem and refund coupons"},
			map[string]any{"name": "coupons", "description": "Look coupons up, revoke them"},
			map[string]any{"name": "campaigns", "description": "Campaigns and coupon templates"},
			map[string]any{"name": "admin", "description": "Tokens, users, reconciliation"},
			map[string]any{"name": "operations", "description": "Health, readiness, metrics, this document"},
			map[string]any{"name": "pages", "description": "Server-rendered HTML pages (forms with a CSRF token)"},
		},
		"paths": paths,
		"components": map[string]any{
			"schemas": schemas,
			"securitySchemes": map[string]any{
				"bearer":  map[string]any{"type": "http", "scheme": "bearer", "description": "an API token (role admin, cashier or app)"},
				"session": map[string]any{"type": "apiKey", "in": "cookie", "name": sessionCookie, "description": "the session of a logged-in user"},
			},
			"responses": map[string]any{
				"400": errResponse("invalid_request: a field is missing, malformed or out of range (the field is named)", false),
				"401": errResponse("unauthorized: no or bad credentials", false),
				"403": errResponse("forbidden: wrong role, or not your coupon", false),
				"404": errResponse("not_found", false),
				"409": errResponse("a business refusal (see the operation)", false),
				"415": errResponse("invalid_request: the body must be application/json", false),
				"422": errResponse("below_minimum or idempotency_mismatch", false),
				"429": errResponse("busy or rate_limited: try again after Retry-After", true),
				"503": errResponse("unavailable: the database or Redis cannot be reached", true),
			},
		},
	}
}

// operation renders one operation of the document.
func (op apiOp) operation() map[string]any {
	o := map[string]any{
		"tags":        []string{op.tag},
		"summary":     op.summary,
		"operationId": operationID(op.method, op.path),
	}
	description := op.description
	if len(op.roles) > 0 {
		role := "Role: " + strings.Join(op.roles, ", ") + "."
		description = strings.TrimSpace(role + " " + description)
		if op.page {
			o["security"] = []any{map[string]any{"session": []string{}}}
		} else {
			o["security"] = []any{map[string]any{"bearer": []string{}}, map[string]any{"session": []string{}}}
		}
	} else if strings.HasPrefix(op.path, "/api/v1/") {
		o["security"] = []any{map[string]any{}, map[string]any{"bearer": []string{}}, map[string]any{"session": []string{}}}
	}
	if description != "" {
		o["description"] = description
	}
	var params []any
	for _, seg := range strings.Split(op.path, "/") {
		if !strings.HasPrefix(seg, ":") && !strings.HasPrefix(seg, "*") {
			continue
		}
		name := seg[1:]
		schema := map[string]any{"type": "string"}
		switch name {
		case "id":
			schema = map[string]any{"type": "integer", "format": "int64", "minimum": 1}
		case "code":
			schema = map[string]any{"type": "string", "description": couponCodeParam}
		case "user_id":
			schema = userIDSchema
		}
		params = append(params, map[string]any{"name": name, "in": "path", "required": true, "schema": schema})
	}
	for _, q := range op.query {
		params = append(params, map[string]any{"name": q.name, "in": "query", "required": false,
			"description": q.description, "schema": q.schema})
	}
	if op.method == "POST" && op.path == "/api/v1/templates/:id/claim" {
		params = append(params, map[string]any{"name": "Idempotency-Key", "in": "header", "required": true,
			"description": "1-128 printable ASCII; a retry with the same key answers the first result",
			"schema":      map[string]any{"type": "string", "minLength": 1, "maxLength": 128}})
	}
	if len(params) > 0 {
		o["parameters"] = params
	}
	if op.body != nil {
		o["requestBody"] = map[string]any{"required": true,
			"content": map[string]any{"application/json": map[string]any{"schema": op.body}}}
	}
	responses := map[string]any{}
	switch {
	case op.page:
		responses["200"] = map[string]any{"description": "the page (a form with its errors next to the fields)",
			"content": map[string]any{"text/html": map[string]any{"schema": map[string]any{"type": "string"}}}}
		if op.method == "POST" {
			responses["303"] = map[string]any{"description": "done: redirect to the next page"}
			responses["403"] = map[string]any{"description": "the CSRF token is missing or wrong, or the role is wrong",
				"content": map[string]any{"text/html": map[string]any{"schema": map[string]any{"type": "string"}}}}
		}
		if len(op.roles) > 0 {
			responses["303"] = map[string]any{"description": "redirect (to the login page when not logged in, or the next page)"}
		}
	case op.raw != nil:
		responses[itoa(op.status)] = map[string]any{"description": op.summary,
			"content": map[string]any{op.rawType: map[string]any{"schema": op.raw}}}
	case op.results == nil:
		responses[itoa(op.status)] = map[string]any{"description": op.summary}
	default:
		props := map[string]any{
			"code":   map[string]any{"type": "integer", "enum": []int{0, 1}, "description": "0 done, 1 duplicate"},
			"result": str("one of: " + strings.Join(op.results, ", ")),
			"error":  str("empty"),
		}
		required := []string{"code", "result", "error"}
		for k, v := range op.payload {
			props[k] = v
			required = append(required, k)
		}
		sort.Strings(required)
		schema := object(props, required...)
		responses[itoa(op.status)] = map[string]any{"description": strings.Join(op.results, " or "),
			"content": map[string]any{"application/json": map[string]any{"schema": schema}}}
		if op.duplicate200 {
			responses["200"] = map[string]any{"description": "duplicate: a replay, answered with the first result",
				"content": map[string]any{"application/json": map[string]any{"schema": schema}}}
		}
	}
	statuses := make([]int, 0, len(op.errors))
	for s := range op.errors {
		statuses = append(statuses, s)
	}
	sort.Ints(statuses)
	for _, s := range statuses {
		r := map[string]any{"$ref": "#/components/responses/" + itoa(s)}
		responses[itoa(s)] = r
	}
	o["responses"] = responses
	if len(op.errors) > 0 {
		var lines []string
		for _, s := range statuses {
			lines = append(lines, itoa(s)+": "+strings.Join(op.errors[s], ", "))
		}
		o["x-error-results"] = lines
	}
	return o
}

// operationID makes a unique, readable id: "post_api_v1_templates_id_claim".
func operationID(method, path string) string {
	r := strings.NewReplacer("/", "_", ":", "", "*", "", ".", "_", "-", "_")
	id := strings.Trim(r.Replace(path), "_")
	if id == "" {
		id = "root"
	}
	return strings.ToLower(method) + "_" + id
}

func itoa(n int) string { return strconv.Itoa(n) }

var timeType = reflect.TypeFor[time.Time]()

// schemaOf derives a JSON schema from a Go type the way encoding/json renders
// it: json tags, omitempty (not required), "-" (left out), embedded structs
// (their fields inlined, shadowed by the outer ones), pointers (nullable).
func schemaOf(t reflect.Type) map[string]any {
	switch {
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case t.Kind() == reflect.Pointer:
		return nullable(schemaOf(t.Elem()))
	case t.Kind() == reflect.Slice:
		return arrayOf(schemaOf(t.Elem()))
	case t.Kind() == reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem())}
	case t.Kind() == reflect.Struct:
		props := map[string]any{}
		required := map[string]bool{}
		structFields(t, props, required)
		var req []string
		for name := range required {
			req = append(req, name)
		}
		sort.Strings(req)
		return object(props, req...)
	case t.Kind() == reflect.Bool:
		return map[string]any{"type": "boolean"}
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return map[string]any{"type": "integer", "format": "int64"}
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return map[string]any{"type": "number"}
	case t.Kind() == reflect.String:
		return map[string]any{"type": "string"}
	}
	return map[string]any{}
}

func structFields(t reflect.Type, props map[string]any, required map[string]bool) {
	// Embedded structs first, so that the outer struct's fields shadow theirs.
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Tag.Get("json") == "" && f.Type.Kind() == reflect.Struct {
			structFields(f.Type, props, required)
		}
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" || f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		props[name] = schemaOf(f.Type)
		if strings.Contains(opts, "omitempty") {
			delete(required, name)
		} else {
			required[name] = true
		}
	}
}
