package clienttest_test

import (
	"context"
	"fmt"
	"log"

	"github.com/couponsvc/couponsvc/client"
)

// setUpCheckout makes what a shop has before its checkout: a 1,000 off
// coupon of alice's, and a cashier token (the shop's checkout backend).
func setUpCheckout(ctx context.Context) (code, cashierToken string) {
	admin, _ := client.New(exampleURL, exampleAdminToken)
	campaign, err := admin.CreateCampaign(ctx, client.CreateCampaignRequest{Name: "Checkout example"})
	if err != nil {
		log.Fatal(err)
	}
	tpl, err := admin.CreateTemplate(ctx, client.CreateTemplateRequest{CampaignID: campaign.Campaign.ID,
		Name: "Ten off", Kind: client.TemplateKindFixed, FaceValueCents: client.Ptr[int64](1000), TotalStock: 10, PerUserLimit: 1,
		ValidDays: client.Ptr[int64](30)})
	if err != nil {
		log.Fatal(err)
	}
	app, err := admin.CreateToken(ctx, client.CreateTokenRequest{Role: client.TokenRoleApp, Name: "shop"})
	if err != nil {
		log.Fatal(err)
	}
	shop, _ := client.New(exampleURL, app.Token)
	claimed, err := shop.ClaimCoupon(ctx, tpl.Template.ID, client.ClaimRequest{UserID: client.Ptr("alice")})
	if err != nil {
		log.Fatal(err)
	}
	token, err := admin.CreateToken(ctx, client.CreateTokenRequest{Role: client.TokenRoleCashier, Name: "checkout"})
	if err != nil {
		log.Fatal(err)
	}
	return claimed.Coupon.Code, token.Token
}

// The online checkout of a cart of three lines with one coupon: validate
// the cart while the shopper looks at it, hold the coupon while they pay,
// confirm when the payment succeeds, and later take one line back. The
// return refunds what the shopper paid for that line: its price less the
// part of the discount it carried.
func Example_checkout() {
	ctx := context.Background()
	code, cashierToken := setUpCheckout(ctx)

	shop, err := client.New(exampleURL, cashierToken)
	if err != nil {
		log.Fatal(err)
	}
	cart := []client.CartLine{
		{LineID: "1", Sku: "SHOE-42", Quantity: 1, UnitPriceCents: 1000},
		{LineID: "2", Sku: "SOCK-3P", Quantity: 1, UnitPriceCents: 1000},
		{LineID: "3", Sku: "LACE-01", Quantity: 1, UnitPriceCents: 1000},
	}
	codes := []string{code}
	checked, err := shop.ValidateCheckout(ctx, client.ValidateRequest{CouponCodes: codes, Lines: cart, UserID: client.Ptr("alice")})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("validate:", checked.Result, checked.DiscountCents, checked.PayableCents)

	held, err := shop.HoldCoupons(ctx, client.HoldRequest{OrderID: "order-1001", CouponCodes: codes, Lines: cart, UserID: client.Ptr("alice")})
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range held.Lines {
		fmt.Println("line", l.LineID, "discount", l.DiscountCents)
	}

	// ... the payment succeeds ...
	confirmed, err := shop.ConfirmHold(ctx, "order-1001", client.ConfirmRequest{Lines: cart})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("confirm:", confirmed.Result, confirmed.PayableCents)

	// The shopper sends the socks back.
	returned, err := shop.ReturnLines(ctx, "order-1001", "rma-1", []client.ReturnLineRequest{{LineID: "2", Quantity: 1}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("return:", returned.Result, returned.RefundCents, returned.DiscountReturnedCents)
	// Output:
	// validate: ok 1000 2000
	// line 1 discount 334
	// line 2 discount 333
	// line 3 discount 333
	// confirm: redeemed 2000
	// return: refunded 667 333
}
