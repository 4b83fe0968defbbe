package pages_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/reports"
)

// mistype changes one character of a code, as a slip of the finger does: the
// check character always catches it.
func mistype(code string) string {
	c := 'A'
	if code[0] == 'A' {
		c = 'B'
	}
	return string(c) + code[1:]
}

// TestPagesCSRF: a form or a session API call without the CSRF token, with
// another session's token, or from another site is refused and changes
// nothing; with its own token it goes through. Bearer-token calls need none.
func TestPagesCSRF(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	e.AddUser(t, "admin2", models.RoleAdmin)
	e.AddUser(t, "alice", models.RoleShopper)
	e.AddUser(t, "bob", models.RoleShopper)
	tpl := e.Template(t, "$5 off")
	pause := fmt.Sprintf("/admin/templates/%d/status", tpl.ID)

	admin := e.Client(t)
	admin.Login("admin")
	other := e.Client(t)
	other.Login("admin2")
	otherToken := other.CSRF("/admin")

	t.Run("ErrFormWithoutToken", func(t *testing.T) {
		p := admin.Post(pause, url.Values{"status": {"paused"}})
		if p.Status != http.StatusForbidden || !strings.Contains(p.Text(), "This form has expired") {
			t.Fatalf("pause without a token: %v", p)
		}
		if s := e.TemplateStatus(t, tpl.ID); s != models.TemplateActive {
			t.Fatalf("the template is %s after a refused pause", s)
		}
	})
	t.Run("ErrFormWithAnotherSessionsToken", func(t *testing.T) {
		p := admin.Post(pause, url.Values{"status": {"paused"}, "csrf_token": {otherToken}})
		if p.Status != http.StatusForbidden {
			t.Fatalf("pause with admin2's token: %v", p)
		}
		if s := e.TemplateStatus(t, tpl.ID); s != models.TemplateActive {
			t.Fatalf("the template is %s after a refused pause", s)
		}
	})
	t.Run("ErrFormWithGarbledToken", func(t *testing.T) {
		p := admin.Post(pause, url.Values{"status": {"paused"}, "csrf_token": {"AAAA" + admin.CSRF("/admin")[4:]}})
		if p.Status != http.StatusForbidden || e.TemplateStatus(t, tpl.ID) != models.TemplateActive {
			t.Fatalf("pause with a garbled token: %v", p)
		}
	})
	t.Run("ErrFormFromAnotherSite", func(t *testing.T) {
		form := url.Values{"status": {"paused"}, "csrf_token": {admin.CSRF("/admin")}}
		req, _ := http.NewRequest("POST", e.Srv.URL+pause, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "https://evil.example")
		if p := admin.Do(req); p.Status != http.StatusForbidden || e.TemplateStatus(t, tpl.ID) != models.TemplateActive {
			t.Fatalf("pause from another origin: %v", p)
		}
	})
	t.Run("ErrLoginWithoutToken", func(t *testing.T) {
		c := e.Client(t)
		c.Get("/login") // the CSRF cookie, but no token in the form
		p := c.Post("/login", url.Values{"username": {"admin"}, "password": {e.Passwords["admin"]}})
		if p.Status != http.StatusForbidden {
			t.Fatalf("login without a token: %v", p)
		}
		if p := c.Get("/admin"); p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Location(), "/login") {
			t.Fatalf("after a refused login /admin answers %v", p)
		}
	})
	t.Run("ErrLogoutWithoutToken", func(t *testing.T) {
		if p := admin.Post("/logout", url.Values{}); p.Status != http.StatusForbidden {
			t.Fatalf("logout without a token: %v", p)
		}
		if p := admin.Get("/admin"); p.Status != http.StatusOK {
			t.Fatalf("the admin was logged out by a forged request: %v", p)
		}
	})
	t.Run("OK", func(t *testing.T) {
		p := admin.Form("/admin", pause, url.Values{"status": {"paused"}, "return": {"/admin"}})
		if p.Status != http.StatusSeeOther || p.Location() != "/admin" {
			t.Fatalf("pause with the page's token: %v", p)
		}
		if s := e.TemplateStatus(t, tpl.ID); s != models.TemplatePaused {
			t.Fatalf("the template is %s, want paused", s)
		}
		if p := admin.Get("/admin"); !strings.Contains(p.Text(), "Paused “$5 off your order”") {
			t.Fatalf("no word of the pause after the redirect: %v", p)
		}
		admin.Form("/admin", pause, url.Values{"status": {"active"}})
	})

	threshold := e.Template(t, "$10 off orders")
	claimPath := fmt.Sprintf("/api/v1/templates/%d/claim", threshold.ID)
	alice := e.Client(t)
	alice.Login("alice")
	bob := e.Client(t)
	bob.Login("bob")
	t.Run("ErrAPIWithSessionWithoutToken", func(t *testing.T) {
		p := alice.API("POST", claimPath, "", map[string]string{"Idempotency-Key": "k-no-token"})
		if p.Status != http.StatusForbidden || !strings.Contains(p.Body, `"forbidden"`) || !strings.Contains(p.Body, "X-CSRF-Token") {
			t.Fatalf("claim with the session and no token: %v", p)
		}
		if n := e.CountCoupons(t); n != 0 {
			t.Fatalf("%d coupons after a refused claim", n)
		}
	})
	t.Run("ErrAPIWithAnotherSessionsToken", func(t *testing.T) {
		p := alice.API("POST", claimPath, bob.CSRF("/"), map[string]string{"Idempotency-Key": "k-bobs-token"})
		if p.Status != http.StatusForbidden || e.CountCoupons(t) != 0 {
			t.Fatalf("claim with bob's token: %v", p)
		}
	})
	t.Run("APIWithToken", func(t *testing.T) {
		p := alice.Claim(threshold.ID, "k-alice-1")
		if p.Status != http.StatusCreated || !strings.Contains(p.Body, `"claimed"`) {
			t.Fatalf("claim with the page's token: %v", p)
		}
		if cs := e.UserCoupons(t, "alice"); len(cs) != 1 {
			t.Fatalf("alice holds %d coupons, want 1", len(cs))
		}
		// A read needs no token.
		if p := alice.API("GET", "/api/v1/templates", "", nil); p.Status != http.StatusOK {
			t.Fatalf("list templates with the session: %v", p)
		}
	})
	t.Run("BearerTokenNeedsNone", func(t *testing.T) {
		token, _, err := e.Service.CreateToken(context.Background(), "test", models.RoleApp, "shop backend")
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("POST", e.Srv.URL+claimPath, strings.NewReader(`{"user_id":"carol"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "k-carol")
		p := e.Client(t).Do(req)
		if p.Status != http.StatusCreated {
			t.Fatalf("claim with an app token: %v", p)
		}
	})
	t.Run("ErrRedeemWithoutToken", func(t *testing.T) {
		cashier := e.Client(t)
		cashier.Login("cashier")
		code := e.UserCoupons(t, "alice")[0].Code
		p := cashier.Post("/pos/redeem", url.Values{"code": {code}, "order_id": {"X-1"}, "amount": {"80"}})
		if p.Status != http.StatusForbidden || e.CouponStatus(t, code) != models.CouponIssued {
			t.Fatalf("redeem without a token: %v", p)
		}
	})
}

// TestPagesLoggedOut: after logout the session is over on the server, so a
// copy of its cookies (and its CSRF token) cannot act any more.
func TestPagesLoggedOut(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	tpl := e.Template(t, "$5 off")

	admin := e.Client(t)
	admin.Login("admin")
	adminToken := admin.CSRF("/admin")
	adminCookies := admin.Cookies()
	shopper := e.Client(t)
	shopper.Login("shopper")
	shopperToken := shopper.CSRF("/")
	shopperCookies := shopper.Cookies()

	for _, c := range []*testsupport.PageClient{admin, shopper} {
		p := c.Form("/logout", "/logout", url.Values{})
		if p.Status != http.StatusSeeOther || p.Location() != "/login?bye=1" {
			t.Fatalf("logout: %v", p)
		}
		if p := c.Get("/login?bye=1"); !strings.Contains(p.Text(), "You have logged out") {
			t.Fatalf("the login page does not say so: %v", p)
		}
	}
	// The same browser: its cookies are gone.
	if p := admin.Get("/admin"); p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Location(), "/login") {
		t.Fatalf("/admin after logout: %v", p)
	}

	// A copy of the cookies taken before the logout (a stolen cookie, a
	// second tab restored from disk).
	replay := func(cookies []*http.Cookie) *testsupport.PageClient {
		c := e.Client(t)
		jar, _ := cookiejar.New(nil)
		u, _ := url.Parse(e.Srv.URL)
		jar.SetCookies(u, cookies)
		c.HTTP.Jar = jar
		return c
	}
	oldAdmin := replay(adminCookies)
	p := oldAdmin.Post(fmt.Sprintf("/admin/templates/%d/status", tpl.ID), url.Values{"status": {"paused"}, "csrf_token": {adminToken}})
	if p.Status != http.StatusSeeOther || p.Location() != "/login" {
		t.Fatalf("pause with the cookies of a logged-out session: %v", p)
	}
	if s := e.TemplateStatus(t, tpl.ID); s != models.TemplateActive {
		t.Fatalf("a logged-out session paused the template (%s)", s)
	}
	if p := oldAdmin.Get("/admin"); p.Status != http.StatusSeeOther {
		t.Fatalf("/admin with the cookies of a logged-out session: %v", p)
	}

	oldShopper := replay(shopperCookies)
	p = oldShopper.API("POST", fmt.Sprintf("/api/v1/templates/%d/claim", tpl.ID), shopperToken, map[string]string{"Idempotency-Key": "k-after-logout"})
	if p.Status != http.StatusUnauthorized {
		t.Fatalf("claim with the cookies of a logged-out session: %v", p)
	}
	if p := oldShopper.Get("/wallet"); p.Status != http.StatusSeeOther {
		t.Fatalf("/wallet with the cookies of a logged-out session: %v", p)
	}
	if n := e.CountCoupons(t); n != 0 {
		t.Fatalf("%d coupons claimed by a logged-out session", n)
	}

	// A cookie from another key (or tampered with) is no session either.
	forged := replay([]*http.Cookie{{Name: "couponsvc_session", Value: "MTIzNDU2Nzg5MHxhYmNkZWY="}})
	if p := forged.Get("/wallet"); p.Status != http.StatusSeeOther {
		t.Fatalf("/wallet with a forged cookie: %v", p)
	}
}

// TestPagesWalletIsolation: the wallet is the logged-in shopper's own; no id
// in the address or the query shows another one's.
func TestPagesWalletIsolation(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	e.AddUser(t, "alice", models.RoleShopper)
	e.AddUser(t, "bob", models.RoleShopper)
	tpl := e.Template(t, "$5 off")
	alice := e.Client(t)
	alice.Login("alice")
	if p := alice.Claim(tpl.ID, "k-alice"); p.Status != http.StatusCreated {
		t.Fatalf("alice's claim: %v", p)
	}
	code := e.UserCoupons(t, "alice")[0].Code
	grouped := code[:4] + "-" + code[4:8] + "-" + code[8:]
	if p := alice.Get("/wallet"); !strings.Contains(p.Body, grouped) {
		t.Fatalf("alice's wallet lacks her coupon: %v", p)
	}

	bob := e.Client(t)
	bob.Login("bob")
	for _, path := range []string{"/wallet", "/wallet?user_id=alice", "/wallet?user=alice&username=alice", "/wallet/alice", "/wallet/../wallet?id=alice"} {
		p := bob.Get(path)
		if strings.Contains(p.Body, code) || strings.Contains(p.Body, grouped) {
			t.Errorf("bob sees alice's code at %s", path)
		}
		if p.Status == http.StatusOK && !strings.Contains(p.Text(), "Your wallet is empty") {
			t.Errorf("bob's wallet at %s is not his empty one: %v", path, p)
		}
	}
	if p := bob.API("GET", "/api/v1/users/alice/coupons", "", nil); p.Status != http.StatusForbidden && p.Status != http.StatusNotFound {
		t.Errorf("bob reads alice's coupons through the API: %v", p)
	}
	if p := bob.Claim(tpl.ID, "k-alice"); p.Status == http.StatusOK || p.Status == http.StatusCreated {
		t.Errorf("bob replays alice's idempotency key and gets %v", p)
	}
	if n := len(e.UserCoupons(t, "bob")); n != 0 {
		t.Errorf("bob holds %d coupons", n)
	}
}

// TestPagesRoles: every page and action checks the role.
func TestPagesRoles(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	tpl := e.Template(t, "$5 off")
	coupon := e.ClaimFor(t, tpl.ID, "shopper")
	clients := map[string]*testsupport.PageClient{"": e.Client(t)}
	for _, who := range []string{"shopper", "cashier", "admin"} {
		clients[who] = e.Client(t)
		clients[who].Login(who)
	}
	gets := []struct {
		path string
		ok   string // the role that gets 200; "*" everyone
	}{
		{"/", "*"},
		{"/login", ""},
		{"/wallet", "shopper"},
		{"/pos", "cashier"},
		{"/admin", "admin"},
		{"/admin/templates/new", "admin"},
		{"/admin/campaigns/new", "admin"},
		{fmt.Sprintf("/admin/templates/%d", tpl.ID), "admin"},
		{"/admin/coupons?code=" + coupon.Code, "admin"},
		{"/admin/reconcile?run=1", "admin"},
		{"/admin/audit", "admin"},
	}
	for _, g := range gets {
		for who, c := range clients {
			p := c.Get(g.path)
			switch {
			case g.ok == "*" || g.ok == who:
				if p.Status != http.StatusOK {
					t.Errorf("GET %s as %q: %d, want 200", g.path, who, p.Status)
				}
			case g.path == "/login":
				if p.Status != http.StatusSeeOther {
					t.Errorf("GET /login as %q: %d, want 303 to their page", who, p.Status)
				}
			case who == "":
				if p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Location(), "/login?next=") {
					t.Errorf("GET %s anonymous: %v, want 303 to /login?next=", g.path, p)
				}
			default:
				if p.Status != http.StatusForbidden || !strings.Contains(p.Text(), "Not for your account") {
					t.Errorf("GET %s as %s: %v, want 403", g.path, who, p)
				}
			}
		}
	}
	// Actions with a valid token but the wrong role change nothing.
	posts := []struct {
		path string
		form url.Values
		ok   string
	}{
		{"/pos/redeem", url.Values{"code": {coupon.Code}, "order_id": {"R-1"}, "amount": {"50"}}, "cashier"},
		{"/pos/refund", url.Values{"code": {coupon.Code}, "order_id": {"R-1"}}, "cashier"},
		{fmt.Sprintf("/admin/templates/%d/status", tpl.ID), url.Values{"status": {"paused"}}, "admin"},
		{fmt.Sprintf("/admin/templates/%d/stock", tpl.ID), url.Values{"delta": {"5"}, "reason": {"role test"}}, "admin"},
		{"/admin/coupons/revoke", url.Values{"code": {coupon.Code}, "public_reason": {"other"}, "reason": {"role test"}}, "admin"},
		{"/admin/campaigns", url.Values{"name": {"Role test"}}, "admin"},
	}
	for _, q := range posts {
		for _, who := range []string{"shopper", "cashier", "admin"} {
			if who == q.ok {
				continue
			}
			form := url.Values{}
			for k, v := range q.form {
				form[k] = v
			}
			p := clients[who].Form("/", q.path, form)
			if p.Status != http.StatusForbidden {
				t.Errorf("POST %s as %s: %v, want 403", q.path, who, p)
			}
		}
	}
	if s := e.CouponStatus(t, coupon.Code); s != models.CouponIssued {
		t.Errorf("the coupon is %s after refused actions", s)
	}
	if tp, _ := e.Service.GetTemplate(context.Background(), tpl.ID); tp.Status != models.TemplateActive || tp.TotalStock != tpl.TotalStock {
		t.Errorf("the template changed after refused actions: %+v", tp)
	}
	if camps, _ := e.Service.ListCampaigns(context.Background()); len(camps) != 1 {
		t.Errorf("%d campaigns after refused actions", len(camps))
	}
	// The claim API takes only a shopper's session.
	for _, who := range []string{"cashier", "admin"} {
		c := clients[who]
		if p := c.API("POST", fmt.Sprintf("/api/v1/templates/%d/claim", tpl.ID), c.CSRF("/"), map[string]string{"Idempotency-Key": "k-" + who}); p.Status != http.StatusForbidden {
			t.Errorf("claim as %s: %v, want 403", who, p)
		}
	}
}

// TestPagesSecurityHeaders: the headers and cookies of the pages, and pages
// that need nothing from elsewhere and run no inline script.
func TestPagesSecurityHeaders(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	c := e.Client(t)
	c.Login("admin")
	inline := regexp.MustCompile(`<script\b[^>]*>\s*[^<\s]|\son[a-z]+\s*=|\sstyle\s*=|javascript:`)
	external := regexp.MustCompile(`(?i)(src|href|action)\s*=\s*"(https?:)?//`)
	for _, path := range []string{"/", "/login", "/admin", "/admin/templates/new", fmt.Sprintf("/admin/templates/%d", e.Demo.Templates[0].ID),
		"/admin/reconcile?run=1", "/no-such-page"} {
		p := c.Get(path)
		h := p.Header
		csp := h.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "object-src 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe") {
			t.Errorf("%s: CSP allows unsafe sources: %q", path, csp)
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: X-Content-Type-Options %q, X-Frame-Options %q", path, h.Get("X-Content-Type-Options"), h.Get("X-Frame-Options"))
		}
		if !strings.Contains(h.Get("Content-Type"), "text/html") {
			t.Errorf("%s: content type %q", path, h.Get("Content-Type"))
		}
		if m := inline.FindString(p.Body); m != "" {
			t.Errorf("%s: inline script or style: %q", path, m)
		}
		if m := external.FindString(p.Body); m != "" {
			t.Errorf("%s: refers to another site: %q", path, m)
		}
	}
	for _, asset := range []string{"/static/app.css", "/static/app.js", "/static/favicon.svg"} {
		p := c.Get(asset)
		if p.Status != http.StatusOK || p.Header.Get("X-Content-Type-Options") != "nosniff" || p.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("%s: %d, headers %v", asset, p.Status, p.Header)
		}
	}

	// Cookies: HttpOnly and SameSite=Lax; Secure when the browser came over TLS.
	check := func(proto string, wantSecure bool) {
		t.Helper()
		jar, _ := cookiejar.New(nil)
		cl := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		get, _ := http.NewRequest("GET", e.Srv.URL+"/login", nil)
		if proto != "" {
			get.Header.Set("X-Forwarded-Proto", proto)
		}
		res, err := cl.Do(get)
		if err != nil {
			t.Fatal(err)
		}
		var token string
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if m := testsupport.CSRFMeta.FindStringSubmatch(string(body)); m != nil {
			token = html.UnescapeString(m[1])
		}
		form := url.Values{"csrf_token": {token}, "username": {"shopper"}, "password": {e.Passwords["shopper"]}}
		post, _ := http.NewRequest("POST", e.Srv.URL+"/login", strings.NewReader(form.Encode()))
		post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if proto != "" {
			post.Header.Set("X-Forwarded-Proto", proto)
			post.Header.Set("Referer", "https://"+strings.TrimPrefix(e.Srv.URL, "http://")+"/login")
		} else {
			post.Header.Set("Origin", e.Srv.URL)
		}
		res, err = cl.Do(post)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("login over %q: %d", proto, res.StatusCode)
		}
		var found bool
		for _, ck := range res.Cookies() {
			if ck.Name != "couponsvc_session" {
				continue
			}
			found = true
			if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Secure != wantSecure {
				t.Errorf("over %q the session cookie is HttpOnly=%v SameSite=%v Secure=%v", proto, ck.HttpOnly, ck.SameSite, ck.Secure)
			}
			if strings.Contains(ck.Value, "shopper") {
				t.Errorf("the session cookie shows who is logged in: %q", ck.Value)
			}
		}
		if !found {
			t.Errorf("over %q the login set no session cookie", proto)
		}
	}
	check("", false)
	check("https", true)
}

