package handlers_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"couponsvc/handlers"
	"couponsvc/models"
	"couponsvc/services"
	"couponsvc/services/admin"
	"couponsvc/services/checkout"
	"couponsvc/services/claims"
	"couponsvc/services/core"
	"couponsvc/services/events"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"
	"golang.org/x/crypto/bcrypt"
)

// sessionHeader stands in for a page session in these tests: the router's
// SessionPrincipal option turns it into a logged-in shopper.
const sessionHeader = "X-Test-Shopper"

// testShopperSession is the SessionPrincipal of the tests: the shopper named
// by sessionHeader.
func testShopperSession(c *gin.Context) *models.Principal {
	if name := c.GetHeader(sessionHeader); name != "" {
		return &models.Principal{Name: name, Role: models.RoleShopper, UserID: name}
	}
	return nil
}

// rig is a router over fresh backends with a campaign, a template with room
// for many claims, and an API token of each role.
type rig struct {
	t *testing.T
	*fixture
	tokens     map[string]string // role → token
	campaignID int64
	templateID int64
	seq        int
	// sessions holds the page sessions of the logged-in shoppers when the
	// rig logs in through the pages (newSessionRig); nil uses the stand-in.
	sessions map[string]*pageSession
}

// rigBootstrapToken is the bootstrap admin token of every rig.
const rigBootstrapToken = "rig-bootstrap-token-5f0c9a7e21"

// newRig returns a rig whose shoppers are logged in by the stand-in session
// (sessionHeader), for tests of the API that are not about sessions.
func newRig(t *testing.T, opts handlers.Options) *rig {
	t.Helper()
	if opts.SessionPrincipal == nil {
		return newRigWith(t, withOptions(opts), withShopperHeader())
	}
	return newRigWith(t, withOptions(opts))
}

// newSessionRig returns a rig whose shoppers log in through the pages and send
// their session cookie (and CSRF token) like a browser.
func newSessionRig(t *testing.T) *rig {
	t.Helper()
	r := newRigWith(t)
	r.sessions = map[string]*pageSession{}
	return r
}

// newRigWith returns a rig on a fixture with the given options.
func newRigWith(t *testing.T, options ...fixtureOption) *rig {
	t.Helper()
	r := &rig{t: t, fixture: newFixture(t, append([]fixtureOption{withBootstrap(rigBootstrapToken)}, options...)...),
		tokens: map[string]string{}}
	env := r.Env
	ctx := context.Background()
	camp, err := env.Service.CreateCampaign(ctx, "test", models.Campaign{Name: "Security"})
	if err != nil {
		t.Fatalf("create campaign: %v", err)
	}
	tpl, err := env.Service.CreateTemplate(ctx, "test", models.Template{CampaignID: camp.ID, Name: "Ten off",
		Kind: models.KindFixed, FaceValueCents: 1000, TotalStock: 10000, PerUserLimit: 100, ValidDays: 30})
	if err != nil {
		t.Fatalf("create template: %v", err)
	}
	r.campaignID, r.templateID = camp.ID, tpl.ID
	for _, role := range []string{models.RoleAdmin, models.RoleCashier, models.RoleApp} {
		token, _, err := env.Service.CreateToken(ctx, "test", role, "rig-"+role)
		if err != nil {
			t.Fatalf("create %s token: %v", role, err)
		}
		r.tokens[role] = token
	}
	return r
}

// req describes one request of a test.
type req struct {
	method, target string
	auth           string // the Authorization header, if any
	shopper        string // the logged-in shopper, if any
	noCSRF         bool   // a page session sends no CSRF token
	addr           string // the client address (default 192.0.2.1)
	headers        map[string]string
	body           string
	bodyReader     io.Reader // instead of body
}

// answer is what the router answered.
type answer struct {
	status int
	header http.Header
	body   map[string]any // nil when the answer is not JSON
	raw    string
}

func (a answer) String() string { return fmt.Sprintf("%d %s", a.status, strings.TrimSpace(a.raw)) }

// code is the body's result code, or -1.
func (a answer) code() int {
	if v, ok := a.body["code"].(float64); ok {
		return int(v)
	}
	return -1
}

func bearer(token string) string { return "Bearer " + token }

