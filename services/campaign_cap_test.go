package services_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
)

// TestCampaignCapEveryPath: a campaign with per_customer_limit 2 and a
// user holding 2 of its coupons (a claim and a shared code's claim). Every
// path that gives a user a coupon through the claim script refuses her
// campaign_limit and takes nothing: a claim, an issue job (the console's
// "Issue to users"), an import job's row for a user, a shared code's
// hold, redemption and validation. Other users are not counted with her.
// A bulk code (a bearer coupon) she redeems is hers without counting
// (docs/automatic-offers.md): the redemption passes and her count stays 2.
func TestCampaignCapEveryPath(t *testing.T) {
	f := newJobFixture(t, services.Config{})
	camp := f.CreateCampaign(models.Campaign{Name: "capped", PerCustomerLimit: 2})
	claimed := f.Template(models.Template{CampaignID: camp.ID, TotalStock: 20, PerUserLimit: 5})
	poster := f.Template(models.Template{CampaignID: camp.ID, TotalStock: 20, PerUserLimit: 5,
		CodeMode: models.CodeModeShared, SharedCode: "POSTER42"})
	held := func(user string) string {
		t.Helper()
		var out []string
		for _, tp := range []*models.Template{claimed, poster} {
			out = append(out, f.Backends.Redis.HGet(f.Ctx, f.TemplateKey(camp.ID, tp.ID)+":users", user).Val())
		}
		return strings.Join(out, "|")
	}
	f.MustClaim(claimed.ID, "cy", "k1")
	if _, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: "POSTER42", OrderID: "r-1",
		OrderAmountCents: 1000, UserID: "cy", Cashier: "till"}); err != nil {
		t.Fatal(err)
	}
	if got := held("cy"); got != "1|1" {
		t.Fatalf("cy's ordinals %q, want 1|1", got)
	}
	coupons := len(f.Coupons())
	if coupons != 2 {
		t.Fatalf("%d coupons, want 2", coupons)
	}

	t.Run("ErrCampaignLimit", func(t *testing.T) {
		_, err := f.Claim(claimed.ID, "cy", "k2")
		assertClaimCode(t, err, models.CodeCampaignLimit)
	})
	t.Run("IssueJob", func(t *testing.T) {
		j, err := f.Codes.StartIssue(f.Ctx, "admin", claimed.ID, []string{"cy", "dee"})
		if err != nil {
			t.Fatal(err)
		}
		f.runAll(f.Svc)
		if j = f.job(j.ID); j.State != models.JobDone || j.Done != 2 || j.Errors != 1 {
			t.Fatalf("job = %+v, want done, 2 rows, 1 refused", j)
		}
		res := f.result(j.ID)
		if len(res) != 3 || res[1][0] != "cy" || res[1][1] != "campaign_limit" || res[2][0] != "dee" || res[2][1] != "claimed" {
			t.Fatalf("result %v, want cy campaign_limit, dee claimed", res)
		}
		coupons++
	})
	t.Run("ImportJobRowForUser", func(t *testing.T) {
		j, err := f.Codes.StartImport(f.Ctx, "admin", claimed.ID,
			strings.NewReader("code,user_id\nCAPX-AAAA-0001,cy\nCAPX-AAAA-0002,eve\n"))
		if err != nil {
			t.Fatal(err)
		}
		f.runAll(f.Svc)
		if j = f.job(j.ID); j.State != models.JobDone || j.Errors != 1 {
			t.Fatalf("job = %+v, want done, 1 refused", j)
		}
		got, err := f.Codes.ImportRefusals(f.Ctx, j, 10)
		if want := "[{2 CAPX-AAAA-0001 campaign_limit}]"; err != nil || fmt.Sprint(got) != want {
			t.Fatalf("refusals %v, %v; want %s", got, err, want)
		}
		coupons++
	})
	t.Run("SharedCodeHold", func(t *testing.T) {
		_, err := f.Checkout.Hold(f.Ctx, checkout.CheckoutRequest{OrderID: "h-1", OrderAmountCents: 1000, UserID: "cy",
			CouponCodes: []string{"POSTER42"}, TTLSeconds: 600, Actor: "shop"})
		assertClaimCode(t, err, models.CodeCampaignLimit)
	})
	t.Run("SharedCodeRedeem", func(t *testing.T) {
		_, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: "POSTER42", OrderID: "r-2",
			OrderAmountCents: 1000, UserID: "cy", Cashier: "till"})
		assertClaimCode(t, err, models.CodeCampaignLimit)
	})
	t.Run("SharedCodeValidate", func(t *testing.T) {
		res, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{OrderAmountCents: 1000, UserID: "cy",
			CouponCodes: []string{"POSTER42"}})
		if err != nil || res.Result != "campaign_limit" || len(res.Coupons) != 1 || res.Coupons[0].Code != models.CodeCampaignLimit {
			t.Fatalf("validate: %+v, %v; want campaign_limit", res, err)
		}
	})
	if got := held("cy"); got != "1|1" {
		t.Fatalf("after the refusals cy's ordinals are %q, want 1|1", got)
	}
	if n := len(f.Coupons()); n != coupons {
		t.Fatalf("%d coupons, want %d", n, coupons)
	}

	t.Run("BulkCodeNotCounted", func(t *testing.T) {
		j, err := f.Codes.StartGenerate(f.Ctx, "admin", claimed.ID, 1, "")
		if err != nil {
			t.Fatal(err)
		}
		f.runAll(f.Svc)
		var bearer string
		for _, c := range f.Coupons() {
			if c.UserID == models.BearerUserID {
				bearer = c.Code
			}
		}
		if j = f.job(j.ID); j.State != models.JobDone || bearer == "" {
			t.Fatalf("job = %+v, bearer code %q", j, bearer)
		}
		r, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: bearer, OrderID: "r-3",
			OrderAmountCents: 1000, UserID: "cy", Cashier: "till"})
		if err != nil || r.Coupon.UserID != "cy" || r.DiscountCents != 500 {
			t.Fatalf("bulk code redeemed by cy: %+v, %v", r, err)
		}
		if got := held("cy"); got != "1|1" {
			t.Fatalf("after the bulk code cy's ordinals are %q, want 1|1", got)
		}
		_, err = f.Claim(claimed.ID, "cy", "k3")
		assertClaimCode(t, err, models.CodeCampaignLimit)
		if n := len(f.Coupons()); n != coupons+1 {
			t.Fatalf("%d coupons, want %d", n, coupons+1)
		}
	})
}