// TestPagesLoginLimit: wrong passwords are limited per account and address;
// while an account is limited at an address even the right password from
// there waits, and other accounts are not held up.
func TestPagesLoginLimit(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	c := e.Client(t)
	for i := range 10 {
		token := c.CSRF("/login")
		p := c.Post("/login", url.Values{"csrf_token": {token}, "username": {"cashier"}, "password": {"wrong password"}})
		if p.Status != http.StatusUnauthorized || !strings.Contains(p.Text(), "Wrong username or password") {
			t.Fatalf("wrong password %d: %v", i+1, p)
		}
		if !strings.Contains(p.Body, `value="cashier"`) {
			t.Fatalf("the login form lost the username")
		}
	}
	token := c.CSRF("/login")
	p := c.Post("/login", url.Values{"csrf_token": {token}, "username": {"cashier"}, "password": {e.Passwords["cashier"]}})
	if p.Status != http.StatusTooManyRequests || !strings.Contains(p.Text(), "Too many login attempts") || p.Header.Get("Retry-After") == "" {
		t.Fatalf("the 11th attempt: %v", p)
	}
	if p := c.Get("/pos"); p.Status != http.StatusSeeOther {
		t.Fatalf("the limited login went through: %v", p)
	}
	other := e.Client(t)
	other.Login("admin")
	// Unknown accounts are limited too (no hint of which exist).
	for range 10 {
		c.Post("/login", url.Values{"csrf_token": {c.CSRF("/login")}, "username": {"nobody"}, "password": {"x"}})
	}
	p = c.Post("/login", url.Values{"csrf_token": {c.CSRF("/login")}, "username": {"nobody"}, "password": {"x"}})
	if p.Status != http.StatusTooManyRequests {
		t.Fatalf("an unknown account is not limited: %v", p)
	}
}