// do sends a request through the router.
func (r *rig) do(q req) answer {
	r.t.Helper()
	var body io.Reader = strings.NewReader(q.body)
	if q.bodyReader != nil {
		body = q.bodyReader
	}
	hr := httptest.NewRequest(q.method, q.target, body)
	if q.body != "" || q.bodyReader != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if q.addr != "" {
		hr.RemoteAddr = q.addr + ":40000"
		if strings.Contains(q.addr, ":") {
			hr.RemoteAddr = "[" + q.addr + "]:40000"
		}
	}
	if q.auth != "" {
		hr.Header.Set("Authorization", q.auth)
	}
	var sess *pageSession
	switch {
	case q.shopper != "" && r.sessions != nil:
		sess = r.session(q.shopper)
		for _, c := range sess.cookies {
			hr.AddCookie(c)
		}
		if q.method != "GET" && q.method != "HEAD" && !q.noCSRF {
			hr.Header.Set("X-CSRF-Token", sess.csrf)
		}
	case q.shopper != "":
		hr.Header.Set(sessionHeader, q.shopper)
	}
	for k, v := range q.headers {
		hr.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	r.router.ServeHTTP(rec, hr)
	if sess != nil {
		sess.keep(rec.Result().Cookies())
	}
	a := answer{status: rec.Code, header: rec.Header(), raw: rec.Body.String()}
	_ = json.Unmarshal(rec.Body.Bytes(), &a.body)
	return a
}

// claim claims a coupon of the rig's template for user through the API with
// the app token, under a fresh idempotency key.
func (r *rig) claim(user string, q req) answer {
	r.t.Helper()
	r.seq++
	q.method = http.MethodPost
	q.target = fmt.Sprintf("/api/v1/templates/%d/claim", r.templateID)
	if q.headers == nil {
		q.headers = map[string]string{}
	}
	if _, ok := q.headers["Idempotency-Key"]; !ok {
		q.headers["Idempotency-Key"] = fmt.Sprintf("rig-%d", r.seq)
	}
	if q.auth == "" && q.shopper == "" {
		q.auth = bearer(r.tokens[models.RoleApp])
	}
	if q.body == "" && q.bodyReader == nil && q.shopper == "" {
		q.body = `{"user_id":"` + user + `"}`
	}
	return r.do(q)
}

// coupon claims a coupon for user through the service and returns its code.
func (r *rig) coupon(user string) string {
	r.t.Helper()
	r.seq++
	res, err := r.Env.Service.Claim(context.Background(), claims.ClaimRequest{
		TemplateID: r.templateID, UserID: user, IdempotencyKey: fmt.Sprintf("rig-coupon-%d", r.seq)})
	if err != nil {
		r.t.Fatalf("claim a coupon for %s: %v", user, err)
	}
	return res.Coupon.Code
}

// pageSession is what a browser keeps of a logged-in user: the cookies and
// the page's CSRF token.
type pageSession struct {
	cookies []*http.Cookie
	csrf    string
}

// keep stores the cookies an answer sets, and forgets those it deletes.
func (s *pageSession) keep(set []*http.Cookie) {
	for _, c := range set {
		s.cookies = slices.DeleteFunc(s.cookies, func(old *http.Cookie) bool { return old.Name == c.Name })
		if c.MaxAge >= 0 && c.Value != "" {
			s.cookies = append(s.cookies, &http.Cookie{Name: c.Name, Value: c.Value})
		}
	}
}

// rigPassword is the password of the shoppers a session rig creates.
const rigPassword = "rig-shopper-pass-0042"

// pageCSRF finds the CSRF token of a page: its meta tag or a form's field.
var pageCSRF = regexp.MustCompile(`(?:name="csrf-token" content|name="csrf_token" value)="([^"]+)"`)

// session returns the page session of shopper name, creating the user and
// logging in through POST /login, as a browser would, when needed.
func (r *rig) session(name string) *pageSession {
	r.t.Helper()
	if s := r.sessions[name]; s != nil {
		return s
	}
	if _, err := r.Env.Service.CreateUser(context.Background(), "test", name, rigPassword, models.RoleShopper); err != nil &&
		!strings.Contains(err.Error(), "taken") {
		r.t.Fatalf("create shopper %s: %v", name, err)
	}
	s := &pageSession{}
	fetch := func(method, target string, form url.Values) (int, string) {
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		hr := httptest.NewRequest(method, target, body)
		if form != nil {
			hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		for _, c := range s.cookies {
			hr.AddCookie(c)
		}
		rec := httptest.NewRecorder()
		r.router.ServeHTTP(rec, hr)
		s.keep(rec.Result().Cookies())
		return rec.Code, rec.Body.String()
	}
	token := func(doc string) string {
		m := pageCSRF.FindStringSubmatch(doc)
		if m == nil {
			r.t.Fatalf("no CSRF token on the page:\n%.1000s", doc)
		}
		return html.UnescapeString(m[1])
	}
	_, login := fetch("GET", "/login", nil)
	form := url.Values{"username": {name}, "password": {rigPassword}, "csrf_token": {token(login)}}
	if code, body := fetch("POST", "/login", form); code != http.StatusSeeOther {
		r.t.Fatalf("log in as %s: %d\n%.1000s", name, code, body)
	}
	// The login drops the CSRF cookie: the next page brings a fresh token.
	_, home := fetch("GET", "/", nil)
	s.csrf = token(home)
	r.sessions[name] = s
	return s
}

// role is who sends a request of the security matrix.
type role int

const (
	asAnonymous    role = iota
	asShopper           // alice, logged in to the pages
	asOtherShopper      // bob, logged in to the pages
	asCashier
	asApp
	asAdmin
	asRevoked   // an admin token that was revoked
	asMalformed // a bearer token that was never issued
	numRoles
)

var roleNames = [numRoles]string{"anonymous", "shopper", "other_shopper", "cashier_token", "app_token",
	"admin_token", "revoked_token", "malformed_token"}

func (r role) String() string { return roleNames[r] }

// expect is the status each role gets, indexed by role.
type expect [numRoles]int

// open is a route without authentication: every role gets status, whatever
// credentials it sends.
func open(status int) expect {
	var e expect
	for i := range e {
		e[i] = status
	}
	return e
}

// anyone is an API route for every caller, anonymous included; bad
// credentials are still refused.
func anyone(status int) expect {
	e := open(status)
	e[asRevoked], e[asMalformed] = 401, 401
	return e
}

// only is an API route for the given roles: they get status, anonymous and bad
// credentials 401, every other role 403.
func only(status int, roles ...role) expect {
	e := expect{asAnonymous: 401, asRevoked: 401, asMalformed: 401}
	for _, r := range []role{asShopper, asOtherShopper, asCashier, asApp, asAdmin} {
		e[r] = 403
	}
	for _, r := range roles {
		e[r] = status
	}
	return e
}

// pageRoute is a page route: a visitor (no page session: anonymous, or any API
// token, which does not log in to the pages) gets visitor, the two logged-in
// shoppers get shopper.
func pageRoute(visitor, shopper int) *expect {
	e := open(visitor)
	e[asShopper], e[asOtherShopper] = shopper, shopper
	return &e
}

// matrixRow holds the fixtures of a route of the security matrix: what to
// call it with. Who may call it comes from the route tables (api/routes.go, pages/routes.go).
type matrixRow struct {
	method, route string
	// target returns the URL to call; nil calls the route itself.
	target func(r *rig, who role) string
	// body returns the JSON body; nil sends none.
	body func(r *rig, who role) string
	// want is, for a page anyone may open, what each caller gets: it depends
	// on the session and the CSRF token, which the table does not describe.
	want *expect
	// owner overrides the table for callers refused by ownership rather than
	// by role.
	owner map[role]int
	// endsSession marks a route after which a shopper must log in again.
	endsSession bool
	// contentType replaces application/json for the body (a CSV upload).
	contentType string
}

// securityMatrix has the fixtures of the routes that need some: a path
// parameter, a body, or a public page's answers. A route of the table with a
// path parameter or a request body and no row here fails TestSecurityMatrix.
var securityMatrix = []matrixRow{
	{method: "POST", route: "/api/v1/campaigns",
		body: func(r *rig, who role) string { return `{"name":"sec-` + who.String() + `","budget_cents":0}` }},
	{method: "GET", route: "/api/v1/campaigns/:id",
		target: func(r *rig, who role) string { return fmt.Sprintf("/api/v1/campaigns/%d", r.campaignID) }},
	{method: "PATCH", route: "/api/v1/campaigns/:id",
		target: func(r *rig, who role) string { return fmt.Sprintf("/api/v1/campaigns/%d", r.campaignID) },
		body:   func(r *rig, who role) string { return `{"name":"checked by ` + who.String() + `"}` }},

	{method: "POST", route: "/api/v1/templates",
		body: func(r *rig, who role) string {
			return fmt.Sprintf(`{"campaign_id":%d,"name":"sec-%s","kind":"fixed","face_value_cents":100,`+
				`"total_stock":5,"per_user_limit":1,"valid_days":10}`, r.campaignID, who)
		}},
	{method: "GET", route: "/api/v1/templates/:id", target: templatePath("")},
	{method: "PATCH", route: "/api/v1/templates/:id", target: templatePath(""),
		body: func(r *rig, who role) string { return `{"description":"checked by ` + who.String() + `"}` }},
	{method: "POST", route: "/api/v1/templates/:id/stock", target: templatePath("/stock"),
		body: func(r *rig, who role) string { return `{"delta":1,"reason":"security matrix"}` }},
	{method: "POST", route: "/api/v1/templates/:id/claim", target: templatePath("/claim"),
		body: func(r *rig, who role) string {
			if who == asShopper || who == asOtherShopper {
				return "" // a shopper claims as themself
			}
			return `{"user_id":"carol-` + who.String() + `"}`
		}},
	{method: "GET", route: "/api/v1/templates/:id/stats", target: templatePath("/stats")},
	{method: "POST", route: "/api/v1/templates/:id/codes", target: templatePath("/codes"),
		body: func(r *rig, who role) string { return `{"count":1,"pattern":"SECURE-########"}` }},
	{method: "POST", route: "/api/v1/templates/:id/codes/import", target: templatePath("/codes/import"), contentType: "text/csv",
		body: func(r *rig, who role) string { return "code\nSEC-IMPORT-" + who.String() + "\n" }},
	{method: "POST", route: "/api/v1/templates/:id/issue", target: templatePath("/issue"),
		body: func(r *rig, who role) string { return `{"user_ids":["sec-issue-` + who.String() + `"]}` }},
	{method: "GET", route: "/api/v1/templates/:id/coupons.csv", target: templatePath("/coupons.csv?status=issued")},
	{method: "GET", route: "/api/v1/jobs/:id", target: jobPath("")},
	{method: "GET", route: "/api/v1/jobs/:id/result.csv", target: jobPath("/result.csv")},

	// bob is a shopper, but these are alice's coupons.
	{method: "GET", route: "/api/v1/users/:user_id/coupons", owner: map[role]int{asOtherShopper: 403},
		target: func(r *rig, who role) string { return "/api/v1/users/alice/coupons" }},
	{method: "GET", route: "/api/v1/coupons/:code",
		target: func(r *rig, who role) string { return "/api/v1/coupons/" + r.coupon("alice") }},
	{method: "POST", route: "/api/v1/coupons/:code/revoke",
		target: func(r *rig, who role) string { return "/api/v1/coupons/" + r.coupon("alice") + "/revoke" },
		body:   func(r *rig, who role) string { return `{"return_stock":true,"reason":"security matrix"}` }},
	{method: "POST", route: "/api/v1/redemptions",
		body: func(r *rig, who role) string {
			return `{"coupon_code":"` + r.coupon("alice") + `","order_id":"sec-` + who.String() + `","order_amount_cents":5000}`
		}},
	{method: "POST", route: "/api/v1/refunds",
		body: func(r *rig, who role) string {
			code, order := r.coupon("alice"), "sec-refund-"+who.String()
			if a := r.do(req{method: "POST", target: "/api/v1/redemptions", auth: bearer(r.tokens[models.RoleCashier]),
				body: `{"coupon_code":"` + code + `","order_id":"` + order + `","order_amount_cents":5000}`}); a.status != 200 {
				r.t.Fatalf("redeem before the refund: %v", a)
			}
			return `{"coupon_code":"` + code + `","order_id":"` + order + `"}`
		}},
	{method: "POST", route: "/api/v1/reconcile",
		body: func(r *rig, who role) string { return `{"repair":false}` }},
	{method: "GET", route: "/api/v1/users/:user_id/coupons/usable", owner: map[role]int{asOtherShopper: 403},
		target: func(r *rig, who role) string { return "/api/v1/users/alice/coupons/usable?order_amount_cents=5000" }},
	// Another shopper's coupon is answered as a code no coupon has.
	{method: "POST", route: "/api/v1/checkout/validate", owner: map[role]int{asOtherShopper: 404},
		body: func(r *rig, who role) string {
			return `{"coupon_codes":["` + r.coupon("alice") + `"],"order_amount_cents":5000}`
		}},
	{method: "POST", route: "/api/v1/holds",
		body: func(r *rig, who role) string {
			return `{"coupon_codes":["` + r.coupon("alice") + `"],"order_id":"sec-hold-` + who.String() + `","order_amount_cents":5000}`
		}},
	{method: "GET", route: "/api/v1/holds/:order_id", target: heldOrderPath("")},
	{method: "POST", route: "/api/v1/holds/:order_id/confirm", target: heldOrderPath("/confirm"),
		body: func(r *rig, who role) string { return `{"order_amount_cents":5000}` }},
	{method: "POST", route: "/api/v1/holds/:order_id/release", target: heldOrderPath("/release")},

	{method: "POST", route: "/api/v1/webhooks",
		body: func(r *rig, who role) string { return `{"url":"https://8.8.8.8/hook-` + who.String() + `"}` }},
	{method: "GET", route: "/api/v1/webhooks/:id", target: freshWebhookPath("/api/v1/webhooks/%d")},
	{method: "PATCH", route: "/api/v1/webhooks/:id", target: freshWebhookPath("/api/v1/webhooks/%d"),
		body: func(r *rig, who role) string { return `{"description":"sec-` + who.String() + `"}` }},
	{method: "DELETE", route: "/api/v1/webhooks/:id", target: freshWebhookPath("/api/v1/webhooks/%d")},
	{method: "GET", route: "/api/v1/webhooks/:id/attempts", target: freshWebhookPath("/api/v1/webhooks/%d/attempts")},
	{method: "POST", route: "/api/v1/webhooks/:id/deliveries/:delivery_id/resend", target: freshDeliveryPath("/api/v1/webhooks/%d/deliveries/%d/resend")},
	{method: "POST", route: "/api/v1/tokens",
		body: func(r *rig, who role) string { return `{"role":"app","name":"sec-` + who.String() + `"}` }},
	{method: "POST", route: "/api/v1/tokens/:id/revoke", target: freshTokenPath("/api/v1/tokens/%d/revoke")},
	{method: "POST", route: "/api/v1/users",
		body: func(r *rig, who role) string {
			return `{"username":"sec-` + who.String() + `","password":"correct horse battery","role":"shopper"}`
		}},

	// The pages know only their own login session: an API token logs
	// nobody in there, so every role but the two logged-in shoppers is a
	// visitor. Public pages answer 200; the others send a visitor to the login
	// page (303) and show a shopper 403 when they are for cashiers or admins;
	// every form post without the page's CSRF token is refused (403). The
	// pages' own tests (pages_test.go, browser_test.go) check the cashier and
	// admin sessions.
	{method: "GET", route: "/", want: pageRoute(200, 200)},
	{method: "GET", route: "/login", want: pageRoute(200, 303)},
	{method: "POST", route: "/login", want: pageRoute(403, 400)},
	{method: "GET", route: "/logout", want: pageRoute(303, 200)},
	{method: "POST", route: "/logout", want: pageRoute(403, 303), endsSession: true},
	// alice's coupon: bob, a shopper too, is told there is none.
	{method: "GET", route: "/wallet/qr/:code", owner: map[role]int{asOtherShopper: 404},
		target: func(r *rig, who role) string { return "/wallet/qr/" + r.coupon("alice") }},
	{method: "GET", route: "/static/*file", target: func(r *rig, who role) string { return "/static/app.css" }},
	{method: "GET", route: "/admin/templates/:id", target: adminTemplatePath("")},
	{method: "POST", route: "/admin/templates/:id", target: adminTemplatePath("")},
	{method: "POST", route: "/admin/templates/:id/status", target: adminTemplatePath("/status")},
	{method: "POST", route: "/admin/templates/:id/stock", target: adminTemplatePath("/stock")},
	{method: "GET", route: "/admin/templates/:id/jobs", target: adminTemplatePath("/jobs")},
	{method: "POST", route: "/admin/templates/:id/codes", target: adminTemplatePath("/codes")},
	{method: "POST", route: "/admin/templates/:id/codes/import", target: adminTemplatePath("/codes/import")},
	{method: "POST", route: "/admin/templates/:id/issue", target: adminTemplatePath("/issue")},
	{method: "GET", route: "/admin/jobs/:id", target: func(r *rig, who role) string { return strings.Replace(jobPath("")(r, who), "/api/v1", "/admin", 1) }},
	{method: "POST", route: "/admin/tokens/:id/revoke", target: freshTokenPath("/admin/tokens/%d/revoke")},
	{method: "GET", route: "/admin/webhooks/:id", target: freshWebhookPath("/admin/webhooks/%d")},
	{method: "POST", route: "/admin/webhooks/:id/delete", target: freshWebhookPath("/admin/webhooks/%d/delete")},
	{method: "POST", route: "/admin/webhooks/:id/deliveries/:delivery/resend", target: freshDeliveryPath("/admin/webhooks/%d/deliveries/%d/resend")},
	{method: "GET", route: "/admin/campaigns/:id", target: adminCampaignPath("")},
	{method: "POST", route: "/admin/campaigns/:id", target: adminCampaignPath("")},
	{method: "POST", route: "/admin/campaigns/:id/status", target: adminCampaignPath("/status")},
}

// adminCampaignPath is the console address of the rig's campaign.
func adminCampaignPath(suffix string) func(*rig, role) string {
	return func(r *rig, who role) string { return fmt.Sprintf("/admin/campaigns/%d%s", r.campaignID, suffix) }
}

// callers are the callers of the matrix that hold a role.
var callers = map[string][]role{
	models.RoleShopper: {asShopper, asOtherShopper},
	models.RoleCashier: {asCashier},
	models.RoleApp:     {asApp},
	models.RoleAdmin:   {asAdmin},
}

// tableExpect is what each caller gets from a route by the route table: the
// role check's 401 and 403, the success status to the others.
func tableExpect(rt handlers.RouteInfo) (expect, bool) {
	var allowed []role
	for _, name := range rt.Roles {
		allowed = append(allowed, callers[name]...)
	}
	switch {
	case rt.API && rt.Roles == nil:
		return anyone(rt.Status), true
	case rt.API:
		return only(rt.Status, allowed...), true
	case rt.Asset || !rt.Page:
		return open(rt.Status), true
	case rt.Roles == nil:
		return expect{}, false // a public page: the fixture says
	}
	// A page for some roles: a visitor is sent to the login page, or refused
	// a form post (no CSRF token); a shopper without the role is refused.
	visitor, shopper := 303, 403
	if rt.Method != "GET" {
		visitor = 403
	}
	if slices.Contains(allowed, asShopper) {
		shopper = 200
		if rt.Method != "GET" {
			shopper = 303
		}
	}
	return *pageRoute(visitor, shopper), true
}

// heldOrderPath holds a fresh coupon of alice for an order of the caller's
// own and returns the path of that order's hold with suffix.
func heldOrderPath(suffix string) func(r *rig, who role) string {
	return func(r *rig, who role) string {
		r.seq++
		order := fmt.Sprintf("sec-held-%d", r.seq)
		if _, err := r.Env.Service.Hold(context.Background(), checkout.CheckoutRequest{OrderID: order,
			OrderAmountCents: 5000, CouponCodes: []string{r.coupon("alice")}}); err != nil {
			r.t.Fatalf("hold for %s: %v", order, err)
		}
		return "/api/v1/holds/" + order + suffix
	}
}

func adminTemplatePath(suffix string) func(r *rig, who role) string {
	return func(r *rig, who role) string { return fmt.Sprintf("/admin/templates/%d%s", r.templateID, suffix) }
}

// freshTokenPath makes an app token for each caller to revoke, so that no
// caller revokes a token the matrix calls with.
func freshTokenPath(format string) func(r *rig, who role) string {
	return func(r *rig, who role) string {
		_, rec, err := r.Env.Service.CreateToken(context.Background(), "test", models.RoleApp, "sec-revoke-"+who.String())
		if err != nil {
			r.t.Fatalf("create a token to revoke: %v", err)
		}
		return fmt.Sprintf(format, rec.ID)
	}
}

// jobPath queues a job for each caller to look at.
func jobPath(suffix string) func(r *rig, who role) string {
	return func(r *rig, who role) string {
		j, err := r.Env.Service.StartGenerate(context.Background(), "test", r.templateID, 1, "")
		if err != nil {
			r.t.Fatalf("queue a job: %v", err)
		}
		return fmt.Sprintf("/api/v1/jobs/%d%s", j.ID, suffix)
	}
}

// freshWebhookPath registers a webhook endpoint and names it in format.
func freshWebhookPath(format string) func(r *rig, who role) string {
	return func(r *rig, who role) string {
		u := "https://8.8.8.8/sec-" + who.String()
		w, err := r.Env.Service.CreateWebhook(context.Background(), "test", events.WebhookInput{URL: &u})
		if err != nil {
			r.t.Fatalf("create a webhook: %v", err)
		}
		return fmt.Sprintf(format, w.Endpoint.ID)
	}
}

// freshDeliveryPath registers a webhook endpoint, pauses a template of its
// own so that a delivery to the endpoint is written, and names the
// delivery's resend in format (endpoint id, delivery id).
func freshDeliveryPath(format string) func(r *rig, who role) string {
	return func(r *rig, who role) string { return freshDelivery(r, who, format) }
}

func freshDelivery(r *rig, who role, format string) string {
	ctx := context.Background()
	u := "https://8.8.8.8/sec-resend-" + who.String()
	w, err := r.Env.Service.CreateWebhook(ctx, "test", events.WebhookInput{URL: &u})
	if err != nil {
		r.t.Fatalf("create a webhook: %v", err)
	}
	c, err := r.Env.Service.CreateCampaign(ctx, "test", models.Campaign{Name: "sec-resend"})
	if err != nil {
		r.t.Fatal(err)
	}
	tp, err := r.Env.Service.CreateTemplate(ctx, "test", models.Template{CampaignID: c.ID, Name: "sec-resend", Kind: models.KindFixed,
		FaceValueCents: 100, TotalStock: 1, PerUserLimit: 1, ValidDays: 1})
	if err != nil {
		r.t.Fatal(err)
	}
	paused := models.TemplatePaused
	if _, err := r.Env.Service.UpdateTemplate(ctx, "test", tp.ID, admin.TemplatePatch{Status: &paused}); err != nil {
		r.t.Fatal(err)
	}
	var d models.WebhookDelivery
	if err := r.Env.Backends.DB.Where("endpoint_id = ?", w.Endpoint.ID).First(&d).Error; err != nil {
		r.t.Fatalf("the pause wrote no delivery: %v", err)
	}
	return fmt.Sprintf(format, w.Endpoint.ID, d.ID)
}

func templatePath(suffix string) func(r *rig, who role) string {
	return func(r *rig, who role) string { return fmt.Sprintf("/api/v1/templates/%d%s", r.templateID, suffix) }
}

// credentials returns the request fields that make who.
func (r *rig) credentials(who role, revoked string) req {
	switch who {
	case asShopper:
		return req{shopper: "alice"}
	case asOtherShopper:
		return req{shopper: "bob"}
	case asCashier:
		return req{auth: bearer(r.tokens[models.RoleCashier])}
	case asApp:
		return req{auth: bearer(r.tokens[models.RoleApp])}
	case asAdmin:
		return req{auth: bearer(r.tokens[models.RoleAdmin])}
	case asRevoked:
		return req{auth: bearer(revoked)}
	case asMalformed:
		return req{auth: bearer("cps_" + strings.Repeat("A", 43))}
	}
	return req{}
}

// TestSecurityMatrix calls every route of the route table as every caller and
// checks the status: 401 and 403 exactly where the table's roles say, the
// success status elsewhere; and that the router has exactly the table's routes.
func TestSecurityMatrix(t *testing.T) {
	r := newSessionRig(t)
	ctx := context.Background()
	revoked, rec, err := r.Env.Service.CreateToken(ctx, "test", models.RoleAdmin, "to be revoked")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Env.Service.RevokeToken(ctx, "test", rec.ID); err != nil {
		t.Fatal(err)
	}
	r.coupon("alice") // alice holds a coupon before anyone looks

	fixtures := map[string]matrixRow{}
	for _, row := range securityMatrix {
		key := row.method + " " + row.route
		if _, dup := fixtures[key]; dup {
			t.Errorf("two rows for %s", key)
		}
		fixtures[key] = row
	}
	registered := map[string]bool{}
	for _, route := range r.router.Routes() {
		registered[route.Method+" "+route.Path] = true
	}
	checked, inTable := 0, map[string]bool{}
	for _, rt := range handlers.RouteTable() {
		key := rt.Method + " " + rt.Path
		inTable[key] = true
		if !registered[key] {
			t.Errorf("%s is in the route table but not a route of the router", key)
		}
		row, ok := fixtures[key]
		if !ok && (strings.ContainsAny(rt.Path, ":*") || rt.Request != nil) {
			t.Errorf("%s has no row in securityMatrix (handlers/security_test.go): add its URL and body", key)
			continue
		}
		want, fromTable := tableExpect(rt)
		switch {
		case fromTable && row.want != nil:
			t.Errorf("%s: the route table says who may call it; its row must not", key)
			continue
		case !fromTable && row.want == nil:
			t.Errorf("%s: a public page needs the status each caller gets in its row of securityMatrix", key)
			continue
		case row.want != nil:
			want = *row.want
		}
		for who, status := range row.owner {
			want[who] = status
		}
		t.Run(strings.ReplaceAll(key, "/", "_"), func(t *testing.T) {
			r.t = t
			for who := range numRoles {
				q := r.credentials(who, revoked)
				q.method, q.target = rt.Method, rt.Path
				if row.target != nil {
					q.target = row.target(r, who)
				}
				if row.body != nil {
					q.body = row.body(r, who)
				}
				q.headers = map[string]string{"Idempotency-Key": "sec-" + who.String() + "-" + rt.Path}
				if row.contentType != "" {
					q.headers["Content-Type"] = row.contentType
				}
				a := r.do(q)
				checked++
				if row.endsSession && q.shopper != "" {
					delete(r.sessions, q.shopper) // log in again for the next row
				}
				if a.status != want[who] {
					t.Errorf("%s %s as %s: %v, want %d", rt.Method, q.target, who, a, want[who])
				}
				if rt.API && a.body == nil && !(rt.Raw && a.status == rt.Status) {
					t.Errorf("%s %s as %s: the answer is not JSON: %v", rt.Method, q.target, who, a)
				}
				if rt.API && (a.status == 401 || a.status == 403) {
					if want := map[int]string{401: "unauthorized", 403: "forbidden"}[a.status]; a.body["result"] != want || a.code() != int(models.CodeUnauthorized) {
						t.Errorf("%s %s as %s: %v, want code 14 %q", rt.Method, q.target, who, a, want)
					}
				}
			}
		})
	}
	for key := range registered {
		if !inTable[key] {
			t.Errorf("the router has %s, which is not in the route table", key)
		}
	}
	for key := range fixtures {
		if !inTable[key] {
			t.Errorf("securityMatrix has a row for %s, which is not in the route table", key)
		}
	}
	r.t = t
	t.Logf("security matrix: %d routes, %d requests checked", len(inTable), checked)
}

// TestSecurityAttacks tries what a caller might do to get past the checks.
func TestSecurityAttacks(t *testing.T) {
	r := newSessionRig(t)
	routes := map[string]bool{}
	for _, route := range r.router.Routes() {
		routes[route.Method+" "+route.Path] = true
	}
	app := r.tokens[models.RoleApp]
	templates := "/api/v1/templates"
	campaigns := "/api/v1/campaigns"
	cases := []struct {
		name  string
		route string // skipped when not registered
		q     req
		want  int
	}{
		{"BasicAuthScheme", "", req{method: "GET", target: campaigns, auth: "Basic YWRtaW46YWRtaW4="}, 401},
		{"BearerWithoutToken", "", req{method: "GET", target: campaigns, auth: "Bearer "}, 401},
		{"LowercaseScheme", "", req{method: "GET", target: campaigns, auth: "bearer " + r.tokens[models.RoleAdmin]}, 401},
		{"TruncatedToken", "", req{method: "GET", target: campaigns, auth: bearer(r.tokens[models.RoleAdmin][:20])}, 401},
		{"TokenWithExtraChar", "", req{method: "GET", target: campaigns, auth: bearer(r.tokens[models.RoleAdmin] + "x")}, 401},
		{"TokenChangedLastChar", "", req{method: "GET", target: campaigns, auth: bearer(flipLast(r.tokens[models.RoleAdmin]))}, 401},
		{"HugeToken", "", req{method: "GET", target: campaigns, auth: bearer(strings.Repeat("x", 10000))}, 401},
		{"TokenHashAsToken", "", req{method: "GET", target: campaigns, auth: bearer(sha256Hex(r.tokens[models.RoleAdmin]))}, 401},
		{"BootstrapTokenIsAdmin", "", req{method: "GET", target: campaigns, auth: bearer(rigBootstrapToken)}, 200},
		{"BootstrapTokenNearMiss", "", req{method: "GET", target: campaigns, auth: bearer(flipLast(rigBootstrapToken))}, 401},
		{"BadTokenOnPublicRoute", "", req{method: "GET", target: templates, auth: bearer("nope")}, 401},
		{"BadTokenBeatsSession", "", req{method: "GET", target: templates, auth: bearer("nope"), shopper: "alice"}, 401},
		{"AppCannotSeePausedTemplates", "", req{method: "GET", target: templates + "?all=1", auth: bearer(app)}, 403},
		{"AnonymousCannotSeePausedTemplates", "", req{method: "GET", target: templates + "?all=1"}, 401},
		{"ShopperCannotCreateAdminUser", "", req{method: "POST", target: "/api/v1/users", shopper: "alice",
			body: `{"username":"mallory","password":"12345678","role":"admin"}`}, 403},
		{"ShopperClaimsForAnother", "POST /api/v1/templates/:id/claim", req{method: "POST",
			target: fmt.Sprintf("%s/%d/claim", templates, r.templateID), shopper: "alice",
			headers: map[string]string{"Idempotency-Key": "attack-1"}, body: `{"user_id":"bob"}`}, 403},
		{"ShopperReadsAnothersWallet", "GET /api/v1/users/:user_id/coupons", req{method: "GET",
			target: "/api/v1/users/bob/coupons", shopper: "alice"}, 403},
		{"ShopperReadsWalletOfCaseVariant", "GET /api/v1/users/:user_id/coupons", req{method: "GET",
			target: "/api/v1/users/Alice/coupons", shopper: "alice"}, 403},
		{"ShopperRedeems", "POST /api/v1/redemptions", req{method: "POST", target: "/api/v1/redemptions", shopper: "alice",
			body: `{"coupon_code":"` + r.coupon("alice") + `","order_id":"o-attack","order_amount_cents":5000}`}, 403},
		{"RedeemOthersCouponWithUserID", "POST /api/v1/redemptions", req{method: "POST", target: "/api/v1/redemptions",
			auth: bearer(r.tokens[models.RoleCashier]),
			body: `{"coupon_code":"` + r.coupon("alice") + `","order_id":"o-attack-2","order_amount_cents":5000,"user_id":"bob"}`}, 403},
		{"CashierRevokes", "POST /api/v1/coupons/:code/revoke", req{method: "POST",
			target: "/api/v1/coupons/" + r.coupon("alice") + "/revoke", auth: bearer(r.tokens[models.RoleCashier]),
			body: `{"return_stock":true,"reason":"x"}`}, 403},
		{"PathTraversal", "", req{method: "GET", target: "/api/v1/../../etc/passwd"}, 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.route != "" && !routes[tc.route] {
				t.Skipf("%s is not registered yet", tc.route)
			}
			r.t = t
			if a := r.do(tc.q); a.status != tc.want {
				t.Errorf("%s %s: %v, want %d", tc.q.method, tc.q.target, a, tc.want)
			}
		})
	}
}

// TestSessionAttacks tries what a page session might be abused for: a forged
// cross-site request, a copied cookie after logout, a tampered cookie.
func TestSessionAttacks(t *testing.T) {
	r := newSessionRig(t)
	if r.sessions == nil {
		t.Skip("no page sessions yet")
	}
	claim := fmt.Sprintf("/api/v1/templates/%d/claim", r.templateID)
	wallet := "/api/v1/users/mia/coupons"
	key := func(k string) map[string]string { return map[string]string{"Idempotency-Key": k} }

	t.Run("OK", func(t *testing.T) {
		r.t = t
		wantStatus(t, r.do(req{method: "POST", target: claim, shopper: "mia", headers: key("s-ok")}), 201, "claim with the session")
		wantStatus(t, r.do(req{method: "GET", target: wallet, shopper: "mia"}), 200, "wallet with the session")
	})
	t.Run("ErrNoCSRFToken", func(t *testing.T) {
		r.t = t
		wantStatus(t, r.do(req{method: "POST", target: claim, shopper: "mia", noCSRF: true, headers: key("s-1")}), 403, "claim without the CSRF token")
	})
	t.Run("ErrWrongCSRFToken", func(t *testing.T) {
		r.t = t
		h := key("s-2")
		h["X-CSRF-Token"] = r.session("mia").csrf[:10] + "AAAA" + r.session("mia").csrf[14:]
		wantStatus(t, r.do(req{method: "POST", target: claim, shopper: "mia", noCSRF: true, headers: h}), 403, "claim with a wrong CSRF token")
	})
	t.Run("ErrCrossSiteOrigin", func(t *testing.T) {
		r.t = t
		h := key("s-3")
		h["Origin"] = "https://evil.example"
		wantStatus(t, r.do(req{method: "POST", target: claim, shopper: "mia", headers: h}), 403, "claim from another origin")
	})
	t.Run("ErrTamperedCookie", func(t *testing.T) {
		r.t = t
		sess := r.session("mia")
		hr := httptest.NewRequest("GET", wallet, nil)
		for _, c := range sess.cookies {
			v := c.Value
			if c.Name == "couponsvc_session" {
				// One character in the middle, where every bit counts (the
				// last of base64 may hold padding bits only).
				mid, repl := len(v)/2, byte('A')
				if v[mid] == 'A' {
					repl = 'Q'
				}
				v = v[:mid] + string(repl) + v[mid+1:]
			}
			hr.AddCookie(&http.Cookie{Name: c.Name, Value: v})
		}
		rec := httptest.NewRecorder()
		r.router.ServeHTTP(rec, hr)
		if rec.Code != 401 {
			t.Fatalf("wallet with a tampered cookie: %d %s", rec.Code, rec.Body)
		}
	})
	t.Run("ErrCookieCopiedBeforeLogout", func(t *testing.T) {
		r.t = t
		copied := slices.Clone(r.session("mia").cookies)
		wantStatus(t, r.do(req{method: "POST", target: "/logout", shopper: "mia"}), 303, "log out")
		delete(r.sessions, "mia")
		hr := httptest.NewRequest("GET", wallet, nil)
		for _, c := range copied {
			hr.AddCookie(c)
		}
		rec := httptest.NewRecorder()
		r.router.ServeHTTP(rec, hr)
		if rec.Code != 401 {
			t.Fatalf("wallet with a cookie copied before the logout: %d %s", rec.Code, rec.Body)
		}
	})
	t.Run("ErrOtherShoppersWallet", func(t *testing.T) {
		r.t = t
		wantStatus(t, r.do(req{method: "GET", target: wallet, shopper: "noah"}), 403, "another shopper's wallet")
	})
}

func flipLast(s string) string {
	b := []byte(s)
	if b[len(b)-1] == 'A' {
		b[len(b)-1] = 'B'
	} else {
		b[len(b)-1] = 'A'
	}
	return string(b)
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestSecretsStoredHashed checks that the database holds tokens and passwords
// only as hashes: no column of any row of the token, user or audit tables
// holds one, the token's row holds its SHA-256 and the user's a bcrypt hash.
func TestSecretsStoredHashed(t *testing.T) {
	r := newRig(t, handlers.Options{})
	admin := bearer(r.tokens[models.RoleAdmin])
	a := r.do(req{method: "POST", target: "/api/v1/tokens", auth: admin, body: `{"role":"cashier","name":"till 1"}`})
	token, _ := a.body["token"].(string)
	if a.status != 201 || token == "" {
		t.Fatalf("create token: %v", a)
	}
	if strings.Contains(a.raw, sha256Hex(token)) {
		t.Fatalf("the answer shows the token's hash: %v", a)
	}
	const password = "s3cret-Passw0rd!"
	if a := r.do(req{method: "POST", target: "/api/v1/users", auth: admin,
		body: `{"username":"dana","password":"` + password + `","role":"cashier"}`}); a.status != 201 || strings.Contains(a.raw, password) {
		t.Fatalf("create user: %v", a)
	}

	secrets := []string{token, strings.TrimPrefix(token, "cps_")[:16], password, rigBootstrapToken}
	for _, tok := range r.tokens {
		secrets = append(secrets, tok)
	}
	for _, table := range []string{"api_tokens", "users", "audit_log"} {
		var rows []map[string]any
		if err := r.Env.Backends.DB.Table(table).Find(&rows).Error; err != nil {
			t.Fatalf("read %s: %v", table, err)
		}
		if len(rows) == 0 {
			t.Fatalf("%s is empty", table)
		}
		for _, row := range rows {
			for col, v := range row {
				s := fmt.Sprint(v)
				if b, ok := v.([]byte); ok {
					s = string(b)
				}
				for _, secret := range secrets {
					if strings.Contains(s, secret) {
						t.Errorf("%s.%s holds a secret: %q", table, col, s)
					}
				}
			}
		}
	}
	var hashes []string
	r.Env.Backends.DB.Table("api_tokens").Where("name = ?", "till 1").Pluck("token_hash", &hashes)
	if len(hashes) != 1 || hashes[0] != sha256Hex(token) {
		t.Errorf("token row holds %q, want the SHA-256 of the token", hashes)
	}
	var pw []string
	r.Env.Backends.DB.Table("users").Where("username = ?", "dana").Pluck("password_hash", &pw)
	if len(pw) != 1 || bcrypt.CompareHashAndPassword([]byte(pw[0]), []byte(password)) != nil {
		t.Errorf("user row holds %q, want a bcrypt hash of the password", pw)
	}
}

// lockedBuffer is a bytes.Buffer safe for the concurrent writes of a logger.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestNoSecretsInLogs runs what handles secrets (users and tokens created,
// used, revoked, refused; logins; failures that are logged with their error)
// with every logger captured at debug level, and checks that no password and
// no token, whole or in part, appears in a log line.
func TestNoSecretsInLogs(t *testing.T) {
	var logs lockedBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	old := slog.Default()
	slog.SetDefault(logger)
	t.Cleanup(func() { slog.SetDefault(old) })

	r := newRig(t, handlers.Options{Logger: logger, Limits: handlers.Limits{ClaimsPerUser: 100, ClaimsPerAddr: 100}})
	ctx := context.Background()
	secrets := []string{rigBootstrapToken}
	for _, tok := range r.tokens {
		secrets = append(secrets, tok)
	}
	boot := bearer(rigBootstrapToken)

	passwords := map[string]string{"shopper": "shopper-pass-0042", "cashier": "cashier-pass-0042", "admin": "admin-pass-0042"}
	for role, pw := range passwords {
		secrets = append(secrets, pw)
		if a := r.do(req{method: "POST", target: "/api/v1/users", auth: boot,
			body: `{"username":"log-` + role + `","password":"` + pw + `","role":"` + role + `"}`}); a.status != 201 {
			t.Fatalf("create user: %v", a)
		}
	}
	// A refused user creation echoes nothing of its password either.
	secrets = append(secrets, "short-pw")
	r.do(req{method: "POST", target: "/api/v1/users", auth: boot, body: `{"username":"log-x","password":"short-pw","role":"nobody"}`})

	var created []string
	for _, role := range []string{"admin", "cashier", "app"} {
		a := r.do(req{method: "POST", target: "/api/v1/tokens", auth: boot, body: `{"role":"` + role + `","name":"log ` + role + `"}`})
		tok, _ := a.body["token"].(string)
		if a.status != 201 || tok == "" {
			t.Fatalf("create token: %v", a)
		}
		created = append(created, tok)
		secrets = append(secrets, tok, strings.TrimPrefix(tok, "cps_")[:12])
		r.do(req{method: "GET", target: "/api/v1/templates", auth: bearer(tok)})
	}
	// A revoked token, near misses and garbage.
	var ids []int64
	r.Env.Backends.DB.Table("api_tokens").Where("name = ?", "log admin").Pluck("id", &ids)
	if len(ids) != 1 {
		t.Fatalf("token ids %v", ids)
	}
	if _, _, err := r.Env.Service.RevokeToken(ctx, "test", ids[0]); err != nil {
		t.Fatal(err)
	}
	r.do(req{method: "GET", target: "/api/v1/campaigns", auth: bearer(created[0])})
	r.do(req{method: "GET", target: "/api/v1/campaigns", auth: bearer(flipLast(created[1]))})
	r.do(req{method: "GET", target: "/api/v1/campaigns", auth: "Basic " + created[2]})
	r.do(req{method: "GET", target: "/api/v1/campaigns", auth: created[2]})

	// Passwords checked by the service, right and wrong.
	for role, pw := range passwords {
		if _, err := r.Env.Service.AuthenticatePassword(ctx, "log-"+role, pw); err != nil {
			t.Fatalf("log in as %s: %v", role, err)
		}
		if _, err := r.Env.Service.AuthenticatePassword(ctx, "log-"+role, pw+"-wrong"); err == nil {
			t.Fatalf("wrong password of %s accepted", role)
		}
	}
	// Logins through the pages, when they are there.
	// The session and CSRF cookies of the logins are secrets too.
	secrets = append(secrets, loginThroughPages(t, r, "log-shopper", passwords["shopper"])...)
	secrets = append(secrets, loginThroughPages(t, r, "log-admin", passwords["admin"])...)
	secrets = append(secrets, loginThroughPages(t, r, "log-cashier", passwords["cashier"]+"-wrong")...)

	// Failures that are logged with their error: Redis gone under a claim
	// (the claim answers 503 and the rate limiter warns).
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { dead.Close() })
	down := services.New(&core.Backends{DB: r.Env.Backends.DB, Dialect: r.Env.Backends.Dialect, Redis: dead},
		services.Config{KeyPrefix: r.Env.Prefix, Logger: logger, BootstrapToken: rigBootstrapToken})
	downRouter := handlers.NewRouter(down, handlers.Options{Logger: logger, SessionPrincipal: testShopperSession, Middleware: checkedAnswers(t),
		Limits: handlers.Limits{ClaimsPerUser: 5, ClaimsPerAddr: 5}})
	hr := httptest.NewRequest("POST", fmt.Sprintf("/api/v1/templates/%d/claim", r.templateID), strings.NewReader(`{"user_id":"u1"}`))
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Authorization", bearer(created[2]))
	hr.Header.Set("Idempotency-Key", "log-down")
	rec := httptest.NewRecorder()
	downRouter.ServeHTTP(rec, hr)
	if rec.Code != 503 {
		t.Fatalf("claim with Redis down: %d %s", rec.Code, rec.Body)
	}

	out := logs.String()
	if !strings.Contains(out, "request failed") {
		t.Fatalf("the run logged no failure, so the test proves little:\n%s", out)
	}
	for _, secret := range secrets {
		if strings.Contains(out, secret) {
			t.Errorf("a log line holds the secret %q", secret)
		}
	}
	t.Logf("%d log lines checked for %d secrets", strings.Count(out, "\n"), len(secrets))
	if t.Failed() || testing.Verbose() {
		t.Logf("logs:\n%s", out)
	}
}

var csrfField = regexp.MustCompile(`name="([^"]*csrf[^"]*)"\s+value="([^"]*)"`)

// loginThroughPages logs in through POST /login when the pages are wired,
// carrying the login form's cookies and CSRF field. It returns the values of
// the cookies and the CSRF token it saw.
func loginThroughPages(t *testing.T, r *rig, username, password string) (seen []string) {
	t.Helper()
	var hasLogin bool
	for _, route := range r.router.Routes() {
		hasLogin = hasLogin || route.Method == "POST" && route.Path == "/login"
	}
	if !hasLogin {
		t.Log("no POST /login yet: page logins not exercised")
		return nil
	}
	get := httptest.NewRequest("GET", "/login", nil)
	rec := httptest.NewRecorder()
	r.router.ServeHTTP(rec, get)
	form := url.Values{"username": {username}, "password": {password}}
	if m := csrfField.FindStringSubmatch(rec.Body.String()); m != nil {
		form.Set(m[1], html.UnescapeString(m[2]))
		seen = append(seen, html.UnescapeString(m[2]))
	}
	post := httptest.NewRequest("POST", "/login", strings.NewReader(form.Encode()))
	post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	post.Header.Set("Origin", "http://example.com")
	post.Header.Set("Referer", "http://example.com/login")
	for _, c := range rec.Result().Cookies() {
		post.AddCookie(c)
		seen = append(seen, c.Value)
	}
	rec = httptest.NewRecorder()
	r.router.ServeHTTP(rec, post)
	for _, c := range rec.Result().Cookies() {
		if c.Value != "" {
			seen = append(seen, c.Value)
		}
	}
	t.Logf("page login as %s: %d", username, rec.Code)
	if rec.Code != http.StatusSeeOther && rec.Code != http.StatusUnauthorized {
		t.Logf("page login answer: %.2000s", rec.Body.String())
	}
	return seen
}
