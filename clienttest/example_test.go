package clienttest_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/couponsvc/couponsvc/client"
)

// A shop's backend claims a coupon for a shopper with an app token. A
// retry after a network error keeps the call's Idempotency-Key: the shopper
// gets one coupon however often the call is retried.
func Example_claim() {
	ctx := context.Background()
	admin, err := client.New(exampleURL, exampleAdminToken)
	if err != nil {
		log.Fatal(err)
	}
	campaign, err := admin.CreateCampaign(ctx, client.CreateCampaignRequest{Name: "Spring sale"})
	if err != nil {
		log.Fatal(err)
	}
	tpl, err := admin.CreateTemplate(ctx, client.CreateTemplateRequest{CampaignID: campaign.Campaign.ID,
		Name: "Five off", Kind: client.TemplateKindFixed, FaceValueCents: client.Ptr[int64](500), TotalStock: 1,
		PerUserLimit: 1, ValidDays: client.Ptr[int64](30)})
	if err != nil {
		log.Fatal(err)
	}
	token, err := admin.CreateToken(ctx, client.CreateTokenRequest{Role: client.TokenRoleApp, Name: "shop backend"})
	if err != nil {
		log.Fatal(err)
	}

	shop, _ := client.New(exampleURL, token.Token)
	claimed, err := shop.ClaimCoupon(ctx, tpl.Template.ID, client.ClaimRequest{UserID: client.Ptr("alice")})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(claimed.Result, claimed.Coupon.ValueCents, claimed.Remaining)

	// The stock was one coupon: the next shopper hears why, by its word.
	_, err = shop.ClaimCoupon(ctx, tpl.Template.ID, client.ClaimRequest{UserID: client.Ptr("bob")})
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.Status, apiErr.Result, client.IsResult(err, client.ResultSoldOut))
	}
	// Output:
	// claimed 500 0
	// 409 sold_out true
}
