package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/internal/testsupport"
)

// eligibleTemplate creates a fixed template of 500 cents off with the rule.
func eligibleTemplate(t *testing.T, e *testsupport.HoldAPI, name, rule string) int64 {
	t.Helper()
	r, _ := json.Marshal(rule)
	out := e.MustCall(t, 201, "POST", "/api/v1/templates", testsupport.AdminToken, fmt.Sprintf(`{"campaign_id":%d,"name":%q,`+
		`"kind":"fixed","face_value_cents":500,"total_stock":20,"per_user_limit":10,"valid_days":30,"stacking":"combinable","eligibility":%s}`,
		e.CampaignID, name, r))
	tp := out["template"].(map[string]any)
	if tp["eligibility"] != rule {
		t.Fatalf("template's eligibility %v, want %q", tp["eligibility"], rule)
	}
	return int64(tp["id"].(float64))
}

// shopperFacts is the customer and channel part of a checkout body.
func shopperFacts(tags []string, orders int, channel string) string {
	tj, _ := json.Marshal(tags)
	s := fmt.Sprintf(`"customer":{"tags":%s,"orders_count":%d}`, tj, orders)
	if channel != "" {
		s += fmt.Sprintf(`,"channel":%q`, channel)
	}
	return s
}

// wantLine checks a validation's answer: its result and its one coupon's
// word and discount.
func wantLine(t *testing.T, e *testsupport.HoldAPI, status int, out map[string]any, result string, discount int64) {
	t.Helper()
	e.Want(t, "POST", "/api/v1/checkout/validate", status, out, 200, result, -1, -1)
	line := out["coupons"].([]any)[0].(map[string]any)
	if line["result"] != result || line["discount_cents"] != float64(discount) || out["discount_cents"] != float64(discount) {
		t.Fatalf("validate: %v, want %s with %d off", out, result, discount)
	}
}

// TestEligibilityCompiledWhenSaved: a rule that does not compile, or costs
// too much, is refused when the template is saved, 400 naming eligibility
// and the rule's line and column; nothing is created or changed.
func TestEligibilityCompiledWhenSaved(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	cases := []struct{ rule, want string }{
		{`customer.age > 18`, "line 1, column 10"},
		{"channel == \"web\" &&\n  customer.orders_count == \"1\"", "line 2, column 25"},
		{`any(1..1000, # > 2)`, "line 1, column 6: a range must have literal ends at most 100 apart"},
		{strings.Repeat("1+", 60) + "1 > 0", "exceeds maximum allowed nodes"},
	}
	before := e.Counts(t)
	for _, c := range cases {
		r, _ := json.Marshal(c.rule)
		status, out := e.Post(t, "/api/v1/templates", testsupport.AdminToken, fmt.Sprintf(`{"campaign_id":%d,"name":"Bad",`+
			`"kind":"fixed","face_value_cents":500,"total_stock":20,"per_user_limit":10,"valid_days":30,"eligibility":%s}`, e.CampaignID, r))
		if status != 400 || out["field"] != "eligibility" || !strings.Contains(fmt.Sprint(out["error"]), c.want) {
			t.Fatalf("create with %q: %d %v, want 400 naming eligibility at %q", c.rule, status, out, c.want)
		}
	}
	if after := e.Counts(t); !testsupport.EqualCounts(before, after) {
		t.Fatalf("refused creations changed rows: %v → %v", before, after)
	}
	id := eligibleTemplate(t, e, "Good", `channel == "web"`)
	status, out := e.Call(t, "PATCH", fmt.Sprintf("/api/v1/templates/%d", id), testsupport.AdminToken, nil, `{"eligibility":"channel = 1"}`)
	if status != 400 || out["field"] != "eligibility" || !strings.Contains(fmt.Sprint(out["error"]), "line 1, column 9") {
		t.Fatalf("patch with a bad rule: %d %v", status, out)
	}
	if got := e.TemplateJSON(t, int(id))["eligibility"]; got != `channel == "web"` {
		t.Fatalf("a refused patch changed the rule to %v", got)
	}
	e.MustCall(t, 200, "PATCH", fmt.Sprintf("/api/v1/templates/%d", id), testsupport.AdminToken, `{"eligibility":"channel == \"till\""}`)
	if got := e.TemplateJSON(t, int(id))["eligibility"]; got != `channel == "till"` {
		t.Fatalf("patched rule %v", got)
	}
}

