package api

import (
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/admin"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/events"
	"github.com/couponsvc/couponsvc/services/reconcile"
	"github.com/couponsvc/couponsvc/services/reports"
)

// The answers of the API: each route's row (routes.go) names one of these
// (or web.NoPayload) as its Answer, its handler sends exactly that type
// (web.Respond refuses another), and the OpenAPI document describes it as a
// schema of that name. Each is the payload after code, result and error. The
// answers of validate, holds and jobs are in checkout.go and jobs.go.

type campaignAnswer struct {
	Campaign models.Campaign `json:"campaign"`
}

type campaignsAnswer struct {
	Campaigns []models.Campaign `json:"campaigns"`
	Next
}

type templateAnswer struct {
	Template models.Template `json:"template"`
}

type templatesAnswer struct {
	Templates []core.TemplateView `json:"templates"`
	Next
}

// templateStockAnswer is a template with the stock left.
type templateStockAnswer struct {
	Template  models.Template `json:"template"`
	Remaining *int64          `json:"remaining" doc:"stock left; null when Redis cannot tell"`
}

type statsAnswer struct {
	Stats reports.TemplateStats `json:"stats"`
}

type claimAnswer struct {
	Coupon    models.CouponView `json:"coupon"`
	Remaining int64             `json:"remaining" doc:"stock left after this claim"`
}

type redeemAnswer struct {
	Coupon           models.CouponView `json:"coupon"`
	OrderAmountCents int64             `json:"order_amount_cents" doc:"the order amount the discount was computed on"`
	DiscountCents    int64             `json:"discount_cents" doc:"fixed: min(face value, amount); percent: floor(amount × percent / 100) capped; on an order with other coupons, priced on what they leave (docs/pricing.md)"`
	PayableCents     int64             `json:"payable_cents" doc:"order amount − every discount on the order"`
	// An order with lines: the coupon's part of each line and of the
	// shipping.
	cartAnswer
}

// refundAnswer is a whole refund (coupon, stock_returned) or a partial
// return (partial and the amounts).
type refundAnswer struct {
	Currency          string             `json:"currency" schema:"currency" doc:"the currency of every amount of the answer: the order's (a whole refund: its coupon's)"`
	Coupon            *models.CouponView `json:"coupon,omitempty" doc:"a whole refund: the coupon"`
	StockReturned     *bool              `json:"stock_returned,omitempty" doc:"a whole refund: the coupon went back to the pool (policy recycle)"`
	Partial           bool               `json:"partial,omitempty" doc:"a partial return (return_id and returned_amount_cents)"`
	KeptAmountCents   *int64             `json:"kept_amount_cents,omitempty" doc:"a partial return: the order amount less every return so far"`
	DiscountKeptCents *int64             `json:"discount_kept_cents,omitempty" doc:"a partial return: the discount the order's coupons give on the kept amount"`
	ClawbackCents     *int64             `json:"clawback_cents,omitempty" deprecated:"true" doc:"deprecated: the same as discount_returned_cents, which a partial return now always carries; to be left out in a later version"`
	FullRefund        *bool              `json:"full_refund,omitempty" doc:"a partial return that completed the order: its coupons were refunded by their templates' policy"`
	// A return by line also carries:
	Lines                         []models.ReturnedLine `json:"lines,omitempty" doc:"a return by line: per line, the units returned, what the shopper gets back for them and their stored discount"`
	RefundCents                   *int64                `json:"refund_cents,omitempty" doc:"a return by line: what the shopper gets back for the returned units (their price less their discount)"`
	DiscountReturnedCents         *int64                `json:"discount_returned_cents,omitempty" doc:"a partial return: the discount given back to the campaigns, the discount given before this return less the discount kept (by line: the lines' and, with the return that completes the order, the shipping's)"`
	ShippingDiscountReturnedCents *int64                `json:"shipping_discount_returned_cents,omitempty" doc:"a return by line: the coupons' discount of the shipping, given back by the return that completes the order"`
}

type usableAnswer struct {
	checkout.Usable
}

type eventsAnswer struct {
	events.EventPage
}

type webhookCreatedAnswer struct {
	events.CreatedWebhook
}

type endpointsAnswer struct {
	Endpoints []models.WebhookEndpoint `json:"endpoints"`
	Next
}

type endpointAnswer struct {
	Endpoint models.WebhookEndpoint `json:"endpoint"`
}

type attemptsAnswer struct {
	Attempts []models.WebhookAttempt `json:"attempts"`
	Next
}

type deliveryAnswer struct {
	Delivery models.WebhookDelivery `json:"delivery"`
}

type couponAnswer struct {
	core.CouponDetail
}

type revokeAnswer struct {
	Coupon        models.CouponView `json:"coupon"`
	StockReturned bool              `json:"stock_returned" doc:"the coupon no longer holds stock"`
}

type couponsAnswer struct {
	Coupons []models.CouponView `json:"coupons"`
	Next
}

type tokenCreatedAnswer struct {
	Token     string          `json:"token" doc:"the token: shown this once, stored hashed"`
	TokenInfo models.APIToken `json:"token_info"`
}

type tokensAnswer struct {
	Tokens []admin.TokenView `json:"tokens"`
	Next
}

type tokenAnswer struct {
	Token admin.TokenView `json:"token"`
}

type userAnswer struct {
	User models.User `json:"user"`
}

type reconcileAnswer struct {
	reconcile.ReconcileReport
}

// valueOf is what p points to, or the zero value: an answer carries the
// value a service returned with no error (web.Answer sends nothing else).
func valueOf[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
