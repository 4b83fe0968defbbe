package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// TestIdentityAPI: user ids, idempotency keys and order ids that differ only
// in case are different ones over the API, on every backend.
func TestIdentityAPI(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	e.MustCall(t, 201, "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"Spring","budget_cents":0}`)
	e.MustCall(t, 201, "POST", "/api/v1/templates", testsupport.AdminToken, testsupport.ValidTemplate)
	app := e.AppToken(t)
	claim := func(key, user string) (int, map[string]any) {
		return e.Call(t, "POST", "/api/v1/templates/1/claim", app, map[string]string{"Idempotency-Key": key},
			fmt.Sprintf(`{"user_id":%q}`, user))
	}
	codes := map[string]string{}
	for i, user := range []string{"casey6213", "CASEY6213"} {
		status, out := claim(fmt.Sprintf("identity-%d", i), user)
		if status != 201 || out["result"] != "claimed" {
			t.Fatalf("claim for %s: %d %v", user, status, out)
		}
		c := out["coupon"].(map[string]any)
		if c["user_id"] != user {
			t.Fatalf("claim for %s answered the coupon of %v", user, c["user_id"])
		}
		codes[user] = c["code"].(string)
	}
	if codes["casey6213"] == codes["CASEY6213"] {
		t.Fatalf("both users got the coupon %s", codes["casey6213"])
	}
	for user, code := range codes {
		out := e.MustCall(t, 200, "GET", "/api/v1/users/"+user+"/coupons", app, "")
		cs := out["coupons"].([]any)
		if len(cs) != 1 || cs[0].(map[string]any)["code"] != code || cs[0].(map[string]any)["user_id"] != user {
			t.Errorf("coupons of %s: %v, want only %s", user, cs, code)
		}
	}
	if cs := e.MustCall(t, 200, "GET", "/api/v1/users/Casey6213/coupons", app, "")["coupons"].([]any); len(cs) != 0 {
		t.Errorf("coupons of Casey6213, who claimed none: %v", cs)
	}

	// A key that differs only in case is a new claim, not a replay.
	status, out := claim("IDENTITY-0", "casey6213")
	if status != 201 || out["result"] != "claimed" || out["coupon"].(map[string]any)["code"] == codes["casey6213"] {
		t.Fatalf("claim with IDENTITY-0 after identity-0: %d %v, want a new coupon", status, out)
	}
	if status, out := claim("identity-0", "casey6213"); status != 200 || out["result"] != "duplicate" ||
		out["coupon"].(map[string]any)["code"] != codes["casey6213"] {
		t.Fatalf("replay of identity-0: %d %v", status, out)
	}

	// The coupon of casey6213 is not CASEY6213's to redeem.
	cashier := e.MustCall(t, 201, "POST", "/api/v1/tokens", testsupport.AdminToken, `{"role":"cashier","name":"till"}`)["token"].(string)
	redeem := func(order, user string) (int, map[string]any) {
		body := fmt.Sprintf(`{"coupon_code":%q,"order_id":%q,"order_amount_cents":2000`, codes["casey6213"], order)
		if user != "" {
			body += fmt.Sprintf(`,"user_id":%q`, user)
		}
		return e.Call(t, "POST", "/api/v1/redemptions", cashier, nil, body+"}")
	}
	if status, out := redeem("A-1", "CASEY6213"); status != 403 || out["result"] != "forbidden" {
		t.Fatalf("redeem casey6213's coupon as CASEY6213: %d %v", status, out)
	}
	if status, out := redeem("A-1", "casey6213"); status != 200 || out["result"] != "redeemed" {
		t.Fatalf("redeem for A-1: %d %v", status, out)
	}
	// Order a-1 is another order.
	if status, out := redeem("a-1", ""); status != 409 || out["result"] != "already_used" {
		t.Fatalf("redeem for a-1 after A-1: %d %v", status, out)
	}
	refund := func(order string) (int, map[string]any) {
		return e.Call(t, "POST", "/api/v1/refunds", cashier, nil,
			fmt.Sprintf(`{"coupon_code":%q,"order_id":%q}`, codes["casey6213"], order))
	}
	if status, out := refund("a-1"); status != 409 || out["result"] != "not_redeemed" {
		t.Fatalf("refund for a-1: %d %v", status, out)
	}
	if status, out := refund("A-1"); status != 200 || out["result"] != "refunded" {
		t.Fatalf("refund for A-1: %d %v", status, out)
	}
}

// TestIdentityPages: a page user sees their own wallet and no one else's,
// and a look-alike of a username with its password logs in to nothing.
func TestIdentityPages(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	e.AddUser(t, "casey", models.RoleShopper)
	e.AddUser(t, "Casey", models.RoleShopper)
	tpl := e.Template(t, "$5 off")
	codes := map[string]string{}
	for i, who := range []string{"casey", "Casey"} {
		c := e.Client(t)
		c.Login(who)
		if p := c.Claim(tpl.ID, fmt.Sprintf("wallet-%d", i)); p.Status != http.StatusCreated {
			t.Fatalf("%s's claim: %v", who, p)
		}
		cs := e.UserCoupons(t, who)
		if len(cs) != 1 {
			t.Fatalf("%s holds %d coupons, want 1", who, len(cs))
		}
		codes[who] = cs[0].Code
	}
	// The shop's own user CASEY, who has no login, claims through the API.
	codes["CASEY"] = e.ClaimFor(t, tpl.ID, "CASEY").Code
	if codes["casey"] == codes["Casey"] {
		t.Fatalf("both got the coupon %s", codes["casey"])
	}
	grouped := func(code string) string { return code[:4] + "-" + code[4:8] + "-" + code[8:] }
	for _, who := range []string{"casey", "Casey"} {
		c := e.Client(t)
		c.Login(who)
		p := c.Get("/wallet")
		if !strings.Contains(p.Body, grouped(codes[who])) {
			t.Errorf("%s's wallet lacks their coupon: %v", who, p)
		}
		for other, code := range codes {
			if other != who && (strings.Contains(p.Body, grouped(code)) || strings.Contains(p.Body, code)) {
				t.Errorf("%s's wallet shows %s's code", who, other)
			}
		}
	}

	// Look-alikes of casey with casey's password: the login page refuses
	// each and no session starts.
	for _, name := range []string{"CASEY", "cAsey", "cásey", "ｃａｓｅｙ", "casey\u200b"} {
		c := e.Client(t)
		token := c.CSRF("/login")
		p := c.Post("/login", url.Values{"csrf_token": {token}, "username": {name}, "password": {e.Passwords["casey"]}})
		if p.Status != http.StatusUnauthorized {
			t.Fatalf("log in as %q with casey's password: %v", name, p)
		}
		if !strings.Contains(p.Text(), "Wrong username or password.") {
			t.Errorf("log in as %q: the page does not refuse it: %v", name, p)
		}
		if w := c.Get("/wallet"); w.Status != http.StatusSeeOther {
			t.Errorf("after logging in as %q, /wallet answers %v", name, w)
		}
	}
}
