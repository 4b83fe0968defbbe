package models

import (
	"encoding/json"
	"time"
)

// The event types (docs/events.md). A type's name and its data's fields are
// part of the public contract and never change meaning.
const (
	EventCouponClaimed           = "coupon.claimed"
	EventCouponRedeemed          = "coupon.redeemed"
	EventCouponRefunded          = "coupon.refunded"
	EventCouponRevoked           = "coupon.revoked"
	EventCouponHeld              = "coupon.held"
	EventCouponReleased          = "coupon.released"
	EventCouponHoldExpired       = "coupon.hold_expired"
	EventTemplateSoldOut         = "template.sold_out"
	EventTemplatePaused          = "template.paused"
	EventTemplateResumed         = "template.resumed"
	EventTemplateArchived        = "template.archived"
	EventCampaignBudgetExhausted = "campaign.budget_exhausted"
	EventOrderReturned           = "order.returned"
	// EventWebhookTest is sent to one endpoint when an admin asks for a
	// test delivery; no change of the coupons writes it.
	EventWebhookTest = "webhook.test"
)

// EventTypes lists every event type, in the order docs/events.md shows them.
var EventTypes = []string{
	EventCouponClaimed, EventCouponRedeemed, EventCouponRefunded, EventCouponRevoked,
	EventCouponHeld, EventCouponReleased, EventCouponHoldExpired,
	EventTemplateSoldOut, EventTemplatePaused, EventTemplateResumed, EventTemplateArchived,
	EventOrderReturned, EventCampaignBudgetExhausted, EventWebhookTest,
}

// IsEventType reports whether name is one of EventTypes.
func IsEventType(name string) bool {
	for _, t := range EventTypes {
		if t == name {
			return true
		}
	}
	return false
}

// Event is one row of the outbox: written in the transaction of the change it
// tells of, so it exists exactly when the change committed. Its JSON is the
// body of a webhook delivery and an item of the pull feed.
type Event struct {
	ID        int64           `gorm:"primaryKey" json:"id" doc:"unique, increasing; a repeat of a delivery carries the same id"`
	Type      string          `json:"type" schema:"event_type"`
	CreatedAt time.Time       `json:"created_at"`
	Data      json.RawMessage `json:"data" doc:"the event's payload; its fields per type are in docs/events.md"`
}

// TableName is the outbox table.
func (Event) TableName() string { return "events" }

// CouponEvent is the data of the coupon.* events: the coupon after the
// change.
type CouponEvent struct {
	CouponID   int64  `json:"coupon_id"`
	Code       string `json:"code"`
	TemplateID int64  `json:"template_id"`
	CampaignID int64  `json:"campaign_id"`
	UserID     string `json:"user_id"`
	Status     string `json:"status" doc:"the coupon's stored status after the change"`
	ValueCents int64  `json:"value_cents"`
	// Currency is that of every amount of the event: the template's.
	Currency string `json:"currency" schema:"currency"`
	// OrderID names the order of a redemption, refund, hold, release or
	// expiry.
	OrderID          string     `json:"order_id,omitempty"`
	OrderAmountCents int64      `json:"order_amount_cents,omitempty"`
	DiscountCents    int64      `json:"discount_cents,omitempty"`
	ValidUntil       *time.Time `json:"valid_until,omitempty"`
	HoldExpiresAt    *time.Time `json:"hold_expires_at,omitempty"`
	StockReturned    bool       `json:"stock_returned,omitempty"`
	Actor            string     `json:"actor,omitempty"`
	// Reason and ReasonText are a revoke's public reason (a key of
	// RevokePublicReasons) and the words the shopper's wallet shows for it;
	// the admin's note stays in the audit log.
	Reason     string `json:"reason,omitempty" doc:"coupon.revoked: the public reason, one of issued_in_error, fraud_suspected, offer_withdrawn, replaced, other (the admin's note is never sent)"`
	ReasonText string `json:"reason_text,omitempty" doc:"coupon.revoked: the words the shopper's wallet shows for the public reason"`
	// Lines and ShippingDiscountCents are the coupon's allocation on an
	// order with lines (coupon.held, coupon.redeemed): its discount on each
	// line it discounts and on the shipping; left out for an amount-only
	// order.
	Lines                 []EventLine `json:"lines,omitempty" doc:"the coupon's discount on each line of an order with lines"`
	ShippingDiscountCents *int64      `json:"shipping_discount_cents,omitempty" doc:"the coupon's discount on the shipping of an order with lines"`
}