// TestPagesAdminForms: forms come back with the error beside the field and
// what was typed; a successful POST redirects (PRG).
func TestPagesAdminForms(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	admin := e.Client(t)
	admin.Login("admin")
	countTemplates := func() int {
		ts, err := e.Service.ListTemplates(context.Background(), false)
		if err != nil {
			t.Fatal(err)
		}
		return len(ts)
	}
	base := url.Values{"campaign_id": {fmt.Sprint(e.Demo.Campaign.ID)}, "name": {"Form test"}, "kind": {"percent"},
		"percent_off": {"20"}, "max_discount": {"7.50"}, "min_order": {"$1,000.00"}, "total_stock": {"50"},
		"per_user_limit": {"2"}, "validity": {"days"}, "valid_days": {"10"}, "refund_policy": {"recycle"},
		"face_value": {"3.00"}, "claim_starts_at": {"2026-01-01T09:00"}}
	with := func(k, v string) url.Values {
		f := url.Values{}
		for key, vals := range base {
			f[key] = vals
		}
		f.Set(k, v)
		return f
	}
	fieldError := func(body, id string) string {
		m := regexp.MustCompile(`(?s)id="` + id + `".*?<p class="field-error"[^>]*>([^<]*)</p>`).FindStringSubmatch(body)
		if m == nil {
			return ""
		}
		return m[1]
	}
	before := countTemplates()
	for _, tc := range []struct {
		field, value, id, want string
	}{
		{"total_stock", "0", "total_stock", "from 1 to 10,000,000"},
		{"total_stock", "lots", "total_stock", "Enter a whole number"},
		{"percent_off", "150", "percent_off", "from 1 to 100"},
		{"max_discount", "abc", "max_discount", "Enter an amount"},
		{"name", "", "name", "Enter a name"},
		{"valid_days", "0", "valid_days", "from 1 to 3,650"},
		{"claim_ends_at", "2025-01-01T09:00", "claim_ends_at", "close after they open"},
		{"campaign_id", "", "campaign_id", "Choose a campaign"},
		{"campaign_id", "999", "campaign_id", "Choose a campaign"},
	} {
		p := admin.Form("/admin/templates/new", "/admin/templates", with(tc.field, tc.value))
		if p.Status < 400 || p.Status >= 500 {
			t.Errorf("%s=%q: status %d, want a 4xx", tc.field, tc.value, p.Status)
		}
		if got := fieldError(p.Body, tc.id); !strings.Contains(got, tc.want) {
			t.Errorf("%s=%q: the error beside %s is %q, want %q", tc.field, tc.value, tc.id, got, tc.want)
		}
		if !strings.Contains(p.Body, `value="Form test"`) && tc.field != "name" {
			t.Errorf("%s=%q: the form lost the name typed", tc.field, tc.value)
		}
		if n := countTemplates(); n != before {
			t.Fatalf("%s=%q: a template was created", tc.field, tc.value)
		}
	}
	p := admin.Form("/admin/templates/new", "/admin/templates", base)
	if p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Location(), "/admin/templates/") {
		t.Fatalf("a valid template: %v", p)
	}
	var created models.Template
	if err := e.Backends.DB.Where("name = ?", "Form test").First(&created).Error; err != nil {
		t.Fatal(err)
	}
	// The fixed amount typed before switching to percent does not count.
	if created.Kind != models.KindPercent || created.PercentOff != 20 || created.MaxDiscountCents != 750 ||
		created.MinOrderCents != 100000 || created.FaceValueCents != 0 || created.RefundPolicy != models.RefundRecycle ||
		created.ClaimStartsAt.Format("2006-01-02 15:04") != "2026-01-01 09:00" {
		t.Fatalf("created %+v", created)
	}
	if p := admin.Get(p.Location()); !strings.Contains(p.Text(), "Created “Form test”.") {
		t.Fatalf("no word of the creation: %v", p)
	}

	// Edit, with an error first.
	edit := fmt.Sprintf("/admin/templates/%d", created.ID)
	p = admin.Form(edit, edit, url.Values{"name": {strings.Repeat("x", 101)}, "claim_starts_at": {"2026-01-01T09:00"}})
	if p.Status != http.StatusBadRequest || !strings.Contains(fieldError(p.Body, "edit-name"), "1 to 100 characters") {
		t.Fatalf("edit with a long name: %v", p)
	}
	p = admin.Form(edit, edit, url.Values{"name": {"Form test, renamed"}, "description": {"new words"}, "claim_starts_at": {"2026-01-01T09:00"}})
	if p.Status != http.StatusSeeOther {
		t.Fatalf("edit: %v", p)
	}
	if tp, _ := e.Service.GetTemplate(context.Background(), created.ID); tp.Name != "Form test, renamed" || tp.Description != "new words" {
		t.Fatalf("after the edit: %+v", tp)
	}

	// Stock.
	stock := edit + "/stock"
	p = admin.Form(edit, stock, url.Values{"delta": {"0"}, "reason": {""}})
	if p.Status != http.StatusBadRequest || fieldError(p.Body, "stock-delta") == "" || fieldError(p.Body, "stock-reason") == "" {
		t.Fatalf("stock 0 without a reason: %v", p)
	}
	p = admin.Form(edit, stock, url.Values{"delta": {"25"}, "reason": {"restock"}})
	if p.Status != http.StatusSeeOther {
		t.Fatalf("add stock: %v", p)
	}
	if tp, _ := e.Service.GetTemplate(context.Background(), created.ID); tp.TotalStock != 75 {
		t.Fatalf("stock %d after adding 25 to 50", tp.TotalStock)
	}

	// Campaigns.
	p = admin.Form("/admin/campaigns/new", "/admin/campaigns", url.Values{"name": {""}, "budget": {"lots"}})
	if p.Status != http.StatusBadRequest || fieldError(p.Body, "budget") == "" {
		t.Fatalf("a campaign with a bad budget: %v", p)
	}
	p = admin.Form("/admin/campaigns/new", "/admin/campaigns", url.Values{"name": {""}, "budget": {""}})
	if p.Status != http.StatusBadRequest || fieldError(p.Body, "name") == "" {
		t.Fatalf("a campaign without a name: %v", p)
	}
	p = admin.Form("/admin/campaigns/new", "/admin/campaigns", url.Values{"name": {"Autumn"}, "budget": {"2,500.00"}})
	if p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Location(), "/admin/templates/new?campaign=") {
		t.Fatalf("a campaign: %v", p)
	}

	// Revoke.
	coupon := e.ClaimFor(t, created.ID, "victim")
	p = admin.Form("/admin/coupons", "/admin/coupons/revoke", url.Values{"code": {mistype(coupon.Code)}, "public_reason": {"other"}, "reason": {"x"}})
	if p.Status != http.StatusBadRequest || !strings.Contains(fieldError(p.Body, "revoke-code"), "mistyped") {
		t.Fatalf("revoke a mistyped code: %v", p)
	}
	p = admin.Form("/admin/coupons", "/admin/coupons/revoke", url.Values{"code": {coupon.Code}, "public_reason": {"fraud_suspected"}, "reason": {"shared on a forum"}, "return_stock": {"1"}})
	if p.Status != http.StatusSeeOther {
		t.Fatalf("revoke: %v", p)
	}
	if s := e.CouponStatus(t, coupon.Code); s != models.CouponRevoked {
		t.Fatalf("the coupon is %s after the revoke", s)
	}
	if p := admin.Get(p.Location()); !strings.Contains(p.Text(), "Its stock went back to the pool") {
		t.Fatalf("no word of the revoke: %v", p)
	}
	if p := admin.Get("/admin/audit"); !strings.Contains(p.Text(), "shared on a forum") || !strings.Contains(p.Text(), "restock") {
		t.Fatalf("the audit log lacks the reasons: %v", p)
	}
}

