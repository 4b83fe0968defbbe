package checkout

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/pricing"

	"github.com/bsm/redislock"
	"gorm.io/gorm"
)

// Hold states of an order (checkout_orders.hold_state).
const (
	HoldHeld      = "held"
	HoldConfirmed = "confirmed"
	HoldReleased  = "released"
	HoldExpired   = "expired"
)

// Bounds of a hold's time to live, in seconds, and its default.
const (
	MinHoldTTL     = 5
	MaxHoldTTL     = 86400
	DefaultHoldTTL = 900
)

// DefaultMaxCouponsPerOrder is the cap on the coupons of one order when
// Config.MaxCouponsPerOrder is not set.
const DefaultMaxCouponsPerOrder = 5

// HoldExpiryBatch bounds the holds one expiry pass releases.
const HoldExpiryBatch = 200

// CheckoutOrder is an order's row in checkout_orders: the lock of every hold
// and redemption on the order, and the counter the database refuses a clash
// of stacking rules with.
type CheckoutOrder struct {
	OrderID       string `gorm:"primaryKey"`
	Stacking      string
	Coupons       int64
	AmountCents   int64
	ReturnedCents int64
	HoldState     *string
	HoldCodes     *string
	HoldExpiresAt *time.Time
	DiscountCents int64
	// Currency, CartHash and ShippingCents are those of an order with
	// lines (docs/checkout.md, "Carts"); an amount-only order has no hash.
	Currency      string
	CartHash      *string
	ShippingCents int64
	UpdatedAt     time.Time
	// HoldParked says the order's hold parked earlier rows of its coupons
	// (coupons refunded off the order and held on it again): a release or
	// an expiry puts them back, and only then (docs/checkout.md, "The
	// order state and the plan").
	HoldParked bool
}

// Lined says the order has lines (order_lines rows).
func (o *CheckoutOrder) Lined() bool { return o.CartHash != nil && *o.CartHash != "" }

// sameCart says a request's cart is the order's.
func (o *CheckoutOrder) sameCart(oc orderCart) bool {
	if o.CartHash == nil {
		return oc.hash == ""
	}
	return *o.CartHash == oc.hash
}

func (CheckoutOrder) TableName() string { return "checkout_orders" }

// CheckoutCoupon is one coupon of a checkout answer: its discount on the
// order, or (in a validation) the word of why it does not apply.
type CheckoutCoupon struct {
	CouponCode    string      `json:"coupon_code"`
	Result        string      `json:"result"`
	Code          models.Code `json:"code"`
	Message       string      `json:"message,omitempty"`
	DiscountCents int64       `json:"discount_cents"`
	TemplateID    int64       `json:"template_id"`
	// SharedCode is the shared code the coupon was (or, in a validation,
	// would be) claimed with at this checkout (docs/shared-codes.md).
	SharedCode string `json:"shared_code,omitempty"`
	// Automatic marks an automatic offer, which the cart took without a
	// code (docs/automatic-offers.md).
	Automatic bool `json:"automatic,omitempty"`
}

