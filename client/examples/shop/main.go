// Command shop is a small shop's integration with couponsvc through the Go
// client: an admin's set-up (a campaign, a template, the shop's tokens), a
// shopper's claim, the coupons usable on a cart, the checkout (validate,
// hold, confirm, whose first answer is lost on the way and retried with the
// same Idempotency-Key), a return of one line, a webhook delivery verified
// and decoded, paging through a list, and an error answer read.
//
//	COUPONSVC_URL=http://localhost:8080 COUPONSVC_ADMIN_TOKEN=... go run ./examples/shop
//
// It prints what it did, one line a step, and exits 1 at the first failure.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/couponsvc/couponsvc/client"
	"github.com/couponsvc/couponsvc/client/webhook"
)

func main() {
	log.SetFlags(0)
	base, adminToken := os.Getenv("COUPONSVC_URL"), os.Getenv("COUPONSVC_ADMIN_TOKEN")
	if base == "" || adminToken == "" {
		log.Fatal("shop: set COUPONSVC_URL and COUPONSVC_ADMIN_TOKEN")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := run(ctx, base, adminToken); err != nil {
		log.Fatal("shop: ", err)
	}
}

// cart is the shopper's cart: a pair of shoes and socks.
var cart = []client.CartLine{
	{LineID: "1", Sku: "SHOE-42", Quantity: 1, UnitPriceCents: 6000},
	{LineID: "2", Sku: "SOCK-3P", Quantity: 2, UnitPriceCents: 1000},
}

func run(ctx context.Context, base, adminToken string) error {
	// Set-up, by an admin: a campaign with a budget, a template of 10.00
	// off orders from 50.00, and the tokens of the shop's backends.
	admin, err := client.New(base, adminToken)
	if err != nil {
		return err
	}
	suffix := time.Now().Format("150405.000000")
	camp, err := admin.CreateCampaign(ctx, client.CreateCampaignRequest{Name: "Spring " + suffix, BudgetCents: client.Ptr[int64](100_000)})
	if err != nil {
		return err
	}
	tpl, err := admin.CreateTemplate(ctx, client.CreateTemplateRequest{CampaignID: camp.Campaign.ID, Name: "Ten off",
		Kind: client.TemplateKindFixed, FaceValueCents: client.Ptr[int64](1000), MinOrderCents: client.Ptr[int64](5000),
		TotalStock: 100, PerUserLimit: 1, ValidDays: client.Ptr[int64](30)})
	if err != nil {
		return err
	}
	fmt.Println("template:", tpl.Result, tpl.Template.Kind, tpl.Template.Status)
	app, err := admin.CreateToken(ctx, client.CreateTokenRequest{Role: client.TokenRoleApp, Name: "shop app " + suffix})
	if err != nil {
		return err
	}
	cashier, err := admin.CreateToken(ctx, client.CreateTokenRequest{Role: client.TokenRoleCashier, Name: "shop checkout " + suffix})
	if err != nil {
		return err
	}

	// The shopper claims the coupon in the app, and sees it usable on the cart.
	shopper := "alice-" + suffix
	appClient, _ := client.New(base, app.Token)
	claimed, err := appClient.ClaimCoupon(ctx, tpl.Template.ID, client.ClaimRequest{UserID: client.Ptr(shopper)})
	if err != nil {
		return err
	}
	fmt.Println("claim:", claimed.Result, claimed.Coupon.Status)
	usable, err := appClient.PriceUsableCoupons(ctx, shopper, client.UsableRequest{Lines: cart})
	if err != nil {
		return err
	}
	fmt.Println("usable:", len(usable.Coupons), "best discount", usable.BestDiscountCents)

	// A second claim is over the template's limit of one a shopper: an
	// error answer, read as a *client.Error.
	_, err = appClient.ClaimCoupon(ctx, tpl.Template.ID, client.ClaimRequest{UserID: client.Ptr(shopper)})
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Result != client.ResultUserLimitReached {
		return fmt.Errorf("a second claim: %v, want %s", err, client.ResultUserLimitReached)
	}
	fmt.Println("second claim:", apiErr.Status, apiErr.Result, "retryable", apiErr.Retryable())

	// The checkout, on a network that loses the first answer to a confirm:
	// the client sends it again with the same Idempotency-Key, and the
	// service answers with the first answer, marked as a replay.
	lossy := &loseFirstConfirm{next: http.DefaultTransport}
	checkout, _ := client.New(base, cashier.Token, client.WithHTTPClient(&http.Client{Transport: lossy}),
		client.WithBackoff(10*time.Millisecond))
	codes := []string{claimed.Coupon.Code}
	order := "order-" + suffix
	priced, err := checkout.ValidateCheckout(ctx, client.ValidateRequest{CouponCodes: codes, Lines: cart, UserID: client.Ptr(shopper)})
	if err != nil {
		return err
	}
	fmt.Println("validate:", priced.Result, priced.DiscountCents, priced.PayableCents)
	held, err := checkout.HoldCoupons(ctx, client.HoldRequest{OrderID: order, CouponCodes: codes, Lines: cart, UserID: client.Ptr(shopper)})
	if err != nil {
		return err
	}
	fmt.Println("hold:", held.Result, held.PayableCents)
	var replayed bool
	confirmed, err := checkout.ConfirmHold(ctx, order, client.ConfirmRequest{Lines: cart},
		client.IdempotencyKey("confirm-"+order), client.Replayed(&replayed))
	if err != nil {
		return err
	}
	fmt.Println("confirm:", confirmed.Result, confirmed.PayableCents, "sent", lossy.confirms.Load(), "times, replayed", replayed)

	// The shopper sends the socks back: they get what they paid for them.
	returned, err := checkout.ReturnLines(ctx, order, "rma-"+suffix, []client.ReturnLineRequest{{LineID: "2", Quantity: 2}})
	if err != nil {
		return err
	}
	fmt.Println("return:", returned.Result, returned.RefundCents, returned.DiscountReturnedCents)

	if err := receiveWebhook(ctx, admin, order); err != nil {
		return err
	}

	// Paging: the shopper's coupons, one a page.
	n := 0
	for c, err := range appClient.ListUserCouponsAll(ctx, shopper, client.ListUserCouponsParams{Limit: client.Ptr[int64](1)}) {
		if err != nil {
			return err
		}
		n++
		fmt.Println("coupon of", shopper == c.UserID, c.Status)
	}
	fmt.Println("coupons:", n)
	return nil
}

// receiveWebhook delivers the order's coupon.redeemed event, as the service
// signs a delivery, to a receiver of the shop's, which verifies it and
// decodes it into the typed event.
func receiveWebhook(ctx context.Context, admin *client.Client, order string) error {
	const secret = "whsec-the-shops-secret"
	var event *client.Event
	for ev, err := range admin.ListEventsAll(ctx, client.ListEventsParams{}) {
		if err != nil {
			return err
		}
		if ev.Type == client.EventTypeCouponRedeemed && strings.Contains(fmt.Sprint(ev.Data), order) {
			event = &ev
		}
	}
	if event == nil {
		return errors.New("no coupon.redeemed event of the order in the feed")
	}
	got := make(chan string, 1)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ev, data, err := webhook.ReadEvent(r, 0, secret)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			got <- "refused: " + err.Error()
			return
		}
		redeemed := data.(*client.CouponEvent)
		got <- fmt.Sprintf("%s %s %d", ev.Type, redeemed.Status, *redeemed.DiscountCents)
	}))
	defer receiver.Close()
	body, err := json.Marshal(event)
	if err != nil {
		return err
	}
	for _, sig := range []string{webhook.Sign("not-the-secret", time.Now(), body), webhook.Sign(secret, time.Now(), body)} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, receiver.URL, bytes.NewReader(body))
		req.Header.Set(webhook.Header, sig)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		fmt.Println("webhook:", resp.StatusCode, <-got)
	}
	return nil
}

// loseFirstConfirm is a transport that sends the first confirm of a hold
// but loses its answer, as a dropped connection would.
type loseFirstConfirm struct {
	next     http.RoundTripper
	confirms atomic.Int32
}

func (l *loseFirstConfirm) RoundTrip(r *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(r.URL.Path, "/confirm") {
		return l.next.RoundTrip(r)
	}
	resp, err := l.next.RoundTrip(r)
	if l.confirms.Add(1) == 1 && err == nil {
		resp.Body.Close()
		return nil, errors.New("connection reset by peer (the answer was lost)")
	}
	return resp, err
}