// TestCreateOnTemplateForms: the forms posted on a template that make
// something (stock, codes, coupons for a list) act once per form token: the
// same filling sent again goes where the first went and makes nothing more;
// an address without a template id answers 404 and makes nothing.
func TestCreateOnTemplateForms(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	admin := e.Client(t)
	admin.Login("admin")
	tp := e.Template(t, "$5 off")
	stock0 := e.GetTemplate(t, tp.ID).TotalStock
	page := fmt.Sprintf("/admin/templates/%d", tp.ID)
	jobs := page + "/jobs"
	const token = "0123456789abcdef0123456789abcdef"
	// made counts the jobs and reads the stock: what the forms make.
	made := func() (int64, int64) {
		t.Helper()
		return countRows(t, e, &models.Job{}), e.GetTemplate(t, tp.ID).TotalStock
	}

	for _, tc := range []struct {
		name, from, to string
		form           url.Values
		// wantTo is where the first post goes ("" for the job's page);
		// wantSaid what that page says.
		wantTo, wantSaid string
		wantJobs         int64
		wantStock        int64
	}{
		{name: "stock", from: page, to: page + "/stock", form: url.Values{"delta": {"5"}, "reason": {"restock"}},
			wantTo: page, wantSaid: fmt.Sprintf("Added 5 to “%s”: the stock is now %d.", tp.Name, stock0+5),
			wantJobs: 0, wantStock: stock0 + 5},
		{name: "codes", from: jobs, to: page + "/codes", form: url.Values{"count": {"3"}, "pattern": {""}},
			wantSaid: "Making 3 codes: job %d is queued.", wantJobs: 1, wantStock: stock0 + 5},
		{name: "issue", from: jobs, to: page + "/issue", form: url.Values{"user_ids": {"ann\nbob"}},
			wantSaid: "Issuing to 2 users: job %d is queued.", wantJobs: 2, wantStock: stock0 + 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.form.Set("form_token", token)
			first := admin.Form(tc.from, tc.to, tc.form)
			if first.Status != http.StatusSeeOther {
				t.Fatalf("first post: %v", first)
			}
			to, said := tc.wantTo, tc.wantSaid
			if to == "" {
				var id int64
				if _, err := fmt.Sscanf(first.Location(), "/admin/jobs/%d", &id); err != nil {
					t.Fatalf("the first post went to %q, not a job's page", first.Location())
				}
				to, said = first.Location(), fmt.Sprintf(tc.wantSaid, id)
			}
			if first.Location() != to {
				t.Fatalf("the first post went to %q, want %q", first.Location(), to)
			}
			if p := admin.Get(to); !strings.Contains(p.Text(), said) {
				t.Fatalf("the page after the first post does not say %q: %v", said, p)
			}
			again := admin.Form(tc.from, tc.to, tc.form)
			if again.Status != http.StatusSeeOther || again.Location() != to {
				t.Fatalf("the same filling again: %v, want a 303 to %s", again, to)
			}
			if p := admin.Get(to); !strings.Contains(p.Text(), "Already created") {
				t.Fatalf("the page after the second post does not say it was done already: %v", p)
			}
			if n, s := made(); n != tc.wantJobs || s != tc.wantStock {
				t.Fatalf("%d jobs and a stock of %d, want %d and %d", n, s, tc.wantJobs, tc.wantStock)
			}
		})
	}

	t.Run("no template id", func(t *testing.T) {
		for _, to := range []string{"/admin/templates/0/stock", "/admin/templates/x/codes", "/admin/templates/-1/issue"} {
			p := admin.Form(page, to, url.Values{"delta": {"5"}, "reason": {"restock"}, "count": {"3"}, "user_ids": {"ann"}})
			if p.Status != http.StatusNotFound || !strings.Contains(p.Text(), "There is no template at this address.") {
				t.Errorf("POST %s: %v, want the not-found page", to, p)
			}
		}
		if n, s := made(); n != 2 || s != stock0+5 {
			t.Fatalf("%d jobs and a stock of %d after posts to no template, want 2 and %d", n, s, stock0+5)
		}
	})
}