// CheckoutRequest names an order and the coupons meant for it.
type CheckoutRequest struct {
	OrderID          string
	OrderAmountCents int64
	// CouponCodes are coupon codes or shared codes (docs/shared-codes.md).
	CouponCodes []string
	// UserID, when given, must hold every coupon (or become the owner of a
	// bearer coupon); without it a shared code claims for an anonymous
	// shopper (docs/shared-codes.md).
	UserID string
	// TTLSeconds is a hold's time to live (5..86400; 0 means 900).
	TTLSeconds int
	// Actor is who asks (the caller's name), for the audit entries.
	Actor string
	// OwnOnly says the request is the shopper's own (the shop's pages):
	// with UserID, only the shopper's coupons and shared codes are taken;
	// another user's coupon and a bearer coupon are answered as a code no
	// coupon has (hiddenFrom, docs/pages.md).
	OwnOnly bool
	// Cart is the request's cart: lines (then OrderAmountCents, when not 0,
	// must be their total), or none for an amount-only request.
	Cart Cart
	// Choose is models.ChooseAll (or empty): every code priced, as a hold
	// would; or models.ChooseBest: the best set of the codes and, with
	// UserID, the user's own usable coupons (validate only: checkout_best.go).
	Choose string
	// shared marks the codes parseCheckout read as shared codes, and the
	// automatic offers addAutomatic added.
	shared []bool
	// auto holds, at the place of an automatic offer addAutomatic added,
	// its template (nil elsewhere; docs/automatic-offers.md).
	auto []*models.Template
	// notApplied is every live offer of the cart's currency left out of
	// the request, with why (addAutomatic, claimSharedCodes).
	notApplied []OfferNotApplied
	// noSuch marks the codes Validate answers as codes no coupon has, on
	// their lines (checkout_validate.go); with answerNoSuch, parseCheckout
	// marks a code no coupon can have (a mistyped one) instead of refusing.
	noSuch       []bool
	answerNoSuch bool
	// cart is the cart priced (parseCheckout), oc what the order's row
	// keeps of it.
	cart pricing.Cart
	oc   orderCart
	// taken is what the coupons already on the order (redeemed one step
	// at a time) took of its cart with lines: a hold is priced on what
	// they left (pricing.Pricer.PriceAfter).
	taken pricing.Taken
	// settled is the part of taken the coupons refunded off the order
	// took of what it kept: paid, but no coupon's on the order now, so
	// the payable does not count it (orderState.settledKept).
	settled int64
	// carry is, per coupon of the request refunded off the order, what
	// it keeps of its earlier part there (orderState.carried): a hold
	// writes it beside its new part.
	carry map[int64]map[int][]pricing.UnitRun
	// park is the request's coupons whose earlier rows on the order (they
	// were refunded off it) a hold parks until it ends (lines.go), from
	// the order's state: a hold that parks none ends without putting any
	// back.
	park []int64
	// onOrder is the templates of the coupons the order already carries
	// (but the request's), which a hold of one more coupon of the same
	// template refuses (addOrderCoupons): validate reads it.
	onOrder map[int64]bool
	// noRoom says the order's row has no room for the request's coupons
	// (takeRoom's condition): validate reads it.
	noRoom bool
	// order is the order's row validate read (nil: none), for the room the
	// best-of choice has on it.
	order *CheckoutOrder
	// facts is what the templates' eligibility rules are judged on
	// (readFacts), read once per request.
	facts *facts
}

// CheckoutResult is the answer of Validate, Hold, GetHold and Confirm.
// Result is "ok" (validate), "held", "redeemed" or the word of the first
// coupon that failed (validate). Duplicate marks a replay answered with the
// first answer.
type CheckoutResult struct {
	Result           string           `json:"result"`
	Duplicate        bool             `json:"-"`
	OrderID          string           `json:"order_id,omitempty"`
	State            string           `json:"state,omitempty"`
	Late             bool             `json:"late"`
	ExpiresAt        *time.Time       `json:"expires_at,omitempty"`
	Coupons          []CheckoutCoupon `json:"coupons"`
	OrderAmountCents int64            `json:"order_amount_cents"`
	DiscountCents    int64            `json:"discount_cents"`
	PayableCents     int64            `json:"payable_cents"`
	// Currency is the order's, of every amount: its cart's, or for an
	// amount-only order the one it was given in (the deployment's by
	// default).
	Currency string `json:"currency"`
	// Lines and ShippingDiscountCents are given for a cart with lines
	// only: each line's discount with each coupon's part, and the discount
	// on the shipping.
	Lines                 []LineDiscount `json:"lines,omitempty"`
	ShippingDiscountCents *int64         `json:"shipping_discount_cents,omitempty"`
	// LeftOut is, for a validation that chose the best coupons, every
	// coupon it weighed and left out, with why (checkout_best.go).
	LeftOut []LeftOutCoupon `json:"left_out,omitempty"`
	// AutomaticNotApplied is, for a validation, every live automatic
	// offer of the cart's currency that does not join the cart, with why
	// (docs/automatic-offers.md); absent when none is left out.
	AutomaticNotApplied []OfferNotApplied `json:"automatic_not_applied,omitempty"`
	// alloc is the pricing decide made (nil when read back).
	alloc *allocation
}

