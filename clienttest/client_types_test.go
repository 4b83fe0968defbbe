package clienttest_test

import (
	"context"
	"testing"

	"github.com/couponsvc/couponsvc/client"
)

// newTemplate creates the template body describes in a campaign of its
// own, and returns an admin's client with it.
func newTemplate(t *testing.T, body client.CreateTemplateRequest) (*client.Client, *client.TemplateAnswer) {
	t.Helper()
	admin, _ := client.New(exampleURL, exampleAdminToken)
	camp, err := admin.CreateCampaign(context.Background(), client.CreateCampaignRequest{Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	body.CampaignID = camp.Campaign.ID
	tpl, err := admin.CreateTemplate(context.Background(), body)
	if err != nil {
		t.Fatal(err)
	}
	return admin, tpl
}

// TestRefundShapes: each shape of a refund comes back as its own type, every
// field present, against the real service: a whole refund, a return of an
// amount (and its replay), a return by line.
func TestRefundShapes(t *testing.T) {
	ctx := context.Background()
	admin, tpl := newTemplate(t, client.CreateTemplateRequest{Name: "Ten off", Kind: client.TemplateKindFixed,
		FaceValueCents: client.Ptr[int64](1000), TotalStock: 10, PerUserLimit: 3, ValidDays: client.Ptr[int64](30),
		RefundPolicy: client.Ptr(client.RefundPolicyRecycle)})
	tok, err := admin.CreateToken(ctx, client.CreateTokenRequest{Role: client.TokenRoleCashier, Name: "refund shapes"})
	if err != nil {
		t.Fatal(err)
	}
	app, err := admin.CreateToken(ctx, client.CreateTokenRequest{Role: client.TokenRoleApp, Name: "refund shapes app"})
	if err != nil {
		t.Fatal(err)
	}
	shop, _ := client.New(exampleURL, tok.Token)
	claimer, _ := client.New(exampleURL, app.Token)
	redeem := func(order string, body client.RedeemRequest) string {
		claimed, err := claimer.ClaimCoupon(ctx, tpl.Template.ID, client.ClaimRequest{UserID: client.Ptr("refund-shopper")})
		if err != nil {
			t.Fatal(err)
		}
		body.CouponCode, body.OrderID, body.UserID = claimed.Coupon.Code, order, client.Ptr("refund-shopper")
		if _, err := shop.RedeemCoupon(ctx, body); err != nil {
			t.Fatal(err)
		}
		return claimed.Coupon.Code
	}

	code := redeem("shape-whole", client.RedeemRequest{OrderAmountCents: client.Ptr[int64](5000)})
	whole, err := shop.RefundWhole(ctx, "shape-whole", code)
	if err != nil || whole.Result != client.ResultRefunded || whole.Replayed || whole.Currency == "" ||
		whole.Coupon.Code != code || !whole.StockReturned {
		t.Fatalf("whole refund: %+v, %v", whole, err)
	}

	redeem("shape-amount", client.RedeemRequest{OrderAmountCents: client.Ptr[int64](5000)})
	amount, err := shop.ReturnAmount(ctx, "shape-amount", "rma-amount", 1000, client.IdempotencyKey("shape-amount-key"))
	want := client.AmountReturn{Refunded: client.Refunded{Result: client.ResultRefunded, Currency: whole.Currency},
		KeptAmountCents: 4000, DiscountKeptCents: 1000, DiscountReturnedCents: 0}
	if err != nil || *amount != want {
		t.Fatalf("amount return: %+v, %v; want %+v", amount, err, want)
	}
	// The same key: the first answer, marked as a replay.
	again, err := shop.ReturnAmount(ctx, "shape-amount", "rma-amount", 1000, client.IdempotencyKey("shape-amount-key"))
	want.Replayed = true
	if err != nil || *again != want {
		t.Fatalf("amount return replayed by its key: %+v, %v; want %+v", again, err, want)
	}
	// The same return id under another key: answered duplicate.
	byID, err := shop.ReturnAmount(ctx, "shape-amount", "rma-amount", 1000)
	want.Result, want.Replayed = client.ResultDuplicate, false
	if err != nil || *byID != want {
		t.Fatalf("amount return again by its return id: %+v, %v; want %+v", byID, err, want)
	}

	cart := []client.CartLine{{LineID: "1", Sku: "A", Quantity: 1, UnitPriceCents: 3000},
		{LineID: "2", Sku: "B", Quantity: 1, UnitPriceCents: 1000}}
	redeem("shape-lines", client.RedeemRequest{Lines: cart})
	lines, err := shop.ReturnLines(ctx, "shape-lines", "rma-lines", []client.ReturnLineRequest{{LineID: "2", Quantity: 1}})
	if err != nil || lines.Result != client.ResultRefunded || lines.RefundCents != 750 || lines.DiscountReturnedCents != 250 ||
		lines.KeptAmountCents != 3000 || lines.DiscountKeptCents != 750 || lines.FullRefund ||
		len(lines.Lines) != 1 || lines.Lines[0] != (client.ReturnedLine{LineID: "2", Quantity: 1, RefundCents: 750, DiscountCents: 250}) {
		t.Fatalf("line return: %+v, %v", lines, err)
	}
}

// TestListTemplatesAllFlag: ListTemplatesParams.All, a bool, sends all=1:
// an admin then sees a paused template the default list leaves out.
func TestListTemplatesAllFlag(t *testing.T) {
	ctx := context.Background()
	admin, tpl := newTemplate(t, client.CreateTemplateRequest{Name: "Paused one", Kind: client.TemplateKindFixed,
		FaceValueCents: client.Ptr[int64](100), TotalStock: 1, PerUserLimit: 1, ValidDays: client.Ptr[int64](1),
		Status: client.Ptr(client.TemplateStatusPaused)})
	found := func(all bool) (n int, status client.TemplateStatus) {
		for v, err := range admin.ListTemplatesAll(ctx, client.ListTemplatesParams{All: all}) {
			if err != nil {
				t.Fatal(err)
			}
			if v.ID == tpl.Template.ID {
				n, status = n+1, v.Status
			}
		}
		return n, status
	}
	if n, _ := found(false); n != 0 {
		t.Fatalf("without All: the paused template listed %d times, want 0", n)
	}
	if n, status := found(true); n != 1 || status != client.TemplateStatusPaused {
		t.Fatalf("with All: the paused template listed %d times (status %q), want once, paused", n, status)
	}
}
