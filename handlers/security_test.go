package handlers_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/handlers"
	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/admin"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/events"

	"github.com/redis/go-redis/v9"
	"golang.org/x/crypto/bcrypt"
)

// newSessionRig returns a rig whose shoppers log in through the pages and send
// their session cookie (and CSRF token) like a browser.
func newSessionRig(t *testing.T) *testsupport.Rig {
	t.Helper()
	r := testsupport.NewRigWith(t)
	r.Sessions = map[string]*testsupport.PageSession{}
	return r
}

// expect is the status each role gets, indexed by role.
type expect [testsupport.NumRoles]int

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
	e[testsupport.AsRevoked], e[testsupport.AsMalformed] = 401, 401
	return e
}

// only is an API route for the given roles: they get status, anonymous and bad
// credentials 401, every other role 403.
func only(status int, roles ...testsupport.Role) expect {
	e := expect{testsupport.AsAnonymous: 401, testsupport.AsRevoked: 401, testsupport.AsMalformed: 401}
	for _, r := range []testsupport.Role{testsupport.AsShopper, testsupport.AsOtherShopper, testsupport.AsCashier, testsupport.AsApp, testsupport.AsAdmin} {
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
	e[testsupport.AsShopper], e[testsupport.AsOtherShopper] = shopper, shopper
	return &e
}

// matrixRow holds the fixtures of a route of the security matrix: what to
// call it with. Who may call it comes from the route tables (api/routes.go, pages/routes.go).
type matrixRow struct {
	method, route string
	// target returns the URL to call; nil calls the route itself.
	target func(r *testsupport.Rig, who testsupport.Role) string
	// body returns the JSON body; nil sends none.
	body func(r *testsupport.Rig, who testsupport.Role) string
	// want is, for a page anyone may open, what each caller gets: it depends
	// on the session and the CSRF token, which the table does not describe.
	want *expect
	// owner overrides the table for callers refused by ownership rather than
	// by role.
	owner map[testsupport.Role]int
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
		body: func(r *testsupport.Rig, who testsupport.Role) string {
			return `{"name":"sec-` + who.String() + `","budget_cents":0}`
		}},
	{method: "GET", route: "/api/v1/campaigns/:id",
		target: func(r *testsupport.Rig, who testsupport.Role) string {
			return fmt.Sprintf("/api/v1/campaigns/%d", r.CampaignID)
		}},
	{method: "PATCH", route: "/api/v1/campaigns/:id",
		target: func(r *testsupport.Rig, who testsupport.Role) string {
			return fmt.Sprintf("/api/v1/campaigns/%d", r.CampaignID)
		},
		body: func(r *testsupport.Rig, who testsupport.Role) string {
			return `{"name":"checked by ` + who.String() + `"}`
		}},

	{method: "POST", route: "/api/v1/templates",
		body: func(r *testsupport.Rig, who testsupport.Role) string {
			return fmt.Sprintf(`{"campaign_id":%d,"name":"sec-%s","kind":"fixed","face_value_cents":100,`+
				`"total_stock":5,"per_user_limit":1,"valid_days":10}`, r.CampaignID, who)
		}},
	{method: "GET", route: "/api/v1/templates/:id", target: templatePath("")},
	{method: "PATCH", route: "/api/v1/templates/:id", target: templatePath(""),
		body: func(r *testsupport.Rig, who testsupport.Role) string {
			return `{"description":"checked by ` + who.String() + `"}`
		}},
	{method: "POST", route: "/api/v1/templates/:id/stock", target: templatePath("/stock"),
		body: func(r *testsupport.Rig, who testsupport.Role) string { return `{"delta":1,"reason":"security matrix"}` }},
	{method: "POST", route: "/api/v1/templates/:id/claim", target: templatePath("/claim"),
		body: func(r *testsupport.Rig, who testsupport.Role) string {
			if who == testsupport.AsShopper || who == testsupport.AsOtherShopper {
				return "" // a shopper claims as themself
			}
			return `{"user_id":"carol-` + who.String() + `"}`
		}},
	{method: "GET", route: "/api/v1/templates/:id/stats", target: templatePath("/stats")},
	{method: "POST", route: "/api/v1/templates/:id/codes", target: templatePath("/codes"),
		body: func(r *testsupport.Rig, who testsupport.Role) string {
			return `{"count":1,"pattern":"SECURE-########"}`
		}},
	{method: "POST", route: "/api/v1/templates/:id/codes/import", target: templatePath("/codes/import"), contentType: "text/csv",
		body: func(r *testsupport.Rig, who testsupport.Role) string {
			return "code\nSEC-IMPORT-" + who.String() + "\n"
		}},
	{method: "POST", route: "/api/v1/templates/:id/issue", target: templatePath("/issue"),
		body: func(r *testsupport.Rig, who testsupport.Role) string {
			return `{"user_ids":["sec-issue-` + who.String() + `"]}`
		}},
	{method: "GET", route: "/api/v1/templates/:id/coupons.csv", target: templatePath("/coupons.csv?status=issued")},
	{method: "GET", route: "/api/v1/templates/:id/coupons", target: templatePath("/coupons?status=issued")},
	{method: "GET", route: "/api/v1/jobs/:id", target: jobPath("")},
	{method: "GET", route: "/api/v1/jobs/:id/result.csv", target: jobPath("/result.csv")},

	// bob is a shopper, but these are alice's coupons.
	{method: "GET", route: "/api/v1/users/:user_id/coupons", owner: map[testsupport.Role]int{testsupport.AsOtherShopper: 403},
		target: func(r *testsupport.Rig, who testsupport.Role) string { return "/api/v1/users/alice/coupons" }},
	{method: "GET", route: "/api/v1/coupons/:code",
		target: func(r *testsupport.Rig, who testsupport.Role) string { return "/api/v1/coupons/" + r.Coupon("alice") }},
	{method: "POST", route: "/api/v1/coupons/:code/revoke",
		target: func(r *testsupport.Rig, who testsupport.Role) string {
			return "/api/v1/coupons/" + r.Coupon("alice") + "/revoke"
		},
		body: func(r *testsupport.Rig, who testsupport.Role) string {
			return `{"return_stock":true,"reason":"security matrix"}`
		}},
	{method: "POST", route: "/api/v1/redemptions",
		body: func(r *testsupport.Rig, who testsupport.Role) string {
			return `{"coupon_code":"` + r.Coupon("alice") + `","order_id":"sec-` + who.String() + `","order_amount_cents":5000}`
		}},
	{method: "POST", route: "/api/v1/refunds",
		body: func(r *testsupport.Rig, who testsupport.Role) string {
			code, order := r.Coupon("alice"), "sec-refund-"+who.String()
			if a := r.Do(testsupport.Req{Method: "POST", Target: "/api/v1/redemptions", Auth: testsupport.Bearer(r.Tokens[models.RoleCashier]),
				Body: `{"coupon_code":"` + code + `","order_id":"` + order + `","order_amount_cents":5000}`}); a.Status != 200 {
				r.T.Fatalf("redeem before the refund: %v", a)
			}
			return `{"coupon_code":"` + code + `","order_id":"` + order + `"}`
		}},
	{method: "POST", route: "/api/v1/reconcile",
		body: func(r *testsupport.Rig, who testsupport.Role) string { return `{"repair":false}` }},
	{method: "GET", route: "/api/v1/users/:user_id/coupons/usable", owner: map[testsupport.Role]int{testsupport.AsOtherShopper: 403},
		target: func(r *testsupport.Rig, who testsupport.Role) string {
			return "/api/v1/users/alice/coupons/usable?order_amount_cents=5000"
		}},
	{method: "POST", route: "/api/v1/users/:user_id/coupons/usable", owner: map[testsupport.Role]int{testsupport.AsOtherShopper: 403},
		target: func(r *testsupport.Rig, who testsupport.Role) string { return "/api/v1/users/alice/coupons/usable" },
		body: func(r *testsupport.Rig, who testsupport.Role) string {
			return `{"lines":[{"line_id":"a","sku":"s","quantity":1,"unit_price_cents":5000}]}`
		}},
	// Another shopper's coupon is answered as a code no coupon has.
	// Another shopper's code is a not_found line of a 200 answer, as an
	// unknown code (handlers/api validate tests check the words).
	{method: "POST", route: "/api/v1/checkout/validate", owner: map[testsupport.Role]int{testsupport.AsOtherShopper: 200},
		body: func(r *testsupport.Rig, who testsupport.Role) string {
			return `{"coupon_codes":["` + r.Coupon("alice") + `"],"order_amount_cents":5000}`
		}},
	{method: "POST", route: "/api/v1/holds",
		body: func(r *testsupport.Rig, who testsupport.Role) string {
			return `{"coupon_codes":["` + r.Coupon("alice") + `"],"order_id":"sec-hold-` + who.String() + `","order_amount_cents":5000}`
		}},
	{method: "GET", route: "/api/v1/holds/:order_id", target: heldOrderPath("")},
	{method: "POST", route: "/api/v1/holds/:order_id/confirm", target: heldOrderPath("/confirm"),
		body: func(r *testsupport.Rig, who testsupport.Role) string { return `{"order_amount_cents":5000}` }},
	{method: "POST", route: "/api/v1/holds/:order_id/release", target: heldOrderPath("/release")},

	{method: "POST", route: "/api/v1/webhooks",
		body: func(r *testsupport.Rig, who testsupport.Role) string {
			return `{"url":"https://8.8.8.8/hook-` + who.String() + `"}`
		}},
	{method: "GET", route: "/api/v1/webhooks/:id", target: freshWebhookPath("/api/v1/webhooks/%d")},
	{method: "PATCH", route: "/api/v1/webhooks/:id", target: freshWebhookPath("/api/v1/webhooks/%d"),
		body: func(r *testsupport.Rig, who testsupport.Role) string {
			return `{"description":"sec-` + who.String() + `"}`
		}},
	{method: "DELETE", route: "/api/v1/webhooks/:id", target: freshWebhookPath("/api/v1/webhooks/%d")},
	{method: "DELETE", route: "/api/v1/templates/:id", target: freshTemplatePath("/api/v1/templates/%d")},
	{method: "DELETE", route: "/api/v1/campaigns/:id", target: freshCampaignPath("/api/v1/campaigns/%d")},
	{method: "GET", route: "/api/v1/webhooks/:id/attempts", target: freshWebhookPath("/api/v1/webhooks/%d/attempts")},
	{method: "POST", route: "/api/v1/webhooks/:id/deliveries/:delivery_id/resend", target: freshDeliveryPath("/api/v1/webhooks/%d/deliveries/%d/resend")},
	{method: "POST", route: "/api/v1/tokens",
		body: func(r *testsupport.Rig, who testsupport.Role) string {
			return `{"role":"app","name":"sec-` + who.String() + `"}`
		}},
	{method: "POST", route: "/api/v1/tokens/:id/revoke", target: freshTokenPath("/api/v1/tokens/%d/revoke")},
	{method: "POST", route: "/api/v1/users",
		body: func(r *testsupport.Rig, who testsupport.Role) string {
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
	{method: "GET", route: "/wallet/qr/:code", owner: map[testsupport.Role]int{testsupport.AsOtherShopper: 404},
		target: func(r *testsupport.Rig, who testsupport.Role) string { return "/wallet/qr/" + r.Coupon("alice") }},
	// The shopper's checkout posted empty: an empty cart, refused (400)
	// beside the items, rather than a redirect.
	{method: "POST", route: "/checkout/check", owner: map[testsupport.Role]int{testsupport.AsShopper: 400, testsupport.AsOtherShopper: 400}},
	{method: "POST", route: "/checkout/order", owner: map[testsupport.Role]int{testsupport.AsShopper: 400, testsupport.AsOtherShopper: 400}},
	{method: "GET", route: "/static/*file", target: func(r *testsupport.Rig, who testsupport.Role) string { return "/static/app.css" }},
	{method: "GET", route: "/admin/templates/:id", target: adminTemplatePath("")},
	{method: "POST", route: "/admin/templates/:id", target: adminTemplatePath("")},
	{method: "POST", route: "/admin/templates/:id/status", target: adminTemplatePath("/status")},
	{method: "POST", route: "/admin/templates/:id/stock", target: adminTemplatePath("/stock")},
	{method: "GET", route: "/admin/templates/:id/jobs", target: adminTemplatePath("/jobs")},
	{method: "POST", route: "/admin/templates/:id/codes", target: adminTemplatePath("/codes")},
	{method: "POST", route: "/admin/templates/:id/codes/import", target: adminTemplatePath("/codes/import")},
	{method: "POST", route: "/admin/templates/:id/issue", target: adminTemplatePath("/issue")},
	{method: "GET", route: "/admin/jobs/:id", target: func(r *testsupport.Rig, who testsupport.Role) string {
		return strings.Replace(jobPath("")(r, who), "/api/v1", "/admin", 1)
	}},
	{method: "POST", route: "/admin/tokens/:id/revoke", target: freshTokenPath("/admin/tokens/%d/revoke")},
	{method: "GET", route: "/admin/webhooks/:id", target: freshWebhookPath("/admin/webhooks/%d")},
	{method: "POST", route: "/admin/webhooks/:id/delete", target: freshWebhookPath("/admin/webhooks/%d/delete")},
	{method: "POST", route: "/admin/webhooks/:id/test", target: freshWebhookPath("/admin/webhooks/%d/test")},
	{method: "POST", route: "/admin/webhooks/:id/deliveries/:delivery/resend", target: freshDeliveryPath("/admin/webhooks/%d/deliveries/%d/resend")},
	{method: "GET", route: "/admin/campaigns/:id", target: adminCampaignPath("")},
	{method: "POST", route: "/admin/campaigns/:id", target: adminCampaignPath("")},
	{method: "POST", route: "/admin/campaigns/:id/status", target: adminCampaignPath("/status")},
	{method: "POST", route: "/admin/templates/:id/delete", target: freshTemplatePath("/admin/templates/%d/delete")},
	{method: "POST", route: "/admin/campaigns/:id/delete", target: freshCampaignPath("/admin/campaigns/%d/delete")},
}

// freshCampaignPath makes a campaign without templates for one request (a
// delete takes it away) and names it in format.
func freshCampaignPath(format string) func(r *testsupport.Rig, who testsupport.Role) string {
	return func(r *testsupport.Rig, who testsupport.Role) string {
		c, err := r.Env.Service.CreateCampaign(context.Background(), "test", models.Campaign{Name: "sec-" + who.String()})
		if err != nil {
			r.T.Fatalf("create a campaign: %v", err)
		}
		return fmt.Sprintf(format, c.ID)
	}
}

// freshTemplatePath makes a template that never issued a coupon for one
// request (a delete takes it away) and names it in format.
func freshTemplatePath(format string) func(r *testsupport.Rig, who testsupport.Role) string {
	return func(r *testsupport.Rig, who testsupport.Role) string {
		t, err := r.Env.Service.CreateTemplate(context.Background(), "test", models.Template{CampaignID: r.CampaignID,
			Name: "sec-" + who.String(), Kind: models.KindFixed, FaceValueCents: 100, TotalStock: 5, PerUserLimit: 1, ValidDays: 30})
		if err != nil {
			r.T.Fatalf("create a template: %v", err)
		}
		return fmt.Sprintf(format, t.ID)
	}
}

// adminCampaignPath is the console address of the rig's campaign.
func adminCampaignPath(suffix string) func(*testsupport.Rig, testsupport.Role) string {
	return func(r *testsupport.Rig, who testsupport.Role) string {
		return fmt.Sprintf("/admin/campaigns/%d%s", r.CampaignID, suffix)
	}
}

// callers are the callers of the matrix that hold a role.
var callers = map[string][]testsupport.Role{
	models.RoleShopper: {testsupport.AsShopper, testsupport.AsOtherShopper},
	models.RoleCashier: {testsupport.AsCashier},
	models.RoleApp:     {testsupport.AsApp},
	models.RoleAdmin:   {testsupport.AsAdmin},
}

// tableExpect is what each caller gets from a route by the route table: the
// role check's 401 and 403, the success status to the others.
func tableExpect(rt handlers.RouteInfo) (expect, bool) {
	var allowed []testsupport.Role
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
	if slices.Contains(allowed, testsupport.AsShopper) {
		shopper = 200
		if rt.Method != "GET" {
			shopper = 303
		}
	}
	return *pageRoute(visitor, shopper), true
}

// heldOrderPath holds a fresh coupon of alice for an order of the caller's
// own and returns the path of that order's hold with suffix.
func heldOrderPath(suffix string) func(r *testsupport.Rig, who testsupport.Role) string {
	return func(r *testsupport.Rig, who testsupport.Role) string {
		r.Seq++
		order := fmt.Sprintf("sec-held-%d", r.Seq)
		if _, err := r.Env.Service.Hold(context.Background(), checkout.CheckoutRequest{OrderID: order,
			OrderAmountCents: 5000, CouponCodes: []string{r.Coupon("alice")}}); err != nil {
			r.T.Fatalf("hold for %s: %v", order, err)
		}
		return "/api/v1/holds/" + order + suffix
	}
}

func adminTemplatePath(suffix string) func(r *testsupport.Rig, who testsupport.Role) string {
	return func(r *testsupport.Rig, who testsupport.Role) string {
		return fmt.Sprintf("/admin/templates/%d%s", r.TemplateID, suffix)
	}
}

// freshTokenPath makes an app token for each caller to revoke, so that no
// caller revokes a token the matrix calls with.
func freshTokenPath(format string) func(r *testsupport.Rig, who testsupport.Role) string {
	return func(r *testsupport.Rig, who testsupport.Role) string {
		_, rec, err := r.Env.Service.CreateToken(context.Background(), "test", models.RoleApp, "sec-revoke-"+who.String())
		if err != nil {
			r.T.Fatalf("create a token to revoke: %v", err)
		}
		return fmt.Sprintf(format, rec.ID)
	}
}

// jobPath queues a job for each caller to look at.
func jobPath(suffix string) func(r *testsupport.Rig, who testsupport.Role) string {
	return func(r *testsupport.Rig, who testsupport.Role) string {
		j, err := r.Env.Service.StartGenerate(context.Background(), "test", r.TemplateID, 1, "")
		if err != nil {
			r.T.Fatalf("queue a job: %v", err)
		}
		return fmt.Sprintf("/api/v1/jobs/%d%s", j.ID, suffix)
	}
}

// freshWebhookPath registers a webhook endpoint and names it in format.
func freshWebhookPath(format string) func(r *testsupport.Rig, who testsupport.Role) string {
	return func(r *testsupport.Rig, who testsupport.Role) string {
		u := "https://8.8.8.8/sec-" + who.String()
		w, err := r.Env.Service.CreateWebhook(context.Background(), "test", events.WebhookInput{URL: &u})
		if err != nil {
			r.T.Fatalf("create a webhook: %v", err)
		}
		return fmt.Sprintf(format, w.Endpoint.ID)
	}
}

// freshDeliveryPath registers a webhook endpoint, pauses a template of its
// own so that a delivery to the endpoint is written, and names the
// delivery's resend in format (endpoint id, delivery id).
func freshDeliveryPath(format string) func(r *testsupport.Rig, who testsupport.Role) string {
	return func(r *testsupport.Rig, who testsupport.Role) string { return freshDelivery(r, who, format) }
}

func freshDelivery(r *testsupport.Rig, who testsupport.Role, format string) string {
	ctx := context.Background()
	u := "https://8.8.8.8/sec-resend-" + who.String()
	w, err := r.Env.Service.CreateWebhook(ctx, "test", events.WebhookInput{URL: &u})
	if err != nil {
		r.T.Fatalf("create a webhook: %v", err)
	}
	c, err := r.Env.Service.CreateCampaign(ctx, "test", models.Campaign{Name: "sec-resend"})
	if err != nil {
		r.T.Fatal(err)
	}
	tp, err := r.Env.Service.CreateTemplate(ctx, "test", models.Template{CampaignID: c.ID, Name: "sec-resend", Kind: models.KindFixed,
		FaceValueCents: 100, TotalStock: 1, PerUserLimit: 1, ValidDays: 1})
	if err != nil {
		r.T.Fatal(err)
	}
	paused := models.TemplatePaused
	if _, err := r.Env.Service.UpdateTemplate(ctx, "test", tp.ID, admin.TemplatePatch{Status: &paused}); err != nil {
		r.T.Fatal(err)
	}
	var d models.WebhookDelivery
	if err := r.Env.Backends.DB.Where("endpoint_id = ?", w.Endpoint.ID).First(&d).Error; err != nil {
		r.T.Fatalf("the pause wrote no delivery: %v", err)
	}
	return fmt.Sprintf(format, w.Endpoint.ID, d.ID)
}

func templatePath(suffix string) func(r *testsupport.Rig, who testsupport.Role) string {
	return func(r *testsupport.Rig, who testsupport.Role) string {
		return fmt.Sprintf("/api/v1/templates/%d%s", r.TemplateID, suffix)
	}
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
	r.Coupon("alice") // alice holds a coupon before anyone looks

	fixtures := map[string]matrixRow{}
	for _, row := range securityMatrix {
		key := row.method + " " + row.route
		if _, dup := fixtures[key]; dup {
			t.Errorf("two rows for %s", key)
		}
		fixtures[key] = row
	}
	registered := map[string]bool{}
	for _, route := range r.Router.Routes() {
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
			r.T = t
			for who := range testsupport.NumRoles {
				q := r.Credentials(who, revoked)
				q.Method, q.Target = rt.Method, rt.Path
				if row.target != nil {
					q.Target = row.target(r, who)
				}
				if row.body != nil {
					q.Body = row.body(r, who)
				}
				q.Headers = map[string]string{"Idempotency-Key": "sec-" + who.String() + "-" + rt.Method + rt.Path}
				if row.contentType != "" {
					q.Headers["Content-Type"] = row.contentType
				}
				a := r.Do(q)
				checked++
				if row.endsSession && q.Shopper != "" {
					delete(r.Sessions, q.Shopper) // log in again for the next row
				}
				if a.Status != want[who] {
					t.Errorf("%s %s as %s: %v, want %d", rt.Method, q.Target, who, a, want[who])
				}
				if rt.API && a.Body == nil && !(rt.Raw && a.Status == rt.Status) {
					t.Errorf("%s %s as %s: the answer is not JSON: %v", rt.Method, q.Target, who, a)
				}
				if rt.API && (a.Status == 401 || a.Status == 403) {
					if want := map[int]string{401: "unauthorized", 403: "forbidden"}[a.Status]; a.Body["result"] != want || a.Code() != int(models.CodeUnauthorized) {
						t.Errorf("%s %s as %s: %v, want code 14 %q", rt.Method, q.Target, who, a, want)
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
	r.T = t
	t.Logf("security matrix: %d routes, %d requests checked", len(inTable), checked)
}

// TestSecurityAttacks tries what a caller might do to get past the checks.
func TestSecurityAttacks(t *testing.T) {
	r := newSessionRig(t)
	routes := map[string]bool{}
	for _, route := range r.Router.Routes() {
		routes[route.Method+" "+route.Path] = true
	}
	app := r.Tokens[models.RoleApp]
	templates := "/api/v1/templates"
	campaigns := "/api/v1/campaigns"
	cases := []struct {
		name  string
		route string // skipped when not registered
		q     testsupport.Req
		want  int
	}{
		{"BasicAuthScheme", "", testsupport.Req{Method: "GET", Target: campaigns, Auth: "Basic YWRtaW46YWRtaW4="}, 401},
		{"BearerWithoutToken", "", testsupport.Req{Method: "GET", Target: campaigns, Auth: "Bearer "}, 401},
		{"LowercaseScheme", "", testsupport.Req{Method: "GET", Target: campaigns, Auth: "bearer " + r.Tokens[models.RoleAdmin]}, 401},
		{"TruncatedToken", "", testsupport.Req{Method: "GET", Target: campaigns, Auth: testsupport.Bearer(r.Tokens[models.RoleAdmin][:20])}, 401},
		{"TokenWithExtraChar", "", testsupport.Req{Method: "GET", Target: campaigns, Auth: testsupport.Bearer(r.Tokens[models.RoleAdmin] + "x")}, 401},
		{"TokenChangedLastChar", "", testsupport.Req{Method: "GET", Target: campaigns, Auth: testsupport.Bearer(flipLast(r.Tokens[models.RoleAdmin]))}, 401},
		{"HugeToken", "", testsupport.Req{Method: "GET", Target: campaigns, Auth: testsupport.Bearer(strings.Repeat("x", 10000))}, 401},
		{"TokenHashAsToken", "", testsupport.Req{Method: "GET", Target: campaigns, Auth: testsupport.Bearer(sha256Hex(r.Tokens[models.RoleAdmin]))}, 401},
		{"BootstrapTokenIsAdmin", "", testsupport.Req{Method: "GET", Target: campaigns, Auth: testsupport.Bearer(testsupport.RigBootstrapToken)}, 200},
		{"BootstrapTokenNearMiss", "", testsupport.Req{Method: "GET", Target: campaigns, Auth: testsupport.Bearer(flipLast(testsupport.RigBootstrapToken))}, 401},
		{"BadTokenOnPublicRoute", "", testsupport.Req{Method: "GET", Target: templates, Auth: testsupport.Bearer("nope")}, 401},
		{"BadTokenBeatsSession", "", testsupport.Req{Method: "GET", Target: templates, Auth: testsupport.Bearer("nope"), Shopper: "alice"}, 401},
		{"AppCannotSeePausedTemplates", "", testsupport.Req{Method: "GET", Target: templates + "?all=1", Auth: testsupport.Bearer(app)}, 403},
		{"AnonymousCannotSeePausedTemplates", "", testsupport.Req{Method: "GET", Target: templates + "?all=1"}, 401},
		{"ShopperCannotCreateAdminUser", "", testsupport.Req{Method: "POST", Target: "/api/v1/users", Shopper: "alice",
			Body: `{"username":"mallory","password":"12345678","role":"admin"}`}, 403},
		{"ShopperClaimsForAnother", "POST /api/v1/templates/:id/claim", testsupport.Req{Method: "POST",
			Target: fmt.Sprintf("%s/%d/claim", templates, r.TemplateID), Shopper: "alice",
			Headers: map[string]string{"Idempotency-Key": "attack-1"}, Body: `{"user_id":"bob"}`}, 403},
		{"ShopperReadsAnothersWallet", "GET /api/v1/users/:user_id/coupons", testsupport.Req{Method: "GET",
			Target: "/api/v1/users/bob/coupons", Shopper: "alice"}, 403},
		{"ShopperReadsWalletOfCaseVariant", "GET /api/v1/users/:user_id/coupons", testsupport.Req{Method: "GET",
			Target: "/api/v1/users/Alice/coupons", Shopper: "alice"}, 403},
		{"ShopperRedeems", "POST /api/v1/redemptions", testsupport.Req{Method: "POST", Target: "/api/v1/redemptions", Shopper: "alice",
			Body: `{"coupon_code":"` + r.Coupon("alice") + `","order_id":"o-attack","order_amount_cents":5000}`}, 403},
		{"RedeemOthersCouponWithUserID", "POST /api/v1/redemptions", testsupport.Req{Method: "POST", Target: "/api/v1/redemptions",
			Auth: testsupport.Bearer(r.Tokens[models.RoleCashier]),
			Body: `{"coupon_code":"` + r.Coupon("alice") + `","order_id":"o-attack-2","order_amount_cents":5000,"user_id":"bob"}`}, 403},
		{"CashierRevokes", "POST /api/v1/coupons/:code/revoke", testsupport.Req{Method: "POST",
			Target: "/api/v1/coupons/" + r.Coupon("alice") + "/revoke", Auth: testsupport.Bearer(r.Tokens[models.RoleCashier]),
			Body: `{"return_stock":true,"reason":"x"}`}, 403},
		{"PathTraversal", "", testsupport.Req{Method: "GET", Target: "/api/v1/../../etc/passwd"}, 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.route != "" && !routes[tc.route] {
				t.Skipf("%s is not registered yet", tc.route)
			}
			r.T = t
			if a := r.Do(tc.q); a.Status != tc.want {
				t.Errorf("%s %s: %v, want %d", tc.q.Method, tc.q.Target, a, tc.want)
			}
		})
	}
}

// TestSessionAttacks tries what a page session might be abused for: a forged
// cross-site request, a copied cookie after logout, a tampered cookie.
func TestSessionAttacks(t *testing.T) {
	r := newSessionRig(t)
	if r.Sessions == nil {
		t.Skip("no page sessions yet")
	}
	claim := fmt.Sprintf("/api/v1/templates/%d/claim", r.TemplateID)
	wallet := "/api/v1/users/mia/coupons"
	key := func(k string) map[string]string { return map[string]string{"Idempotency-Key": k} }

	t.Run("OK", func(t *testing.T) {
		r.T = t
		testsupport.WantStatus(t, r.Do(testsupport.Req{Method: "POST", Target: claim, Shopper: "mia", Headers: key("s-ok")}), 201, "claim with the session")
		testsupport.WantStatus(t, r.Do(testsupport.Req{Method: "GET", Target: wallet, Shopper: "mia"}), 200, "wallet with the session")
	})
	t.Run("ErrNoCSRFToken", func(t *testing.T) {
		r.T = t
		testsupport.WantStatus(t, r.Do(testsupport.Req{Method: "POST", Target: claim, Shopper: "mia", NoCSRF: true, Headers: key("s-1")}), 403, "claim without the CSRF token")
	})
	t.Run("ErrWrongCSRFToken", func(t *testing.T) {
		r.T = t
		h := key("s-2")
		h["X-CSRF-Token"] = r.Session("mia").CSRF[:10] + "AAAA" + r.Session("mia").CSRF[14:]
		testsupport.WantStatus(t, r.Do(testsupport.Req{Method: "POST", Target: claim, Shopper: "mia", NoCSRF: true, Headers: h}), 403, "claim with a wrong CSRF token")
	})
	t.Run("ErrCrossSiteOrigin", func(t *testing.T) {
		r.T = t
		h := key("s-3")
		h["Origin"] = "https://evil.example"
		testsupport.WantStatus(t, r.Do(testsupport.Req{Method: "POST", Target: claim, Shopper: "mia", Headers: h}), 403, "claim from another origin")
	})
	t.Run("ErrTamperedCookie", func(t *testing.T) {
		r.T = t
		sess := r.Session("mia")
		hr := httptest.NewRequest("GET", wallet, nil)
		for _, c := range sess.Cookies {
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
		r.Router.ServeHTTP(rec, hr)
		if rec.Code != 401 {
			t.Fatalf("wallet with a tampered cookie: %d %s", rec.Code, rec.Body)
		}
	})
	t.Run("ErrCookieCopiedBeforeLogout", func(t *testing.T) {
		r.T = t
		copied := slices.Clone(r.Session("mia").Cookies)
		testsupport.WantStatus(t, r.Do(testsupport.Req{Method: "POST", Target: "/logout", Shopper: "mia"}), 303, "log out")
		delete(r.Sessions, "mia")
		hr := httptest.NewRequest("GET", wallet, nil)
		for _, c := range copied {
			hr.AddCookie(c)
		}
		rec := httptest.NewRecorder()
		r.Router.ServeHTTP(rec, hr)
		if rec.Code != 401 {
			t.Fatalf("wallet with a cookie copied before the logout: %d %s", rec.Code, rec.Body)
		}
	})
	t.Run("ErrOtherShoppersWallet", func(t *testing.T) {
		r.T = t
		testsupport.WantStatus(t, r.Do(testsupport.Req{Method: "GET", Target: wallet, Shopper: "noah"}), 403, "another shopper's wallet")
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
	r := testsupport.NewRig(t, handlers.Options{})
	admin := testsupport.Bearer(r.Tokens[models.RoleAdmin])
	a := r.Do(testsupport.Req{Method: "POST", Target: "/api/v1/tokens", Auth: admin, Body: `{"role":"cashier","name":"till 1"}`})
	token, _ := a.Body["token"].(string)
	if a.Status != 201 || token == "" {
		t.Fatalf("create token: %v", a)
	}
	if strings.Contains(a.Raw, sha256Hex(token)) {
		t.Fatalf("the answer shows the token's hash: %v", a)
	}
	const password = "s3cret-Passw0rd!"
	if a := r.Do(testsupport.Req{Method: "POST", Target: "/api/v1/users", Auth: admin,
		Body: `{"username":"dana","password":"` + password + `","role":"cashier"}`}); a.Status != 201 || strings.Contains(a.Raw, password) {
		t.Fatalf("create user: %v", a)
	}

	secrets := []string{token, strings.TrimPrefix(token, "cps_")[:16], password, testsupport.RigBootstrapToken}
	for _, tok := range r.Tokens {
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

// TestNoSecretsInLogs runs what handles secrets (users and tokens created,
// used, revoked, refused; logins; failures that are logged with their error)
// with every logger captured at debug level, and checks that no password and
// no token, whole or in part, appears in a log line.
func TestNoSecretsInLogs(t *testing.T) {
	var logs testsupport.LockedBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	old := slog.Default()
	slog.SetDefault(logger)
	t.Cleanup(func() { slog.SetDefault(old) })

	r := testsupport.NewRig(t, handlers.Options{Logger: logger, Limits: handlers.Limits{ClaimsPerUser: 100, ClaimsPerAddr: 100}})
	ctx := context.Background()
	secrets := []string{testsupport.RigBootstrapToken}
	for _, tok := range r.Tokens {
		secrets = append(secrets, tok)
	}
	boot := testsupport.Bearer(testsupport.RigBootstrapToken)

	passwords := map[string]string{"shopper": "shopper-pass-0042", "cashier": "cashier-pass-0042", "admin": "admin-pass-0042"}
	for role, pw := range passwords {
		secrets = append(secrets, pw)
		if a := r.Do(testsupport.Req{Method: "POST", Target: "/api/v1/users", Auth: boot,
			Body: `{"username":"log-` + role + `","password":"` + pw + `","role":"` + role + `"}`}); a.Status != 201 {
			t.Fatalf("create user: %v", a)
		}
	}
	// A refused user creation echoes nothing of its password either.
	secrets = append(secrets, "short-pw")
	r.Do(testsupport.Req{Method: "POST", Target: "/api/v1/users", Auth: boot, Body: `{"username":"log-x","password":"short-pw","role":"nobody"}`})

	var created []string
	for _, role := range []string{"admin", "cashier", "app"} {
		a := r.Do(testsupport.Req{Method: "POST", Target: "/api/v1/tokens", Auth: boot, Body: `{"role":"` + role + `","name":"log ` + role + `"}`})
		tok, _ := a.Body["token"].(string)
		if a.Status != 201 || tok == "" {
			t.Fatalf("create token: %v", a)
		}
		created = append(created, tok)
		secrets = append(secrets, tok, strings.TrimPrefix(tok, "cps_")[:12])
		r.Do(testsupport.Req{Method: "GET", Target: "/api/v1/templates", Auth: testsupport.Bearer(tok)})
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
	r.Do(testsupport.Req{Method: "GET", Target: "/api/v1/campaigns", Auth: testsupport.Bearer(created[0])})
	r.Do(testsupport.Req{Method: "GET", Target: "/api/v1/campaigns", Auth: testsupport.Bearer(flipLast(created[1]))})
	r.Do(testsupport.Req{Method: "GET", Target: "/api/v1/campaigns", Auth: "Basic " + created[2]})
	r.Do(testsupport.Req{Method: "GET", Target: "/api/v1/campaigns", Auth: created[2]})

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
		services.Config{CoreConfig: services.CoreConfig{KeyPrefix: r.Env.Prefix, Logger: logger}, AdminConfig: services.AdminConfig{BootstrapToken: testsupport.RigBootstrapToken}})
	downRouter := handlers.NewRouter(down, handlers.Options{Logger: logger, SessionPrincipal: testsupport.TestShopperSession,
		Limits: handlers.Limits{ClaimsPerUser: 5, ClaimsPerAddr: 5}})
	hr := httptest.NewRequest("POST", fmt.Sprintf("/api/v1/templates/%d/claim", r.TemplateID), strings.NewReader(`{"user_id":"u1"}`))
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Authorization", testsupport.Bearer(created[2]))
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
func loginThroughPages(t *testing.T, r *testsupport.Rig, username, password string) (seen []string) {
	t.Helper()
	var hasLogin bool
	for _, route := range r.Router.Routes() {
		hasLogin = hasLogin || route.Method == "POST" && route.Path == "/login"
	}
	if !hasLogin {
		t.Log("no POST /login yet: page logins not exercised")
		return nil
	}
	get := httptest.NewRequest("GET", "/login", nil)
	rec := httptest.NewRecorder()
	r.Router.ServeHTTP(rec, get)
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
	r.Router.ServeHTTP(rec, post)
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