// setLines puts an allocation's lines in the answer (an order with lines).
func (r *CheckoutResult) setLines(a *allocation) {
	if a == nil || !a.lined {
		return
	}
	r.Lines, r.ShippingDiscountCents = a.lines, ptrTo(a.shipping)
}

// priced is the coupons of a request as read, with their templates, in the
// order of the request's codes. claims holds, at the place of a shared code,
// its claim for the order (nil elsewhere); fail, a refusal a validation
// found before pricing (a shared code that could not be claimed now).
type priced struct {
	codes     []string
	coupons   []*models.Coupon
	templates []*models.Template
	claims    []*sharedClaim
	fail      []error
}

func (s *Checkout) maxPerOrder() int { return s.cfg.MaxCouponsPerOrder }

// MaxCouponCodes is the bound of a request's coupon_codes, which the pages
// and the API document state: the cap on the coupons of one order this
// service was configured with, never under DefaultMaxCouponsPerOrder, so
// that codes past a lower cap are refused by the stacking rule, each on
// its line (docs/checkout.md, "The cap on an order's coupons").
func (s *Checkout) MaxCouponCodes() int { return max(DefaultMaxCouponsPerOrder, s.maxPerOrder()) }

// parseCheckout checks what every checkout request carries; orderRequired
// says whether order_id must be given.
func (s *Checkout) parseCheckout(ctx context.Context, req *CheckoutRequest, orderRequired bool) error {
	if orderRequired || req.OrderID != "" {
		if err := core.ValidateOrderID(req.OrderID); err != nil {
			return err
		}
	}
	if req.UserID != "" {
		if err := models.ValidateUserID("user_id", req.UserID); err != nil {
			return err
		}
	}
	if n := s.MaxCouponCodes(); len(req.CouponCodes) > n {
		return models.Invalid("coupon_codes", "must hold 1 to %d codes", n)
	} else if len(req.CouponCodes) < 1 {
		// No code typed: an automatic offer live may make the cart's.
		if live, err := s.anyAutomatic(ctx); err != nil {
			return err
		} else if !live {
			return models.Invalid("coupon_codes", "must hold 1 to %d codes", n)
		}
	}
	seen := map[string]bool{}
	codes := make([]string, len(req.CouponCodes))
	req.shared, req.noSuch = make([]bool, len(req.CouponCodes)), make([]bool, len(req.CouponCodes))
	for i, raw := range req.CouponCodes {
		code, err := models.ParseCouponCode("coupon_codes", raw)
		if shared, serr := s.readsAsShared(ctx, raw, err); serr != nil {
			return serr
		} else if shared {
			code, err = models.ParseSharedCode("coupon_codes", raw)
			req.shared[i] = true
		}
		if err != nil && req.answerNoSuch && len(raw) <= models.MaxTypedCodeLen && models.IsCode(err, models.CodeInvalidRequest) {
			code, err, req.shared[i], req.noSuch[i] = raw, nil, false, true
		}
		if err != nil {
			return err
		}
		if seen[code] {
			return models.Invalid("coupon_codes", "names %s twice", code)
		}
		seen[code] = true
		codes[i] = code
	}
	req.CouponCodes = codes
	cart, err := s.parseCart(req.Cart, req.OrderAmountCents)
	if err != nil {
		return err
	}
	req.cart, req.OrderAmountCents = cart, cart.TotalCents()
	if orderRequired {
		// The cart's hash is for the order's row, which a hold writes; a
		// validation writes nothing and skips it (docs/statements.md,
		// "Validate").
		req.oc = orderCartOf(req.Cart, &req.cart)
	}
	return nil
}

// readCoupons reads the request's coupons and their templates.
func (s *Checkout) readCoupons(ctx context.Context, codes []string) (*priced, error) {
	return s.readCheckout(ctx, codes, nil)
}

