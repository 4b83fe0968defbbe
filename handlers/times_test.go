package handlers_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/testenv"
)

// timeInJSON finds the times of a JSON answer; oneTimeFormat is the only
// form they may take (docs/time.md): RFC 3339 in UTC, to the microsecond.
var (
	timeInJSON    = regexp.MustCompile(`"([a-z_]+)":"(\d{4}-\d\d-\d\dT[^"]*)"`)
	oneTimeFormat = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z$`)
)

// TestTimesOnePrecision: on a clock with nanoseconds, every time of every
// answer is RFC 3339 in UTC to the microsecond, and an instant reads the same
// in each answer that shows it: a hold's expires_at where it is made, read,
// confirmed and in its event; a campaign's created_at when made and listed.
func TestTimesOnePrecision(t *testing.T) {
	clock := &testenv.Clock{}
	clock.Set(time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC))
	e := &testsupport.HoldAPI{APIEnv: &testsupport.APIEnv{Fixture: testsupport.NewFixture(t, testsupport.WithConfig(services.Config{CoreConfig: services.CoreConfig{Now: clock.Now}}), testsupport.WithBootstrap(testsupport.AdminToken))}, Clock: clock}
	times := map[string][]string{} // name of the field: the values seen
	seen := func(what string, out map[string]any) map[string]any {
		t.Helper()
		b, _ := json.Marshal(out)
		for _, m := range timeInJSON.FindAllStringSubmatch(string(b), -1) {
			if !oneTimeFormat.MatchString(m[2]) {
				t.Errorf("%s: %s is %q, not RFC 3339 UTC to the microsecond", what, m[1], m[2])
			}
			times[m[1]] = append(times[m[1]], m[2])
		}
		return out
	}
	out := seen("create campaign", e.MustCall(t, 201, "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"Holds","budget_cents":1000000}`))
	e.CampaignID = int64(out["campaign"].(map[string]any)["id"].(float64))
	if got := out["campaign"].(map[string]any)["created_at"]; got != "2026-03-01T12:00:00.123456Z" {
		t.Errorf("created campaign's created_at %v", got)
	}
	list := seen("list campaigns", e.MustCall(t, 200, "GET", "/api/v1/campaigns", testsupport.AdminToken, ""))
	if got := list["campaigns"].([]any)[0].(map[string]any)["created_at"]; got != "2026-03-01T12:00:00.123456Z" {
		t.Errorf("listed campaign's created_at %v", got)
	}
	e.App = e.AppToken(t)
	tid := e.Template(t, 500, 0, "exclusive")
	seen("template", e.MustCall(t, 200, "GET", fmt.Sprintf("/api/v1/templates/%d", tid), testsupport.AdminToken, ""))
	clock.Set(time.Date(2026, 3, 1, 12, 0, 1, 987654321, time.UTC))
	st, claim := e.Call(t, "POST", fmt.Sprintf("/api/v1/templates/%d/claim", tid), e.App, map[string]string{"Idempotency-Key": "k1"},
		`{"user_id":"alice"}`)
	if st != 201 {
		t.Fatalf("claim: %d %v", st, claim)
	}
	code := seen("claim", claim)["coupon"].(map[string]any)["code"].(string)
	seen("coupon", e.MustCall(t, 200, "GET", "/api/v1/coupons/"+code, testsupport.AdminToken, ""))
	const expires = "2026-03-01T12:10:01.987654Z"
	for _, out := range []map[string]any{
		seen("hold", e.MustCall(t, 201, "POST", "/api/v1/holds", e.App,
			`{"order_id":"o1","order_amount_cents":3000,"coupon_codes":["`+code+`"],"ttl_seconds":600}`)),
		seen("get hold", e.MustCall(t, 200, "GET", "/api/v1/holds/o1", e.App, "")),
		seen("confirm", e.MustCall(t, 200, "POST", "/api/v1/holds/o1/confirm", e.App, "")),
	} {
		if out["expires_at"] != expires {
			t.Errorf("%s %s: expires_at %v, want %s", out["result"], out["state"], out["expires_at"], expires)
		}
	}
	seen("events", e.MustCall(t, 200, "GET", "/api/v1/events?after=0", testsupport.AdminToken, ""))
	if hx := times["hold_expires_at"]; len(hx) == 0 || hx[0] != expires {
		t.Errorf("the hold's event says hold_expires_at %v, want %s", hx, expires)
	}
	seen("user coupons", e.MustCall(t, 200, "GET", "/api/v1/users/alice/coupons", testsupport.AdminToken, ""))
	seen("tokens", e.MustCall(t, 200, "GET", "/api/v1/tokens", testsupport.AdminToken, ""))
	if len(times["used_at"]) == 0 || len(times["claimed_at"]) < 3 {
		t.Fatalf("too few times seen: %v", times)
	}
}