// TestPagesCheckout: the cashier's answers in words, straight at the redeem
// and refund actions.
func TestPagesCheckout(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	threshold := e.Template(t, "$10 off orders")
	coupon := e.ClaimFor(t, threshold.ID, "shopper")
	cashier := e.Client(t)
	cashier.Login("cashier")
	redeem := func(code, order, amount string) testsupport.Page {
		return cashier.Form("/pos", "/pos/redeem", url.Values{"code": {code}, "order_id": {order}, "amount": {amount}})
	}
	for _, tc := range []struct {
		name, code, order, amount string
		status                    int
		want                      string
	}{
		{"ErrBelowMinimum", coupon.Code, "B-1", "49.99", 422, "Below the minimum: this coupon needs an order of at least $50.00."},
		{"ErrMistypedCode", mistype(coupon.Code), "B-1", "60", 400, "a character is mistyped"},
		{"ErrShortCode", "ABCD-EFGH-JKLM", "B-1", "60", 400, "This is not a coupon code: it has 12 characters"},
		{"ErrUnknownCode", models.NewCouponCode(), "B-1", "60", 404, "No coupon has this code."},
		{"ErrNoOrder", coupon.Code, "", "60", 400, "Enter the order number."},
		{"ErrOrderWithSpace", coupon.Code, "B 1", "60", 400, "no spaces"},
		{"ErrAmount", coupon.Code, "B-1", "sixty", 400, "Enter an amount"},
		{"ErrZeroAmount", coupon.Code, "B-1", "0", 400, "more than zero"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := redeem(tc.code, tc.order, tc.amount)
			if p.Status != tc.status || !strings.Contains(p.Text(), tc.want) {
				t.Fatalf("%v, want %d and %q", p, tc.status, tc.want)
			}
			if s := e.CouponStatus(t, coupon.Code); s != models.CouponIssued {
				t.Fatalf("the coupon is %s", s)
			}
		})
	}
	p := redeem(coupon.Code, "B-1", "60")
	// The sale keeps its number and total until "Next customer".
	if p.Status != http.StatusSeeOther || p.Location() != "/pos?amount=60&order_id=B-1" {
		t.Fatalf("redeem: %v", p)
	}
	if p := cashier.Get("/pos"); !strings.Contains(p.Text(), "Redeemed on order B-1: $10.00 off, the customer pays $50.00.") {
		t.Fatalf("no word of the redemption: %v", p)
	}
	if p := redeem(coupon.Code, "B-1", "60"); p.Status != http.StatusSeeOther {
		t.Fatalf("the same redemption again: %v", p)
	} else if p := cashier.Get("/pos"); !strings.Contains(p.Text(), "Already redeemed on order B-1 (nothing changed)") {
		t.Fatalf("no word of the replay: %v", p)
	}
	p = redeem(coupon.Code, "B-2", "60")
	if p.Status != http.StatusConflict || !strings.Contains(p.Text(), "Already used on order B-1 at") {
		t.Fatalf("redeem on another order: %v", p)
	}
	p = cashier.Form("/pos", "/pos/refund", url.Values{"code": {coupon.Code}, "order_id": {"B-9"}})
	if p.Status != http.StatusConflict || !strings.Contains(p.Text(), "Order B-9 does not hold this coupon") {
		t.Fatalf("refund of another order: %v", p)
	}
	p = cashier.Form("/pos", "/pos/refund", url.Values{"code": {coupon.Code}, "order_id": {"B-1"}})
	if p.Status != http.StatusSeeOther {
		t.Fatalf("refund: %v", p)
	}
	if s := e.CouponStatus(t, coupon.Code); s != models.CouponIssued {
		t.Fatalf("after the refund the coupon is %s", s)
	}
	if p := cashier.Get("/pos"); !strings.Contains(p.Text(), "Refunded order B-1: the coupon is back in the customer's wallet.") ||
		!strings.Contains(p.Text(), "Refunded") {
		t.Fatalf("no word of the refund: %v", p)
	}
}