// readCheckout reads the request's coupons and their templates; at the
// place of a claim (claims[i] not nil) it takes the claim's coupon, which
// is not in the database yet, and the claim's refusal, if any.
func (s *Checkout) readCheckout(ctx context.Context, codes []string, claims []*sharedClaim) (*priced, error) {
	return s.readOwnCoupons(ctx, codes, claims, "", false)
}

// hiddenFrom says that coupon c is answered to owner as a code no coupon
// has: it is another user's, or, for a request of the shopper's own
// (ownOnly), a bearer coupon, which guessing its code must not make the
// guesser's. Without an owner nothing is hidden. Every read of a checkout's
// coupons for a user asks it (docs/pages.md, "Checkout").
func hiddenFrom(c *models.Coupon, owner string, ownOnly bool) bool {
	if owner == "" || c.UserID == owner {
		return false
	}
	return c.UserID != models.BearerUserID || ownOnly
}

// readOwnCoupons is readCheckout, code by code in the request's order; with an
// owner, the first code that is another user's (not bearer) coupon is
// answered as a code no coupon has, before any template is read.
func (s *Checkout) readOwnCoupons(ctx context.Context, codes []string, claims []*sharedClaim, owner string, ownOnly bool) (*priced, error) {
	return s.readWith(ctx, codes, claims, owner, ownOnly, func(code string) (*models.Coupon, error) { return s.CouponByCode(ctx, code) })
}

// readWith is the one reader of a checkout's coupons (hold, confirm,
// validate): code by code in the request's order, a claim's coupon at its
// place, else the coupon find gives (one SELECT each, or a lookup in rows
// read at once); a coupon hiddenFrom the owner is answered as a code no
// coupon has, before its template is read.
func (s *Checkout) readWith(ctx context.Context, codes []string, claims []*sharedClaim, owner string, ownOnly bool,
	find func(code string) (*models.Coupon, error)) (*priced, error) {
	p := &priced{codes: codes, claims: make([]*sharedClaim, len(codes)), fail: make([]error, len(codes))}
	for i, code := range codes {
		if i < len(claims) && claims[i] != nil {
			p.claims[i], p.fail[i] = claims[i], claims[i].refusal
			p.coupons = append(p.coupons, claims[i].coupon)
			p.templates = append(p.templates, claims[i].t)
			continue
		}
		c, err := find(code)
		if err != nil {
			return nil, err
		}
		if hiddenFrom(c, owner, ownOnly) {
			return nil, core.NoSuchCoupon(code, nil)
		}
		t, err := s.Template(ctx, c.TemplateID)
		if err != nil {
			return nil, err
		}
		p.coupons = append(p.coupons, c)
		p.templates = append(p.templates, t)
	}
	return p, nil
}

// couponFits says why one coupon cannot go on the order (nil when it can):
// the rules of a hold, stacking and minimum aside. A coupon held by orderID
// itself fits.
// A bearer coupon (no owner yet) fits any user: holding or redeeming it
// with a user_id makes that user its owner.
func couponFits(c *models.Coupon, userID, orderID string, now time.Time) error {
	if userID != "" && c.UserID != userID && c.UserID != models.BearerUserID {
		return &models.Error{Code: models.CodeUnauthorized, Forbidden: true, Field: "user_id",
			Message: "this coupon belongs to another user"}
	}
	switch c.Status {
	case models.CouponHeld:
		if orderID != "" && c.OrderID != nil && *c.OrderID == orderID {
			return nil
		}
		if !lapsedHold(c, now) {
			return heldError(c)
		}
		// A hold past its time is expired to everyone, swept or not
		// (docs/checkout.md): the coupon is judged as the issued coupon
		// the expiry makes it (expireLapsed ends the hold before a write).
	case models.CouponUsed:
		return alreadyUsed(c)
	case models.CouponRevoked:
		return models.Errorf(models.CodeRevoked, "this coupon was revoked")
	}
	if err := notYetValid(c.ValidFrom, now); err != nil {
		return err
	}
	if !now.Before(c.ValidUntil) {
		return models.Errorf(models.CodeNotValidNow, "this coupon expired at %s", core.FormatTime(c.ValidUntil))
	}
	return nil
}

