package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	claimsvc "github.com/couponsvc/couponsvc/services/claims"
)

// figuresMix makes, in a campaign of its own with a budget of $500: template
// R (restore, stock 10, $5) with a and b redeemed, b refunded, c revoked
// keeping its slot, d revoked returning it, e held; template Y (recycle,
// stock 8, $3) with p redeemed, q redeemed and refunded, s revoked keeping
// its slot.
func figuresMix(t *testing.T, svc *services.App) (camp *models.Campaign, r, y *models.Template) {
	t.Helper()
	ctx := context.Background()
	camp, err := svc.CreateCampaign(ctx, "test", models.Campaign{Name: "Sums", BudgetCents: 50_000})
	if err != nil {
		t.Fatal(err)
	}
	r, err = svc.CreateTemplate(ctx, "test", models.Template{CampaignID: camp.ID, Name: "Sums restore", Kind: models.KindFixed,
		FaceValueCents: 500, TotalStock: 10, PerUserLimit: 2, ValidDays: 30, RefundPolicy: models.RefundRestore})
	if err != nil {
		t.Fatal(err)
	}
	y, err = svc.CreateTemplate(ctx, "test", models.Template{CampaignID: camp.ID, Name: "Sums recycle", Kind: models.KindFixed,
		FaceValueCents: 300, TotalStock: 8, PerUserLimit: 2, ValidDays: 30, RefundPolicy: models.RefundRecycle})
	if err != nil {
		t.Fatal(err)
	}
	claims := map[string]*models.Coupon{}
	for _, c := range []struct {
		tid  int64
		user string
	}{{r.ID, "a"}, {r.ID, "b"}, {r.ID, "c"}, {r.ID, "d"}, {r.ID, "e"}, {y.ID, "p"}, {y.ID, "q"}, {y.ID, "s"}} {
		res, err := svc.Claim(ctx, claimsvc.ClaimRequest{TemplateID: c.tid, UserID: c.user, IdempotencyKey: "sums-" + c.user})
		if err != nil {
			t.Fatal(err)
		}
		claims[c.user] = res.Coupon
	}
	for _, u := range []string{"a", "b", "p", "q"} {
		if _, err := svc.Redeem(ctx, checkout.RedeemRequest{CouponCode: claims[u].Code, OrderID: "o-" + u,
			OrderAmountCents: 2000, Cashier: "till"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range []string{"b", "q"} {
		if _, err := svc.Refund(ctx, checkout.RefundRequest{CouponCode: claims[u].Code, OrderID: "o-" + u, Cashier: "till"}); err != nil {
			t.Fatal(err)
		}
	}
	for u, ret := range map[string]bool{"c": false, "d": true, "s": false} {
		if _, err := svc.Revoke(ctx, "admin", claims[u].Code, ret, "test"); err != nil {
			t.Fatal(err)
		}
	}
	return camp, r, y
}

// TestFiguresAddUpAPIAndPages: the stats API answers the exact figures of a
// mix of claims, redemptions, refunds and revokes, as its schema says, and
// the console shows them as labelled sums that add up.
func TestFiguresAddUpAPIAndPages(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	camp, r, y := figuresMix(t, e.Service)
	token, _, err := e.Service.CreateToken(context.Background(), "test", models.RoleAdmin, "figures")
	if err != nil {
		t.Fatal(err)
	}
	doc := testsupport.FetchOpenAPI(t, &testsupport.APIEnv{Fixture: e.Fixture})
	want := map[int64]map[string]float64{
		r.ID: {"total_stock": 10, "claimed": 5, "issued": 2, "expired": 0, "redeemed": 1, "refunded": 1, "redemptions": 2,
			"revoked": 2, "revoked_slot_kept": 1, "revoked_slot_returned": 1, "holding_slot": 4, "live": 4,
			"value_issued_cents": 2000, "remaining": 6, "in_flight_or_drift": 0},
		y.ID: {"total_stock": 8, "claimed": 3, "issued": 0, "expired": 0, "redeemed": 1, "refunded": 1, "redemptions": 2,
			"revoked": 2, "revoked_slot_kept": 1, "revoked_slot_returned": 1, "holding_slot": 2, "live": 2,
			"value_issued_cents": 600, "remaining": 6, "in_flight_or_drift": 0},
	}
	for _, tid := range []int64{r.ID, y.ID} {
		req, _ := http.NewRequest("GET", fmt.Sprintf("%s/api/v1/templates/%d/stats?hours=2", e.Srv.URL, tid), nil)
		req.Header.Set("Authorization", "Bearer "+token)
		p := e.Client(t).Do(req)
		var body map[string]any
		if p.Status != http.StatusOK || json.Unmarshal([]byte(p.Body), &body) != nil {
			t.Fatalf("stats: %v", p)
		}
		doc.CheckAnswer(t, "GET", "/api/v1/templates/{id}/stats", 200, body)
		stats := body["stats"].(map[string]any)
		for k, v := range want[tid] {
			if stats[k] != v {
				t.Errorf("template %d: %s = %v, want %v", tid, k, stats[k], v)
			}
		}
	}

	admin := e.Client(t)
	admin.Login("admin")
	p := admin.Get(fmt.Sprintf("/admin/templates/%d", r.ID))
	for _, s := range []string{
		"10 stock = 6 left + 4 using stock + 0 being claimed",
		"4 using stock = 2 ready to use + 0 held for an order + 0 expired + 1 redeemed now + 1 revoked, stock kept",
		"5 claimed = 4 using stock + 1 revoked, stock given back",
		"2 revoked = 1 revoked, stock kept + 1 revoked, stock given back",
		"2 redemptions = 1 redeemed now + 1 refunded",
		"$20.00 of the campaign's budget held by the coupons using stock",
	} {
		if !strings.Contains(p.Text(), s) {
			t.Errorf("the template page lacks %q:\n%s", s, p.Text())
		}
	}
	p = admin.Get("/admin")
	text := p.Text()
	for _, s := range []string{
		"$500.00 budget = $474.00 left + $26.00 held by coupons using stock",
		"Sums restore $5 off your order Open 5 1 10 = 6 + 4",
		"Sums recycle $3 off your order Open 3 1 8 = 6 + 2",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("the console lacks %q:\n%s", s, text)
		}
	}
	// The totals over every template (the demo's too) add up as labelled.
	atoi := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
	for _, tc := range []struct {
		re    string
		terms int
	}{
		{`(\d+) claimed = (\d+) using stock \+ (\d+) revoked, stock given back`, 2},
		{`(\d+) using stock = (\d+) ready to use \+ (\d+) held for an order \+ (\d+) expired \+ (\d+) redeemed now \+ (\d+) revoked, stock kept`, 5},
		{`(\d+) redemptions = (\d+) redeemed now \+ (\d+) refunded`, 2},
	} {
		m := regexp.MustCompile(tc.re).FindStringSubmatch(text)
		if m == nil {
			t.Errorf("the console lacks the totals %s:\n%s", tc.re, text)
			continue
		}
		var sum int64
		for _, v := range m[2:] {
			sum += atoi(v)
		}
		if sum != atoi(m[1]) || len(m)-2 != tc.terms || atoi(m[1]) < 1 {
			t.Errorf("totals do not add up: %q", m[0])
		}
	}
	_ = camp
}