// TestEligibilityOnEveryPath: a rule on tags and channel refuses the
// coupon on validate (its line not_eligible), hold and redemption (409
// not_eligible, nothing held or used) and leaves it out of the usable
// coupons without the tag, and lets it through with it.
func TestEligibilityOnEveryPath(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	tp := eligibleTemplate(t, e, "VIP web", `"vip" in customer.tags && channel == "web"`)
	code := e.Claim(t, tp, "u1")
	body := func(extra, facts string) string {
		return fmt.Sprintf(`{"coupon_codes":[%q],"user_id":"u1","order_amount_cents":5000%s,%s}`, code, extra, facts)
	}
	none, vipTill, vipWeb := shopperFacts(nil, 0, "web"), shopperFacts([]string{"vip"}, 3, "till"), shopperFacts([]string{"staff", "vip"}, 3, "web")

	for _, facts := range []string{none, vipTill} {
		status, out := e.Post(t, "/api/v1/checkout/validate", e.App, body("", facts))
		wantLine(t, e, status, out, "not_eligible", 0)
		if msg := out["coupons"].([]any)[0].(map[string]any)["message"]; !strings.Contains(fmt.Sprint(msg), `"vip" in customer.tags && channel == "web"`) {
			t.Fatalf("the refusal does not name the rule: %v", msg)
		}
		status, out = e.Post(t, "/api/v1/holds", e.App, body(`,"order_id":"o-1"`, facts))
		e.Want(t, "POST", "/api/v1/holds", status, out, 409, "not_eligible", -1, -1)
		status, out = e.Post(t, "/api/v1/redemptions", e.App, fmt.Sprintf(`{"coupon_code":%q,"order_id":"o-2","user_id":"u1","order_amount_cents":5000,%s}`, code, facts))
		e.Want(t, "POST", "/api/v1/redemptions", status, out, 409, "not_eligible", -1, -1)
		if got := e.CouponStatus(t, code); got != "issued" {
			t.Fatalf("after the refusals the coupon is %s, want issued", got)
		}
		status, out = e.Post(t, "/api/v1/users/u1/coupons/usable", e.App, fmt.Sprintf(`{"order_amount_cents":5000,%s}`, facts))
		if status != 200 || len(out["coupons"].([]any)) != 0 {
			t.Fatalf("usable without the tag: %d %v, want no coupon", status, out)
		}
	}
	// Without any facts: an anonymous customer with no tags and no channel.
	status, out := e.Post(t, "/api/v1/checkout/validate", e.App, fmt.Sprintf(`{"coupon_codes":[%q],"user_id":"u1","order_amount_cents":5000}`, code))
	wantLine(t, e, status, out, "not_eligible", 0)

	status, out = e.Post(t, "/api/v1/checkout/validate", e.App, body("", vipWeb))
	wantLine(t, e, status, out, "ok", 500)
	status, out = e.Post(t, "/api/v1/users/u1/coupons/usable", e.App, fmt.Sprintf(`{"order_amount_cents":5000,%s}`, vipWeb))
	if cs := out["coupons"].([]any); status != 200 || len(cs) != 1 || cs[0].(map[string]any)["discount_cents"] != float64(500) {
		t.Fatalf("usable with the tag: %d %v, want the coupon at 500", status, out)
	}
	status, out = e.Post(t, "/api/v1/holds", e.App, body(`,"order_id":"o-1"`, vipWeb))
	e.Want(t, "POST", "/api/v1/holds", status, out, 201, "held", 500, 4500)
	if got := e.CouponStatus(t, code); got != "held" {
		t.Fatalf("held coupon is %s", got)
	}
	status, out = e.Post(t, "/api/v1/holds/o-1/confirm", e.App, "")
	e.Want(t, "POST", "/api/v1/holds/{order_id}/confirm", status, out, 200, "redeemed", 500, 4500)

	// The one-step redemption with the facts.
	code2 := e.Claim(t, tp, "u1")
	status, out = e.Post(t, "/api/v1/redemptions", e.App, fmt.Sprintf(`{"coupon_code":%q,"order_id":"o-3","user_id":"u1","order_amount_cents":5000,%s}`, code2, vipWeb))
	e.Want(t, "POST", "/api/v1/redemptions", status, out, 200, "redeemed", 500, 4500)

	// Bad facts: 400 naming the field, nothing changed.
	code3 := e.Claim(t, tp, "u1")
	for facts, field := range map[string]string{
		`"channel":"phone"`: "channel",
		`"customer":{"tags":["` + strings.Repeat("x", 41) + `"]}`:     "customer.tags[0]",
		`"customer":{"orders_count":-1}`:                              "customer.orders_count",
		`"customer":{"tags":[` + strings.Repeat(`"t",`, 20) + `"t"]}`: "customer.tags",
	} {
		status, out = e.Post(t, "/api/v1/holds", e.App, fmt.Sprintf(`{"coupon_codes":[%q],"order_id":"o-4","order_amount_cents":5000,%s}`, code3, facts))
		if status != 400 || out["field"] != field {
			t.Fatalf("hold with %s: %d %v, want 400 naming %s", facts, status, out, field)
		}
	}
	if got := e.CouponStatus(t, code3); got != "issued" {
		t.Fatalf("after bad requests the coupon is %s", got)
	}
}