// notYetValid refuses a coupon (or the coupon a shared code's claim would
// make) valid only from a time after now.
func notYetValid(from, now time.Time) error {
	if now.Before(from) {
		return models.Errorf(models.CodeNotValidNow, "this coupon is valid from %s", core.FormatTime(from))
	}
	return nil
}

// heldError names the order that holds the coupon and until when.
func heldError(c *models.Coupon) error {
	return models.Errorf(models.CodeHeld, "this coupon is held by %s", orderSince(c.OrderID, " until ", c.HoldExpiresAt))
}

// orderSince names the order that has a coupon ("another order" when it is
// not known) and, when known, the time after word.
func orderSince(orderID *string, word string, at *time.Time) string {
	order := "another order"
	if orderID != nil {
		order = "order " + *orderID
	}
	if at != nil {
		order += word + core.FormatTime(*at)
	}
	return order
}

// stackingError says why the templates cannot share one order (nil when
// they can): more than the cap, two of one template, an exclusive one
// among others (stackingRefusalAt, the first that applies).
func stackingError(ts []*models.Template, maxPerOrder int) error {
	if len(ts) > maxPerOrder {
		return stackingRefusalAt(ts, maxPerOrder, nil, maxPerOrder)
	}
	seen := map[int64]bool{}
	for i, t := range ts {
		if err := stackingRefusalAt(ts, i, seen, maxPerOrder); err != nil {
			return err
		}
		seen[t.ID] = true
	}
	return nil
}

// stackingRefusalAt is the one stacking rule for the i-th of the
// templates of one order (nil when it may stay): past the cap, a second
// coupon of a template (seen holds the templates before it), or an
// exclusive coupon among others.
func stackingRefusalAt(ts []*models.Template, i int, seen map[int64]bool, maxPerOrder int) *models.Error {
	switch t := ts[i]; {
	case i >= maxPerOrder:
		return models.Errorf(models.CodeNotCombinable, "an order carries at most %d coupons", maxPerOrder)
	case seen[t.ID]:
		return models.Errorf(models.CodeNotCombinable, "an order carries at most one coupon of template %d", t.ID)
	case len(ts) > 1 && t.Stacking != models.StackingCombinable:
		return models.Errorf(models.CodeNotCombinable, "a coupon of template %d is exclusive: it is the only coupon on its order", t.ID)
	}
	return nil
}

// stackingOf is the stacking an order takes with these templates.
func stackingOf(ts []*models.Template) string {
	for _, t := range ts {
		if t.Stacking != models.StackingCombinable {
			return models.StackingExclusive
		}
	}
	return models.StackingCombinable
}

// ids is the ids of the coupons read (none for a fresh claim's).
func (p *priced) ids() []int64 {
	out := make([]int64, 0, len(p.coupons))
	for _, c := range p.coupons {
		if c.ID != 0 {
			out = append(out, c.ID)
		}
	}
	return out
}

