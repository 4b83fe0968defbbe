package models

import "time"

// Coupon statuses as stored. "expired" is never stored: it is an issued coupon
// past valid_until, reported by EffectiveStatus.
const (
	CouponIssued  = "issued"
	CouponHeld    = "held" // bound to order_id until hold_expires_at
	CouponUsed    = "used"
	CouponRevoked = "revoked"
	CouponExpired = "expired"
)

// BearerUserID is the user_id of a bearer coupon: made in advance, counted
// against stock, owned by nobody until the first user holds or redeems it
// with a user_id (docs/shared-codes.md).
const BearerUserID = ""

// Coupon is one claimed coupon (table user_coupons). Slot and UserOrdinal hold
// the claim's place in the template's stock (1..total_stock) and in the user's
// limit (1..per_user_limit); unique indexes on them make the database refuse an
// oversell even when Redis is wrong. A coupon that gives its stock back has both
// set to NULL.
type Coupon struct {
	ID          int64      `gorm:"primaryKey" json:"id"`
	Code        string     `json:"code"`
	TemplateID  int64      `json:"template_id"`
	CampaignID  int64      `json:"campaign_id"`
	UserID      string     `json:"user_id"`
	Status      string     `json:"status"`
	Slot        *int64     `json:"slot,omitempty"`
	UserOrdinal *int64     `json:"user_ordinal,omitempty"`
	RequestID   string     `json:"-"`
	ValueCents  int64      `json:"value_cents"`
	ClaimedAt   time.Time  `json:"claimed_at"`
	ValidFrom   time.Time  `json:"valid_from"`
	ValidUntil  time.Time  `json:"valid_until"`
	UsedAt      *time.Time `json:"used_at,omitempty"`
	OrderID     *string    `json:"order_id,omitempty"`
	// HoldExpiresAt is set while the coupon is held for OrderID.
	HoldExpiresAt *time.Time `json:"hold_expires_at,omitempty"`
	// ClaimOrderID is set on a coupon claimed with a shared code inside a
	// hold or redemption of that order: releasing the order gives the claim
	// back (docs/shared-codes.md).
	ClaimOrderID *string   `json:"claim_order_id,omitempty"`
	Version      int64     `json:"version"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// TableName keeps the table name of the design notes.
func (Coupon) TableName() string { return "user_coupons" }

// EffectiveStatus is the status shown to people: an issued coupon past its
// validity is expired.
func (c *Coupon) EffectiveStatus(now time.Time) string {
	status := c.Status
	if status == CouponHeld && c.HoldExpiresAt != nil && !now.Before(*c.HoldExpiresAt) {
		// A hold past its time is over for everyone, whether or not the
		// sweeper has written it yet (docs/checkout.md).
		status = CouponIssued
	}
	if status == CouponIssued && !now.Before(c.ValidUntil) {
		return CouponExpired
	}
	return status
}

// CouponView is a coupon as the API shows it, with its effective status
// and the currency of its value (its template's).
type CouponView struct {
	Coupon
	Status   string `json:"status" schema:"coupon_status" doc:"the effective status: an issued coupon past its validity is expired"`
	Currency string `json:"currency" schema:"currency" doc:"the ISO 4217 currency of value_cents: the template's"`
}

// View returns the coupon as shown at now; currency is its template's.
func (c *Coupon) View(now time.Time, currency string) CouponView {
	return CouponView{Coupon: *c, Status: c.EffectiveStatus(now), Currency: currency}
}

// UseLog is one redemption of a coupon (table coupon_use_log). A unique index on
// (coupon_id, order_id) refuses a second row for the same order; undo_flag marks
// a refunded redemption.
type UseLog struct {
	ID               int64      `gorm:"primaryKey" json:"id"`
	CouponID         int64      `json:"coupon_id"`
	OrderID          string     `json:"order_id"`
	UserID           string     `json:"user_id"`
	TemplateID       int64      `json:"template_id"`
	OrderAmountCents int64      `json:"order_amount_cents"`
	DiscountCents    int64      `json:"discount_cents"`
	Cashier          string     `json:"cashier"`
	UsedAt           time.Time  `json:"used_at"`
	UndoFlag         bool       `json:"undo_flag"`
	UndoneAt         *time.Time `json:"undone_at,omitempty"`
	// PayableCents is what the order paid after every coupon on it when
	// the redemption was answered, kept for its replays; nil on the rows
	// of confirms and on those written before it was kept.
	PayableCents *int64 `json:"-"`
	// Actions is each action's part of an amount-only order's coupon, what
	// it took and what it keeps after the order's returns by amount (JSON,
	// docs/pricing.md, "Several actions"); nil on the rows of orders with
	// lines and on those written before it was kept.
	Actions *string `json:"-"`
}

// TableName keeps the table name of the design.
func (UseLog) TableName() string { return "coupon_use_log" }

// AuditEntry records who did what to which object, when and why.
type AuditEntry struct {
	ID        int64     `gorm:"primaryKey" json:"id"`
	Actor     string    `json:"actor"`
	Action    string    `json:"action"`
	Target    string    `json:"target"`
	Detail    string    `json:"detail"`
	CreatedAt time.Time `json:"created_at"`
}

// TableName names the audit table.
func (AuditEntry) TableName() string { return "audit_log" }