// TestEligibilityFirstOrderAndCounts: a first-order rule reads the shop's
// orders_count; a rule on the customer's redemptions in the campaign reads
// the service's own count (once per request).
func TestEligibilityFirstOrderAndCounts(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	first := eligibleTemplate(t, e, "First order", `customer.orders_count == 0`)
	code := e.Claim(t, first, "u1")
	validate := func(c, facts string) (int, map[string]any) {
		return e.Post(t, "/api/v1/checkout/validate", e.App, fmt.Sprintf(`{"coupon_codes":[%q],"user_id":"u1","order_amount_cents":2000,%s}`, c, facts))
	}
	status, out := validate(code, shopperFacts(nil, 2, ""))
	wantLine(t, e, status, out, "not_eligible", 0)
	status, out = validate(code, shopperFacts(nil, 0, ""))
	wantLine(t, e, status, out, "ok", 500)

	once := eligibleTemplate(t, e, "Once per campaign", `customer.redemptions_in_campaign == 0 && customer.claims_in_campaign <= 2`)
	onceCode := e.Claim(t, once, "u1")
	status, out = validate(onceCode, shopperFacts(nil, 0, ""))
	wantLine(t, e, status, out, "ok", 500)
	status, out = e.Post(t, "/api/v1/redemptions", e.App, fmt.Sprintf(`{"coupon_code":%q,"order_id":"f-1","user_id":"u1","order_amount_cents":2000}`, code))
	e.Want(t, "POST", "/api/v1/redemptions", status, out, 200, "redeemed", 500, 1500)
	// u1 redeemed a coupon of the campaign: the second template refuses.
	status, out = validate(onceCode, shopperFacts(nil, 0, ""))
	wantLine(t, e, status, out, "not_eligible", 0)
	// u2 has claimed nothing but this one: eligible.
	u2 := e.Claim(t, once, "u2")
	status, out = e.Post(t, "/api/v1/checkout/validate", e.App, fmt.Sprintf(`{"coupon_codes":[%q],"user_id":"u2","order_amount_cents":2000}`, u2))
	wantLine(t, e, status, out, "ok", 500)
}

// TestEligibilityWeekday: a rule on the day and hour judges at the
// service's clock (here fixed), in the deployment's zone (UTC here).
func TestEligibilityWeekday(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	e.Clock.Set(time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)) // a Sunday
	tp := eligibleTemplate(t, e, "Sunday mornings", `now.weekday == 0 && now.hour < 12`)
	code := e.Claim(t, tp, "u1")
	validate := func() (int, map[string]any) {
		return e.Post(t, "/api/v1/checkout/validate", e.App, fmt.Sprintf(`{"coupon_codes":[%q],"order_amount_cents":2000}`, code))
	}
	status, out := validate()
	wantLine(t, e, status, out, "ok", 500)
	e.Clock.Set(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC))
	status, out = validate()
	wantLine(t, e, status, out, "not_eligible", 0)
	e.Clock.Set(time.Date(2026, 12, 13, 11, 59, 0, 0, time.UTC)) // the next Sunday
	status, out = validate()
	wantLine(t, e, status, out, "ok", 500)
	e.Clock.Set(time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)) // Monday
	status, out = e.Post(t, "/api/v1/redemptions", e.App, fmt.Sprintf(`{"coupon_code":%q,"order_id":"w-1","order_amount_cents":2000}`, code))
	e.Want(t, "POST", "/api/v1/redemptions", status, out, 409, "not_eligible", -1, -1)
}