// decide applies every rule of a hold to the coupons as read and prices
// them on the request's cart (services/pricing): the answer lists each
// coupon with its word, and err is the first failure (nil when all apply).
func (s *Checkout) decide(p *priced, req CheckoutRequest, now time.Time) (*CheckoutResult, error) {
	res := &CheckoutResult{Result: models.CodeOK.Word(), OrderID: req.OrderID, OrderAmountCents: req.OrderAmountCents,
		Currency: req.cart.Currency}
	pcs := make([]pricing.Coupon, len(p.coupons))
	for i, c := range p.coupons {
		pcs[i] = core.PricingCoupon(p.templates[i], c.Code)
	}
	var pr pricing.Result
	var pricer pricing.Pricer
	// PayableCents is after every coupon on the order: req.taken's and
	// these (docs/checkout.md, "The order state and the plan").
	pricer.PriceAfter(&req.cart, req.taken, pcs, &pr)
	a := allocationOf(&pr, &req.cart, req.Cart.Lined())
	var first error
	for i, c := range p.coupons {
		cc := CheckoutCoupon{CouponCode: c.Code, Result: models.CodeOK.Word(), TemplateID: c.TemplateID,
			DiscountCents: pr.Coupons[i].DiscountCents, SharedCode: core.SharedCodeOf(c, p.templates[i]),
			Automatic: p.templates[i].CodeMode == models.CodeModeAutomatic}
		err := p.fail[i]
		if err == nil {
			err = couponFits(c, req.UserID, req.OrderID, now)
		}
		if err == nil {
			err = couponRefusal(&pr.Coupons[i], p.templates[i], &req.cart, req.Cart.Lined(), s.factsOr(req.facts))
		}
		if err != nil {
			var de *models.Error
			errors.As(err, &de)
			cc.Result, cc.Code, cc.Message, cc.DiscountCents = de.Code.Word(), de.Code, de.Message, 0
			if first == nil {
				first = err
			}
		}
		res.Coupons = append(res.Coupons, cc)
	}
	if first == nil {
		first = stackingError(p.templates, s.maxPerOrder())
	}
	if first == nil && req.noRoom {
		first = models.Errorf(models.CodeNotCombinable, "the order already carries a coupon this one cannot share it with")
	}
	for i, t := range p.templates {
		if first == nil && req.onOrder[t.ID] && i < len(res.Coupons) {
			err := sameTemplateOnOrder(req.OrderID, t.ID)
			cc := &res.Coupons[i]
			cc.Result, cc.Code, cc.Message, cc.DiscountCents = err.Code.Word(), err.Code, err.Message, 0
			first = err
		}
	}
	if first != nil {
		res.Result = models.ErrorCode(first).Word()
		res.DiscountCents, res.PayableCents = 0, req.OrderAmountCents
		if req.Cart.Lined() {
			res.Lines, res.ShippingDiscountCents = zeroLines(&req.cart), ptrTo(int64(0))
		}
		return res, first
	}
	res.DiscountCents, res.PayableCents = pr.DiscountCents, pr.PayableCents+req.settled
	res.alloc = a
	res.setLines(a)
	return res, nil
}

func (s *Checkout) ensureOrder(ctx context.Context, orderID string) error {
	err := s.DB.WithContext(ctx).Exec(`INSERT INTO checkout_orders
		(order_id, stacking, coupons, amount_cents, returned_cents, discount_cents, updated_at) VALUES (?, ?, 0, 0, 0, 0, ?)`,
		orderID, models.StackingExclusive, s.Clock()).Error
	if _, dup := core.UniqueViolation(err); dup {
		return nil
	}
	return core.DBError("order", err)
}

// ReadOrder reads the order's row; found is false when there is none. The
// row is scanned by hand (OrderColumns), not by gorm's reflection of the
// model; the SELECT still goes through gorm's chain (docs/statements.md).
func (s *Checkout) ReadOrder(ctx context.Context, orderID string) (o CheckoutOrder, found bool, err error) {
	rs, err := s.DB.WithContext(ctx).Raw(`SELECT `+OrderColumns+` FROM checkout_orders WHERE order_id = ? LIMIT 1`, orderID).Rows()
	if err != nil {
		return o, false, core.DBError("order", err)
	}
	defer rs.Close()
	if !rs.Next() {
		if err := rs.Err(); err != nil {
			return o, false, core.DBError("order", err)
		}
		return o, false, nil
	}
	if err := rs.Scan(&o.OrderID, &o.Stacking, &o.Coupons, &o.AmountCents, &o.ReturnedCents, &o.HoldState, &o.HoldCodes,
		&o.HoldExpiresAt, &o.DiscountCents, &o.Currency, &o.CartHash, &o.ShippingCents, &o.UpdatedAt, &o.HoldParked); err != nil {
		return CheckoutOrder{}, false, core.DBError("order", err)
	}
	return o, true, nil
}