// TestTemplateStatsAPI: GET /api/v1/templates/:id/stats, for admins.
func TestTemplateStatsAPI(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	tpl := e.Template(t, "$5 off")
	for i := range 3 {
		e.ClaimFor(t, tpl.ID, fmt.Sprint("u", i))
	}
	token, _, err := e.Service.CreateToken(context.Background(), "test", models.RoleAdmin, "stats")
	if err != nil {
		t.Fatal(err)
	}
	get := func(path, auth string) testsupport.Page {
		req, _ := http.NewRequest("GET", e.Srv.URL+path, nil)
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		return e.Client(t).Do(req)
	}
	p := get(fmt.Sprintf("/api/v1/templates/%d/stats?hours=48", tpl.ID), token)
	var body struct {
		Result string                `json:"result"`
		Stats  reports.TemplateStats `json:"stats"`
	}
	if p.Status != http.StatusOK || json.Unmarshal([]byte(p.Body), &body) != nil {
		t.Fatalf("stats: %v", p)
	}
	if body.Stats.Claimed != 3 || body.Stats.Remaining == nil || *body.Stats.Remaining != tpl.TotalStock-3 || len(body.Stats.Hours) != 48 ||
		body.Stats.Hours[47].Claims != 3 {
		t.Fatalf("stats: %+v", body.Stats)
	}
	for _, tc := range []struct {
		path, auth string
		want       int
	}{
		{fmt.Sprintf("/api/v1/templates/%d/stats", tpl.ID), "", 401},
		{fmt.Sprintf("/api/v1/templates/%d/stats?hours=0", tpl.ID), token, 400},
		{fmt.Sprintf("/api/v1/templates/%d/stats?hours=169", tpl.ID), token, 400},
		{"/api/v1/templates/999/stats", token, 404},
		{"/api/v1/templates/x/stats", token, 400},
	} {
		if p := get(tc.path, tc.auth); p.Status != tc.want {
			t.Errorf("%s: %v, want %d", tc.path, p, tc.want)
		}
	}
	shopper := e.Client(t)
	shopper.Login("shopper")
	if p := shopper.API("GET", fmt.Sprintf("/api/v1/templates/%d/stats", tpl.ID), "", nil); p.Status != http.StatusForbidden {
		t.Errorf("stats as a shopper: %v", p)
	}
}