// EventLine is a coupon's discount on one line of an order.
type EventLine struct {
	LineID        string `json:"line_id"`
	DiscountCents int64  `json:"discount_cents"`
}

// NewCouponEvent fills a CouponEvent from a coupon of a template in that
// currency.
func NewCouponEvent(c *Coupon, currency string) CouponEvent {
	e := CouponEvent{CouponID: c.ID, Code: c.Code, TemplateID: c.TemplateID, CampaignID: c.CampaignID,
		UserID: c.UserID, Status: c.Status, ValueCents: c.ValueCents, Currency: currency}
	until := c.ValidUntil
	e.ValidUntil = &until
	if c.OrderID != nil {
		e.OrderID = *c.OrderID
	}
	return e
}

// TemplateEvent is the data of the template.* events.
type TemplateEvent struct {
	TemplateID int64  `json:"template_id"`
	CampaignID int64  `json:"campaign_id"`
	Name       string `json:"name"`
	Status     string `json:"status"`
	TotalStock int64  `json:"total_stock"`
	Actor      string `json:"actor,omitempty"`
}

// WebhookTestEvent is the data of webhook.test: which endpoint it was
// sent to and who asked for it.
type WebhookTestEvent struct {
	EndpointID int64  `json:"endpoint_id"`
	Actor      string `json:"actor"`
	Message    string `json:"message" doc:"a sentence saying that this is a test; nothing changed"`
}

// BudgetEvent is the data of campaign.budget_exhausted.
type BudgetEvent struct {
	CampaignID int64 `json:"campaign_id"`
	// TemplateID is the template whose claim used the budget up for coupons
	// of its value.
	TemplateID           int64 `json:"template_id"`
	RemainingBudgetCents int64 `json:"remaining_budget_cents"`
	ValueCents           int64 `json:"value_cents"`
	// Currency is the campaign's, of both amounts.
	Currency string `json:"currency" schema:"currency"`
}

// OrderReturnEvent is the data of order.returned: one return of an order,
// partial or the one that completes it, with the order's figures after it.
type OrderReturnEvent struct {
	OrderID             string `json:"order_id"`
	ReturnID            string `json:"return_id"`
	ReturnedAmountCents int64  `json:"returned_amount_cents" doc:"this return"`
	Currency            string `json:"currency" schema:"currency" doc:"the order's currency, of every amount of the event"`
	OrderAmountCents    int64  `json:"order_amount_cents"`
	ReturnedTotalCents  int64  `json:"returned_total_cents" doc:"every return of the order so far, this one included"`
	KeptAmountCents     int64  `json:"kept_amount_cents"`
	DiscountKeptCents   int64  `json:"discount_kept_cents"`
	ClawbackCents       int64  `json:"clawback_cents"`
	// FullRefund tells that this return completed the order: its coupons
	// are refunded (each with its coupon.refunded event).
	FullRefund bool   `json:"full_refund"`
	Actor      string `json:"actor,omitempty"`
	// Lines are the units returned by a return by line, each with what the
	// shopper got back for them and their stored discount; empty for a
	// return of an amount. RefundCents and DiscountReturnedCents are their
	// sums, the latter with ShippingDiscountReturnedCents, the coupons'
	// discount of the shipping, given back by the return that completes
	// the order (docs/returns.md).
	Lines                         []ReturnedLine `json:"lines,omitempty" doc:"a return by line: the units returned, per line"`
	RefundCents                   int64          `json:"refund_cents,omitempty" doc:"a return by line: what the shopper gets back for the units"`
	DiscountReturnedCents         int64          `json:"discount_returned_cents,omitempty" doc:"a return by line: the discount given back to the campaigns"`
	ShippingDiscountReturnedCents int64          `json:"shipping_discount_returned_cents,omitempty" doc:"a return by line that completes the order: the coupons' discount of the shipping"`
}

// ReturnedLine is one line of a return by line: Quantity units of the
// order's line LineID. RefundCents is what the shopper paid for them (their
// price less their stored discount), DiscountCents that stored discount,
// which goes back to the campaigns' spent budget.
type ReturnedLine struct {
	LineID        string `json:"line_id"`
	Quantity      int64  `json:"quantity"`
	RefundCents   int64  `json:"refund_cents"`
	DiscountCents int64  `json:"discount_cents"`
}