// OrderColumns are every column of checkout_orders, in the order ReadOrder
// scans them (TestOrderColumnsAreTheModels holds them to CheckoutOrder).
const OrderColumns = `order_id, stacking, coupons, amount_cents, returned_cents, hold_state, hold_codes, hold_expires_at,
	discount_cents, currency, cart_hash, shipping_cents, updated_at, hold_parked`

// takeRoom adds n coupons of that stacking to the order inside tx: a guarded
// UPDATE of the order's row that matches nothing when the order has no room
// (an exclusive coupon on it, an exclusive one asked next to others, or the
// cap reached), answered not_combinable. The row lock serialises every
// request on the order, so two of them never both see room for one.
// holdSet, when not empty, is extra SET of a hold's columns.
//
// One order has one amount and one cart (docs/checkout.md, "One amount per
// order"): the first redemption or hold sets amount_cents (and, for a cart
// with lines, cart_hash, currency and shipping_cents), and no later one
// changes them, nor the returns recorded against it (returned_cents), even
// when every coupon left the order meanwhile. A request with another amount
// or cart matches no row and is answered idempotency_mismatch.
func (s *Checkout) takeRoom(tx *gorm.DB, orderID, stacking string, n int, amount int64, oc orderCart, now time.Time, guard, holdSet string, holdArgs ...any) error {
	// amount_cents and stacking come before coupons: MySQL evaluates the SET
	// left to right, and the CASEs must see the row before this change.
	sql := `UPDATE checkout_orders SET
		cart_hash = CASE WHEN amount_cents = 0 THEN ? ELSE cart_hash END,
		currency = CASE WHEN amount_cents = 0 THEN ? ELSE currency END,
		shipping_cents = CASE WHEN amount_cents = 0 THEN ? ELSE shipping_cents END,
		amount_cents = CASE WHEN amount_cents = 0 THEN ? ELSE amount_cents END,
		stacking = CASE WHEN coupons = 0 THEN ? ELSE stacking END,
		coupons = coupons + ?, updated_at = ?` + holdSet + `
		WHERE order_id = ? AND (amount_cents = 0 OR (amount_cents = ? AND COALESCE(cart_hash, '') = ?))
		AND (coupons = 0 OR (stacking = ? AND ? = ? AND coupons + ? <= ?))` + guard
	args := []any{oc.hashArg(), oc.currency, oc.shipping, amount, stacking, n, now}
	args = append(args, holdArgs...)
	args = append(args, orderID, amount, oc.hash, models.StackingCombinable, stacking, models.StackingCombinable, n, s.maxPerOrder())
	res := tx.Exec(sql, args...)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		var o CheckoutOrder
		if err := tx.Where("order_id = ?", orderID).Limit(1).Find(&o).Error; err != nil {
			return err
		}
		if o.OrderID != "" && o.AmountCents != 0 && (o.Lined() || oc.lined()) && !o.sameCart(oc) {
			return cartMismatch(orderID)
		}
		if o.OrderID != "" && o.AmountCents != 0 && o.AmountCents != amount {
			return amountMismatch(orderID, o.AmountCents)
		}
		return errNoRoom
	}
	return nil
}

// amountMismatch answers a request that names an order with another amount
// than the one it has.
func amountMismatch(orderID string, amount int64) error {
	return &models.Error{Code: models.CodeIdempotencyMismatch, Field: "order_amount_cents",
		Message: fmt.Sprintf("order %s is for %d cents: every redemption, hold and confirm of an order carries its one amount", orderID, amount)}
}

// errNoRoom is returned inside a transaction whose order had no room.
var errNoRoom = errors.New("the order has no room for the coupon")

// sameTemplateOnOrder refuses a coupon of a template the order already
// carries a coupon of.
func sameTemplateOnOrder(orderID string, templateID int64) *models.Error {
	return models.Errorf(models.CodeNotCombinable, "order %s already carries a coupon of template %d", orderID, templateID)
}