// TestTemplatePageHistoryPages: a template's page shows its newest 50 audit
// entries, none of another template's, with a link to the older ones; the
// older page ends with the creation and links back to the newest.
func TestTemplatePageHistoryPages(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	ctx := context.Background()
	tp, other := e.Demo.Templates[0], e.Demo.Templates[len(e.Demo.Templates)-1]
	for i := 1; i <= 55; i++ {
		if _, err := e.Service.AddStock(ctx, "test", tp.ID, 1, fmt.Sprintf("restock number %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Service.AddStock(ctx, "test", other.ID, 1, "the other template"); err != nil {
		t.Fatal(err)
	}
	admin := e.Client(t)
	admin.Login("admin")
	history := regexp.MustCompile(`(?s)<h2>History</h2>(.*?)</section>`)
	entries := regexp.MustCompile(`<li data-audit="`)
	older := regexp.MustCompile(`href="\?hours=24&amp;before=(\d+)" rel="next">Older</a>`)

	p := admin.Get(fmt.Sprintf("/admin/templates/%d", tp.ID))
	m := history.FindStringSubmatch(p.Body)
	if p.Status != http.StatusOK || m == nil {
		t.Fatalf("the template page: %d, history %v", p.Status, m != nil)
	}
	if n := len(entries.FindAllString(m[1], -1)); n != 50 {
		t.Errorf("the first page shows %d entries, want 50", n)
	}
	if !strings.Contains(m[1], "restock number 55") || strings.Contains(m[1], "restock number 5&#34;") ||
		strings.Contains(m[1], "the other template") || strings.Contains(m[1], "Newest") {
		t.Errorf("the first page: %s", m[1])
	}
	link := older.FindStringSubmatch(m[1])
	if link == nil {
		t.Fatalf("no Older link: %s", m[1])
	}

	p = admin.Get(fmt.Sprintf("/admin/templates/%d?hours=24&before=%s", tp.ID, link[1]))
	m = history.FindStringSubmatch(p.Body)
	if p.Status != http.StatusOK || m == nil {
		t.Fatalf("the older page: %d", p.Status)
	}
	// 55 additions and the creation: 6 left, the creation last.
	if n := len(entries.FindAllString(m[1], -1)); n != 6 {
		t.Errorf("the older page shows %d entries, want 6", n)
	}
	if !strings.Contains(m[1], `data-action="template.create"`) || !strings.Contains(m[1], "restock number 1”") ||
		older.MatchString(m[1]) || !strings.Contains(m[1], `href="?hours=24">Newest</a>`) {
		t.Errorf("the older page: %s", m[1])
	}
}

// TestAuditFilterNames: the audit page's filter says its choices and what
// it filters by in words, templates by name, never as keys.
func TestAuditFilterNames(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	tp := e.Template(t, "$5 off")
	admin := e.Client(t)
	admin.Login("admin")
	p := admin.Get(fmt.Sprintf("/admin/audit?actor=alice&action=coupon.revoke&target=template:%d&from=2026-03-01", tp.ID))
	want := fmt.Sprintf("Filtered by Actor: alice · Action: coupon revoked · Template: %s (#%d) · From: 2026-03-01", tp.Name, tp.ID)
	if !strings.Contains(p.Text(), want) {
		t.Errorf("the audit page lacks %q:\n%s", want, p.Text())
	}
	for _, s := range []string{">coupon revoked</option>", ">every coupon action</option>", ">stock added</option>"} {
		if !strings.Contains(p.Body, s) {
			t.Errorf("the action choices lack %q", s)
		}
	}
	if strings.Contains(p.Text(), "coupon.revoke") || strings.Contains(p.Text(), "template_id") {
		t.Errorf("the audit page shows a key:\n%s", p.Text())
	}
}