// addOrderCoupons lists coupons as live on the order, in one multi-row
// INSERT; the unique (order_id, template_id) index refuses a second coupon
// of one template, named by templateOnOrder.
func addOrderCoupons(tx *gorm.DB, orderID string, cs []*models.Coupon, now time.Time) error {
	if len(cs) == 0 {
		return nil
	}
	q := make([]byte, 0, 80+len(cs)*40)
	q = append(q, "INSERT INTO order_coupons (order_id, coupon_id, template_id, created_at) VALUES "...)
	args := make([]any, 0, 2*len(cs))
	for i, c := range cs {
		if i > 0 {
			q = append(q, ',')
		}
		q = append(q, "(?,"...)
		q = strconv.AppendInt(q, c.ID, 10)
		q = append(q, ',')
		q = strconv.AppendInt(q, c.TemplateID, 10)
		q = append(q, ",?)"...)
		args = append(args, orderID, now)
	}
	err := tx.Exec(string(q), args...).Error
	if index, dup := core.UniqueViolation(err); dup && index == core.UniqueOrderTemplate {
		return templateOnOrder(tx, orderID, cs)
	} else if dup {
		return core.ErrRaced // a coupon is on the order already: decide again on a fresh read
	}
	return err
}

// templateOnOrder names the template that made addOrderCoupons' INSERT
// fail on the unique (order_id, template_id) index: one the order already
// carries a coupon of (read inside tx: the failed statement changed
// nothing), else one the coupons share.
func templateOnOrder(tx *gorm.DB, orderID string, cs []*models.Coupon) error {
	ids := make([]int64, len(cs))
	for i, c := range cs {
		ids[i] = c.TemplateID
	}
	if len(cs) > 1 {
		var on []int64
		if err := tx.Raw(`SELECT template_id FROM order_coupons WHERE order_id = ? AND template_id IN ? ORDER BY template_id`, orderID, ids).
			Scan(&on).Error; err != nil {
			return err
		}
		if len(on) > 0 {
			return sameTemplateOnOrder(orderID, on[0])
		}
		for i, id := range ids {
			if slices.Contains(ids[:i], id) {
				return sameTemplateOnOrder(orderID, id)
			}
		}
	}
	return sameTemplateOnOrder(orderID, ids[0])
}

// lockCoupons takes the locks of the coupons, in id order so that two
// requests never wait on each other; release gives them back.
func (s *Checkout) lockCoupons(ctx context.Context, cs []*models.Coupon) (release func(), err error) {
	sorted := slices.Clone(cs)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a].ID < sorted[b].ID })
	var locks []*redislock.Lock
	release = func() {
		for _, l := range locks {
			_ = l.Release(context.WithoutCancel(ctx)) // an expired lock is harmless: the guards decide
		}
	}
	for _, c := range sorted {
		l, _, err := s.LockCoupon(ctx, c)
		if err != nil {
			release()
			return nil, err
		}
		locks = append(locks, l)
	}
	return release, nil
}

// retryCheckout runs op again on errRetry, a bounded number of times.
func retryCheckout(ctx context.Context, op func() error) error {
	for attempt := 1; ; attempt++ {
		err := op()
		if !errors.Is(err, core.ErrRetry) {
			return err
		}
		if attempt == core.MaxCouponAttempts {
			return &models.Error{Code: models.CodeBusy, RetryAfterSeconds: 1, Err: err,
				Message: "the order kept changing while the request ran, try again"}
		}
		select {
		case <-ctx.Done():
			return models.Unavailable("the database", ctx.Err())
		case <-time.After(time.Duration(attempt) * 5 * time.Millisecond):
		}
	}
}

// checkoutTx sorts the error of a checkout transaction as txOutcome does;
// errNoRoom becomes not_combinable.
func checkoutTx(err error) error {
	if errors.Is(err, errNoRoom) {
		return models.Errorf(models.CodeNotCombinable, "the order already carries a coupon this one cannot share it with")
	}
	return core.TxOutcome("order", err)
}

// joinCodes is the canonical list of a hold's codes.
func joinCodes(codes []string) string {
	s := slices.Clone(codes)
	sort.Strings(s)
	return strings.Join(s, ",")
}
func ptrTo[T any](v T) *T { return &v }
