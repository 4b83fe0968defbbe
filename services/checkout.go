package services

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"couponsvc/models"

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

// holdExpiryBatch bounds the holds one expiry pass releases.
const holdExpiryBatch = 200

// checkoutOrder is an order's row in checkout_orders: the lock of every hold
// and redemption on the order, and the counter the database refuses a clash
// of stacking rules with.
type checkoutOrder struct {
	OrderID       string `gorm:"primaryKey"`
	Stacking      string
	Coupons       int64
	AmountCents   int64
	ReturnedCents int64
	HoldState     *string
	HoldCodes     *string
	HoldExpiresAt *time.Time
	DiscountCents int64
	UpdatedAt     time.Time
}

func (checkoutOrder) TableName() string { return "checkout_orders" }

// orderCoupon is a live coupon (held or used) of an order.
type orderCoupon struct {
	OrderID    string `gorm:"primaryKey"`
	CouponID   int64  `gorm:"primaryKey"`
	TemplateID int64
	CreatedAt  time.Time
}

func (orderCoupon) TableName() string { return "order_coupons" }

// CheckoutCoupon is one coupon of a checkout answer: its discount on the
// order, or (in a validation) the word of why it does not apply.
type CheckoutCoupon struct {
	CouponCode    string      `json:"coupon_code"`
	Result        string      `json:"result"`
	Code          models.Code `json:"code"`
	Message       string      `json:"message,omitempty"`
	DiscountCents int64       `json:"discount_cents"`
	TemplateID    int64       `json:"template_id"`
}

// CheckoutRequest names an order and the coupons meant for it.
type CheckoutRequest struct {
	OrderID          string
	OrderAmountCents int64
	CouponCodes      []string
	// UserID, when given, must hold every coupon.
	UserID string
	// TTLSeconds is a hold's time to live (5..86400; 0 means 900).
	TTLSeconds int
	// Actor is who asks (the caller's name), for the audit entries.
	Actor string
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
}

// priced is the coupons of a request as read, with their templates, in the
// order of the request's codes.
type priced struct {
	codes     []string
	coupons   []*models.Coupon
	templates []*models.Template
}

func (s *Service) maxPerOrder() int {
	if s.cfg.MaxCouponsPerOrder > 0 {
		return s.cfg.MaxCouponsPerOrder
	}
	return DefaultMaxCouponsPerOrder
}

// parseCheckout checks what every checkout request carries; orderRequired
// says whether order_id must be given.
func (s *Service) parseCheckout(req *CheckoutRequest, orderRequired bool) error {
	if orderRequired || req.OrderID != "" {
		if err := validateOrderID(req.OrderID); err != nil {
			return err
		}
	}
	if req.OrderAmountCents < 1 || req.OrderAmountCents > models.MaxMoneyCents {
		return models.Invalid("order_amount_cents", "must be between 1 and %d", int64(models.MaxMoneyCents))
	}
	if req.UserID != "" {
		if err := models.ValidateUserID("user_id", req.UserID); err != nil {
			return err
		}
	}
	if len(req.CouponCodes) < 1 || len(req.CouponCodes) > DefaultMaxCouponsPerOrder {
		return models.Invalid("coupon_codes", "must hold 1 to %d codes", DefaultMaxCouponsPerOrder)
	}
	seen := map[string]bool{}
	codes := make([]string, len(req.CouponCodes))
	for i, raw := range req.CouponCodes {
		code, err := models.ParseCouponCode("coupon_codes", raw)
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
	return nil
}

// readCoupons reads the request's coupons and their templates.
func (s *Service) readCoupons(ctx context.Context, codes []string) (*priced, error) {
	p := &priced{codes: codes}
	for _, code := range codes {
		c, err := s.couponByCode(ctx, code)
		if err != nil {
			return nil, err
		}
		t, err := s.template(ctx, c.TemplateID)
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
func couponFits(c *models.Coupon, userID, orderID string, now time.Time) error {
	if userID != "" && c.UserID != userID {
		return &models.Error{Code: models.CodeUnauthorized, Forbidden: true, Field: "user_id",
			Message: "this coupon belongs to another user"}
	}
	switch c.Status {
	case models.CouponHeld:
		if orderID != "" && c.OrderID != nil && *c.OrderID == orderID {
			return nil
		}
		return heldError(c)
	case models.CouponUsed:
		return alreadyUsed(c)
	case models.CouponRevoked:
		return models.Errorf(models.CodeRevoked, "this coupon was revoked")
	}
	if now.Before(c.ValidFrom) {
		return models.Errorf(models.CodeNotValidNow, "this coupon is valid from %s", formatTime(c.ValidFrom))
	}
	if !now.Before(c.ValidUntil) {
		return models.Errorf(models.CodeNotValidNow, "this coupon expired at %s", formatTime(c.ValidUntil))
	}
	return nil
}

// heldError names the order that holds the coupon and until when.
func heldError(c *models.Coupon) error {
	order, until := "another order", ""
	if c.OrderID != nil {
		order = "order " + *c.OrderID
	}
	if c.HoldExpiresAt != nil {
		until = " until " + formatTime(*c.HoldExpiresAt)
	}
	return models.Errorf(models.CodeHeld, "this coupon is held by %s%s", order, until)
}

// stackingError says why the templates cannot share one order (nil when
// they can): two of one template, an exclusive one among others, more than
// the cap.
func stackingError(ts []*models.Template, maxPerOrder int) error {
	if len(ts) > maxPerOrder {
		return models.Errorf(models.CodeNotCombinable, "an order carries at most %d coupons", maxPerOrder)
	}
	seen := map[int64]bool{}
	for _, t := range ts {
		if seen[t.ID] {
			return models.Errorf(models.CodeNotCombinable, "an order carries at most one coupon of template %d", t.ID)
		}
		seen[t.ID] = true
		if len(ts) > 1 && t.Stacking != models.StackingCombinable {
			return models.Errorf(models.CodeNotCombinable, "a coupon of template %d is exclusive: it is the only coupon on its order", t.ID)
		}
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

// decide applies every rule of a hold to the coupons as read and prices
// them: the answer lists each coupon with its word, and err is the first
// failure (nil when all apply).
func (s *Service) decide(p *priced, req CheckoutRequest, now time.Time) (*CheckoutResult, error) {
	res := &CheckoutResult{Result: models.CodeOK.Word(), OrderID: req.OrderID, OrderAmountCents: req.OrderAmountCents}
	pr := models.Price(req.OrderAmountCents, p.templates)
	var first error
	for i, c := range p.coupons {
		cc := CheckoutCoupon{CouponCode: c.Code, Result: models.CodeOK.Word(), TemplateID: c.TemplateID,
			DiscountCents: pr.Discounts[i]}
		err := couponFits(c, req.UserID, req.OrderID, now)
		if err == nil && pr.BelowMinimum[i] {
			err = &models.Error{Code: models.CodeBelowMinimum, Field: "order_amount_cents",
				Message: fmt.Sprintf("coupon %s needs an order of at least %d cents", c.Code, p.templates[i].MinOrderCents)}
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
	if first != nil {
		res.Result = models.ErrorCode(first).Word()
		res.DiscountCents, res.PayableCents = 0, req.OrderAmountCents
		return res, first
	}
	res.DiscountCents, res.PayableCents = pr.DiscountCents, pr.PayableCents
	return res, nil
}

// Validate is a dry run of a hold over 1..5 codes: owner, state, validity,
// minimum and stacking, priced by models.Price. It writes nothing. A coupon
// that does not apply is answered in the result (its word in Result), not as
// an error.
//
// Errors: CodeInvalidRequest (field order_id, order_amount_cents, user_id or
// coupon_codes), CodeNotFound (a code no coupon has), CodeUnavailable.
func (s *Service) Validate(ctx context.Context, req CheckoutRequest) (*CheckoutResult, error) {
	if err := s.parseCheckout(&req, false); err != nil {
		return nil, err
	}
	p, err := s.readCoupons(ctx, req.CouponCodes)
	if err != nil {
		return nil, err
	}
	res, _ := s.decide(p, req, s.now())
	return res, nil
}

// UsableCoupon is one of a user's coupons that applies to an order amount.
type UsableCoupon struct {
	Coupon        models.CouponView `json:"coupon"`
	Stacking      string            `json:"stacking"`
	DiscountCents int64             `json:"discount_cents"`
}

// Usable is the answer of UsableCoupons: the coupons best first, and Best,
// the codes of the combination with the largest total discount.
type Usable struct {
	Coupons           []UsableCoupon `json:"coupons"`
	Best              []string       `json:"best"`
	BestDiscountCents int64          `json:"best_discount_cents"`
}

// UsableCoupons returns the user's coupons that apply to an order of that
// amount now (issued, valid, minimum met), each with its discount alone,
// largest first, and the combination the stacking rules allow with the
// largest total discount (the best exclusive coupon alone, or the best
// combinable coupon of each template, at most the cap).
//
// Errors: CodeInvalidRequest (field user_id or order_amount_cents),
// CodeUnavailable.
func (s *Service) UsableCoupons(ctx context.Context, userID string, amount int64) (*Usable, error) {
	if err := models.ValidateUserID("user_id", userID); err != nil {
		return nil, err
	}
	if amount < 1 || amount > models.MaxMoneyCents {
		return nil, models.Invalid("order_amount_cents", "must be between 1 and %d", int64(models.MaxMoneyCents))
	}
	var cs []models.Coupon
	if err := s.db.WithContext(ctx).Where("user_id = ? AND status = ?", userID, models.CouponIssued).
		Order("id").Limit(maxUserCoupons).Find(&cs).Error; err != nil {
		return nil, dbError("coupons", err)
	}
	now := s.now()
	out := &Usable{Coupons: []UsableCoupon{}, Best: []string{}}
	tmpl := map[string]*models.Template{}
	for i := range cs {
		c := &cs[i]
		if couponFits(c, userID, "", now) != nil {
			continue
		}
		t, err := s.template(ctx, c.TemplateID)
		if err != nil {
			return nil, err
		}
		if amount < t.MinOrderCents {
			continue
		}
		tmpl[c.Code] = t
		out.Coupons = append(out.Coupons, UsableCoupon{Coupon: c.View(now), Stacking: t.Stacking, DiscountCents: t.Discount(amount)})
	}
	sort.SliceStable(out.Coupons, func(a, b int) bool { return out.Coupons[a].DiscountCents > out.Coupons[b].DiscountCents })
	// The best combinable coupon of each template, best first, up to the cap.
	var combo []string
	var comboT []*models.Template
	taken := map[int64]bool{}
	for _, u := range out.Coupons {
		t := tmpl[u.Coupon.Code]
		if t.Stacking != models.StackingCombinable || taken[t.ID] || len(combo) == s.maxPerOrder() {
			continue
		}
		taken[t.ID] = true
		combo, comboT = append(combo, u.Coupon.Code), append(comboT, t)
	}
	if len(combo) > 0 {
		out.Best, out.BestDiscountCents = combo, models.Price(amount, comboT).DiscountCents
	}
	for _, u := range out.Coupons {
		if tmpl[u.Coupon.Code].Stacking == models.StackingExclusive && u.DiscountCents > out.BestDiscountCents {
			out.Best, out.BestDiscountCents = []string{u.Coupon.Code}, u.DiscountCents
		}
	}
	return out, nil
}

// ensureOrder makes the order's row in checkout_orders, empty, unless it is
// there. Its own statement, outside the transactions that lock the row: two
// requests creating it at once make one row, and neither waits on a gap lock.
func (s *Service) ensureOrder(ctx context.Context, orderID string) error {
	err := s.db.WithContext(ctx).Exec(`INSERT INTO checkout_orders
		(order_id, stacking, coupons, amount_cents, returned_cents, discount_cents, updated_at) VALUES (?, ?, 0, 0, 0, 0, ?)`,
		orderID, models.StackingExclusive, s.now()).Error
	if _, dup := uniqueViolation(err); dup {
		return nil
	}
	return dbError("order", err)
}

// readOrder reads the order's row; found is false when there is none.
func (s *Service) readOrder(ctx context.Context, orderID string) (o checkoutOrder, found bool, err error) {
	err = s.db.WithContext(ctx).Where("order_id = ?", orderID).Limit(1).Find(&o).Error
	if err != nil {
		return o, false, dbError("order", err)
	}
	return o, o.OrderID != "", nil
}

// takeRoom adds n coupons of that stacking to the order inside tx: a guarded
// UPDATE of the order's row that matches nothing when the order has no room
// (an exclusive coupon on it, an exclusive one asked next to others, or the
// cap reached), answered not_combinable. The row lock serialises every
// request on the order, so two of them never both see room for one.
// holdSet, when not empty, is extra SET of a hold's columns.
func (s *Service) takeRoom(tx *gorm.DB, orderID, stacking string, n int, amount int64, now time.Time, guard, holdSet string, holdArgs ...any) error {
	// amount_cents and stacking come before coupons: MySQL evaluates the SET
	// left to right, and the CASE must see the count before this change.
	sql := `UPDATE checkout_orders SET
		amount_cents = CASE WHEN coupons = 0 THEN ? ELSE amount_cents END,
		returned_cents = CASE WHEN coupons = 0 THEN 0 ELSE returned_cents END,
		stacking = CASE WHEN coupons = 0 THEN ? ELSE stacking END,
		coupons = coupons + ?, updated_at = ?` + holdSet + `
		WHERE order_id = ? AND (coupons = 0 OR (stacking = ? AND ? = ? AND coupons + ? <= ?))` + guard
	args := []any{amount, stacking, n, now}
	args = append(args, holdArgs...)
	args = append(args, orderID, models.StackingCombinable, stacking, models.StackingCombinable, n, s.maxPerOrder())
	res := tx.Exec(sql, args...)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return errNoRoom
	}
	return nil
}

// errNoRoom is returned inside a transaction whose order had no room.
var errNoRoom = errors.New("the order has no room for the coupon")

// addOrderCoupons lists coupons as live on the order; the unique (order_id,
// template_id) index refuses a second coupon of one template.
func addOrderCoupons(tx *gorm.DB, orderID string, cs []*models.Coupon, now time.Time) error {
	for _, c := range cs {
		err := tx.Create(&orderCoupon{OrderID: orderID, CouponID: c.ID, TemplateID: c.TemplateID, CreatedAt: now}).Error
		if index, dup := uniqueViolation(err); dup && index == uniqueOrderTemplate {
			return models.Errorf(models.CodeNotCombinable, "order %s already carries a coupon of template %d", orderID, c.TemplateID)
		} else if dup {
			return errRaced // the coupon is on the order already: decide again on a fresh read
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// dropOrderCoupons removes coupons from the order's live coupons and gives
// their room back, inside tx.
func dropOrderCoupons(tx *gorm.DB, orderID string, ids []int64, now time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	res := tx.Exec(`DELETE FROM order_coupons WHERE order_id = ? AND coupon_id IN ?`, orderID, ids)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return nil
	}
	return tx.Exec(`UPDATE checkout_orders SET coupons = coupons - ?, updated_at = ? WHERE order_id = ?`,
		res.RowsAffected, now, orderID).Error
}

// lockCoupons takes the locks of the coupons, in id order so that two
// requests never wait on each other; release gives them back.
func (s *Service) lockCoupons(ctx context.Context, cs []*models.Coupon) (release func(), err error) {
	sorted := slices.Clone(cs)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a].ID < sorted[b].ID })
	var locks []*redislock.Lock
	release = func() {
		for _, l := range locks {
			_ = l.Release(context.WithoutCancel(ctx)) // an expired lock is harmless: the guards decide
		}
	}
	for _, c := range sorted {
		l, _, err := s.lockCoupon(ctx, c)
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
		if !errors.Is(err, errRetry) {
			return err
		}
		if attempt == maxCouponAttempts {
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
	return txOutcome("order", err)
}

// joinCodes is the canonical list of a hold's codes.
func joinCodes(codes []string) string {
	s := slices.Clone(codes)
	sort.Strings(s)
	return strings.Join(s, ",")
}

// Hold binds every coupon of the request to the order until now + TTL, all
// or none, in one transaction: the order's row takes the coupons' room under
// the stacking rules (guarded UPDATE, see takeRoom), order_coupons lists
// them (one per template), and each coupon goes issued → held with
// `UPDATE ... WHERE id=? AND status='issued' AND version=?`, under the
// coupons' locks. A coupon that changed meanwhile rolls the whole hold back
// and it is decided again on a fresh read.
//
// The same order with the same codes and amount while held (or confirmed)
// answers duplicate with the first answer, expires_at unchanged; other codes
// or another amount answer idempotency_mismatch (release first). A released
// or expired hold may be replaced by a new one.
//
// Errors: CodeInvalidRequest (field order_id, order_amount_cents, user_id,
// coupon_codes or ttl_seconds), CodeNotFound, CodeUnauthorized with
// Forbidden, CodeHeld, CodeAlreadyUsed, CodeRevoked, CodeNotValidNow,
// CodeBelowMinimum, CodeNotCombinable, CodeIdempotencyMismatch, CodeBusy,
// CodeUnavailable.
func (s *Service) Hold(ctx context.Context, req CheckoutRequest) (*CheckoutResult, error) {
	if err := s.parseCheckout(&req, true); err != nil {
		return nil, err
	}
	if req.TTLSeconds == 0 {
		req.TTLSeconds = DefaultHoldTTL
	}
	if req.TTLSeconds < MinHoldTTL || req.TTLSeconds > MaxHoldTTL {
		return nil, models.Invalid("ttl_seconds", "must be between %d and %d", MinHoldTTL, MaxHoldTTL)
	}
	if err := s.ensureOrder(ctx, req.OrderID); err != nil {
		return nil, err
	}
	p, err := s.readCoupons(ctx, req.CouponCodes)
	if err != nil {
		return nil, err
	}
	release, err := s.lockCoupons(ctx, p.coupons)
	if err != nil {
		return nil, err
	}
	defer release()
	var res *CheckoutResult
	first := true
	err = retryCheckout(ctx, func() error {
		if !first {
			if p, err = s.readCoupons(ctx, req.CouponCodes); err != nil {
				return err
			}
		}
		first = false
		res, err = s.holdOnce(ctx, p, req)
		return err
	})
	return res, err
}

func (s *Service) holdOnce(ctx context.Context, p *priced, req CheckoutRequest) (*CheckoutResult, error) {
	now := s.now().Truncate(time.Microsecond)
	o, _, err := s.readOrder(ctx, req.OrderID)
	if err != nil {
		return nil, err
	}
	if o.HoldState != nil && (*o.HoldState == HoldHeld || *o.HoldState == HoldConfirmed) {
		if o.HoldCodes != nil && *o.HoldCodes == joinCodes(req.CouponCodes) && o.AmountCents == req.OrderAmountCents {
			res, err := s.holdAnswer(ctx, &o)
			if err != nil {
				return nil, err
			}
			res.Duplicate = true
			return res, nil
		}
		return nil, &models.Error{Code: models.CodeIdempotencyMismatch, Field: "coupon_codes",
			Message: fmt.Sprintf("order %s already has a hold (%s) with other codes or another amount: release it first", req.OrderID, *o.HoldState)}
	}
	res, err := s.decide(p, req, now)
	if err != nil {
		return nil, err
	}
	for _, c := range p.coupons {
		if c.Status != models.CouponIssued {
			return nil, errRetry // held by this order without its row saying so: settle on a fresh read
		}
	}
	expires := now.Add(time.Duration(req.TTLSeconds) * time.Second)
	codes := joinCodes(req.CouponCodes)
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		err := s.takeRoom(tx, req.OrderID, stackingOf(p.templates), len(p.coupons), req.OrderAmountCents, now,
			` AND (hold_state IS NULL OR hold_state IN ('released', 'expired'))`,
			`, hold_state = ?, hold_codes = ?, hold_expires_at = ?, discount_cents = ?`,
			HoldHeld, codes, expires, res.DiscountCents)
		if err != nil {
			return err
		}
		if err := addOrderCoupons(tx, req.OrderID, p.coupons, now); err != nil {
			return err
		}
		for i, c := range p.coupons {
			r := tx.Exec(`UPDATE user_coupons SET status = ?, order_id = ?, hold_expires_at = ?, version = version + 1, updated_at = ?
				WHERE id = ? AND status = ? AND version = ?`,
				models.CouponHeld, req.OrderID, expires, now, c.ID, models.CouponIssued, c.Version)
			if r.Error != nil {
				return r.Error
			}
			if r.RowsAffected == 0 {
				return errRaced
			}
			if err := s.audit(tx, actorName(req.Actor), "coupon.hold", fmt.Sprintf("coupon:%d", c.ID),
				fmt.Sprintf("order=%s order_amount_cents=%d discount_cents=%d expires_at=%s",
					req.OrderID, req.OrderAmountCents, res.Coupons[i].DiscountCents, formatTime(expires))); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, errNoRoom) {
		// Another hold of this order may have come first: the fresh read
		// answers it (duplicate or idempotency_mismatch).
		if cur, _, rerr := s.readOrder(ctx, req.OrderID); rerr == nil && cur.HoldState != nil &&
			(*cur.HoldState == HoldHeld || *cur.HoldState == HoldConfirmed) {
			return nil, errRetry
		}
	}
	if err := checkoutTx(err); err != nil {
		return nil, err
	}
	res.Result, res.State, res.ExpiresAt = HoldHeld, HoldHeld, &expires
	return res, nil
}

// holdAnswer rebuilds the answer of an order's hold from the database: its
// coupons priced as they were held.
func (s *Service) holdAnswer(ctx context.Context, o *checkoutOrder) (*CheckoutResult, error) {
	res := &CheckoutResult{OrderID: o.OrderID, ExpiresAt: o.HoldExpiresAt, OrderAmountCents: o.AmountCents, Coupons: []CheckoutCoupon{}}
	if o.HoldState != nil {
		res.State = *o.HoldState
	}
	res.Result = res.State
	if res.State == HoldConfirmed {
		res.Result = "redeemed"
	}
	if o.HoldCodes == nil || *o.HoldCodes == "" {
		return res, nil
	}
	p, err := s.readCoupons(ctx, strings.Split(*o.HoldCodes, ","))
	if err != nil {
		return nil, err
	}
	pr := models.Price(o.AmountCents, p.templates)
	for i, c := range p.coupons {
		res.Coupons = append(res.Coupons, CheckoutCoupon{CouponCode: c.Code, Result: models.CodeOK.Word(),
			DiscountCents: pr.Discounts[i], TemplateID: c.TemplateID})
	}
	res.DiscountCents = o.DiscountCents
	res.PayableCents = o.AmountCents - o.DiscountCents
	return res, nil
}

// GetHold returns the order's hold: state held, confirmed, released or
// expired, its coupons, expires_at and amounts. A hold past its time that
// the sweeper has not released yet shows as expired.
//
// Errors: CodeInvalidRequest (field order_id), CodeNotFound, CodeUnavailable.
func (s *Service) GetHold(ctx context.Context, orderID string) (*CheckoutResult, error) {
	if err := validateOrderID(orderID); err != nil {
		return nil, err
	}
	o, found, err := s.readOrder(ctx, orderID)
	if err != nil {
		return nil, err
	}
	if !found || o.HoldState == nil {
		return nil, models.Errorf(models.CodeNotFound, "order %s has no hold", orderID)
	}
	res, err := s.holdAnswer(ctx, &o)
	if err != nil {
		return nil, err
	}
	if res.State == HoldHeld && o.HoldExpiresAt != nil && !s.now().Before(*o.HoldExpiresAt) {
		res.State, res.Result = HoldExpired, HoldExpired
	}
	return res, nil
}

// ConfirmRequest confirms an order's hold when its payment succeeded.
type ConfirmRequest struct {
	OrderID string
	// OrderAmountCents, when not 0, must equal the held amount.
	OrderAmountCents int64
	Cashier          string
}

// Confirm turns every coupon held by the order into a redemption, in one
// transaction under the coupons' locks: each coupon goes held → used with
// `UPDATE ... WHERE id=? AND status='held' AND order_id=? AND version=?` and
// gets its coupon_use_log row (unique (coupon_id, order_id)), and the
// order's hold goes held → confirmed by a guarded UPDATE of its row. Again →
// duplicate with the first answer.
//
// After the hold expired (released by the sweeper, or a coupon taken away),
// the late rule applies: when every coupon is still issued and valid (or
// still held by this order) and the order still has room for them, confirm
// takes them again (Late); otherwise it answers hold_expired naming the
// coupons lost, and confirms nothing. A released hold is never confirmed.
//
// Errors: CodeInvalidRequest (field order_id), CodeNotFound (no hold),
// CodeIdempotencyMismatch (field order_amount_cents), CodeHoldExpired,
// CodeNotCombinable, CodeBusy, CodeUnavailable.
func (s *Service) Confirm(ctx context.Context, req ConfirmRequest) (*CheckoutResult, error) {
	if err := validateOrderID(req.OrderID); err != nil {
		return nil, err
	}
	o, found, err := s.readOrder(ctx, req.OrderID)
	if err != nil {
		return nil, err
	}
	if !found || o.HoldState == nil || o.HoldCodes == nil {
		return nil, models.Errorf(models.CodeNotFound, "order %s has no hold", req.OrderID)
	}
	if req.OrderAmountCents != 0 && req.OrderAmountCents != o.AmountCents {
		return nil, &models.Error{Code: models.CodeIdempotencyMismatch, Field: "order_amount_cents",
			Message: fmt.Sprintf("the hold of order %s is for %d cents", req.OrderID, o.AmountCents)}
	}
	codes := strings.Split(*o.HoldCodes, ",")
	p, err := s.readCoupons(ctx, codes)
	if err != nil {
		return nil, err
	}
	release, err := s.lockCoupons(ctx, p.coupons)
	if err != nil {
		return nil, err
	}
	defer release()
	var res *CheckoutResult
	first := true
	err = retryCheckout(ctx, func() error {
		if !first {
			if p, err = s.readCoupons(ctx, codes); err != nil {
				return err
			}
		}
		first = false
		res, err = s.confirmOnce(ctx, p, req)
		return err
	})
	return res, err
}

func (s *Service) confirmOnce(ctx context.Context, p *priced, req ConfirmRequest) (*CheckoutResult, error) {
	now := s.now().Truncate(time.Microsecond)
	o, _, err := s.readOrder(ctx, req.OrderID)
	if err != nil {
		return nil, err
	}
	state := *o.HoldState
	switch state {
	case HoldConfirmed:
		res, err := s.holdAnswer(ctx, &o)
		if err != nil {
			return nil, err
		}
		res.Duplicate = true
		return res, nil
	case HoldReleased:
		return nil, models.Errorf(models.CodeHoldExpired, "the hold of order %s was released: hold the coupons again", req.OrderID)
	}
	// Each coupon is held by this order (kept), or issued and valid (taken
	// again), or lost.
	var lost []string
	var retake []*models.Coupon
	for _, c := range p.coupons {
		switch {
		case c.Status == models.CouponHeld && c.OrderID != nil && *c.OrderID == req.OrderID:
		case c.Status == models.CouponIssued && couponFits(c, "", "", now) == nil:
			retake = append(retake, c)
		default:
			lost = append(lost, c.Code)
		}
	}
	if len(lost) > 0 {
		return nil, models.Errorf(models.CodeHoldExpired, "the hold of order %s expired and these coupons are no longer free: %s; nothing was confirmed",
			req.OrderID, strings.Join(lost, ", "))
	}
	late := state == HoldExpired || len(retake) > 0 || (o.HoldExpiresAt != nil && !now.Before(*o.HoldExpiresAt))
	pr := models.Price(o.AmountCents, p.templates)
	actor := actorName(req.Cashier)
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if len(retake) > 0 {
			if err := s.takeRoom(tx, req.OrderID, stackingOf(p.templates), len(retake), o.AmountCents, now,
				` AND hold_state = '`+state+`'`, `, hold_state = ?`, HoldConfirmed); err != nil {
				return err
			}
			if err := addOrderCoupons(tx, req.OrderID, retake, now); err != nil {
				return err
			}
		} else {
			r := tx.Exec(`UPDATE checkout_orders SET hold_state = ?, updated_at = ? WHERE order_id = ? AND hold_state = ?`,
				HoldConfirmed, now, req.OrderID, state)
			if r.Error != nil {
				return r.Error
			}
			if r.RowsAffected == 0 {
				return errRaced
			}
		}
		for i, c := range p.coupons {
			var r *gorm.DB
			if c.Status == models.CouponHeld {
				r = tx.Exec(`UPDATE user_coupons SET status = ?, used_at = ?, hold_expires_at = NULL, version = version + 1, updated_at = ?
					WHERE id = ? AND status = ? AND order_id = ? AND version = ?`,
					models.CouponUsed, now, now, c.ID, models.CouponHeld, req.OrderID, c.Version)
			} else {
				r = tx.Exec(`UPDATE user_coupons SET status = ?, order_id = ?, used_at = ?, hold_expires_at = NULL, version = version + 1, updated_at = ?
					WHERE id = ? AND status = ? AND version = ?`,
					models.CouponUsed, req.OrderID, now, now, c.ID, models.CouponIssued, c.Version)
			}
			if r.Error != nil {
				return r.Error
			}
			if r.RowsAffected == 0 {
				return errRaced
			}
			lg := models.UseLog{CouponID: c.ID, OrderID: req.OrderID, UserID: c.UserID, TemplateID: c.TemplateID,
				OrderAmountCents: o.AmountCents, DiscountCents: pr.Discounts[i], Cashier: actor, UsedAt: now}
			if err := writeUseLog(tx, &lg); err != nil {
				return err
			}
			if err := s.audit(tx, actor, "coupon.confirm", fmt.Sprintf("coupon:%d", c.ID),
				fmt.Sprintf("order=%s order_amount_cents=%d discount_cents=%d late=%t", req.OrderID, o.AmountCents, pr.Discounts[i], late)); err != nil {
				return err
			}
		}
		return nil
	})
	if err := checkoutTx(err); err != nil {
		return nil, err
	}
	o.HoldState = ptrTo(HoldConfirmed)
	o.DiscountCents = pr.DiscountCents
	res, err := s.holdAnswer(ctx, &o)
	if err != nil {
		return nil, err
	}
	res.Late = late
	return res, nil
}

func ptrTo[T any](v T) *T { return &v }

// ReleaseResult is the answer of Release.
type ReleaseResult struct {
	Duplicate bool
	Hold      *CheckoutResult
}

// Release gives the coupons held by the order back to their holders
// (held → issued) and ends the hold, in one transaction under the coupons'
// locks, guarded by the hold's state and each coupon's status and order.
// Again (or after the hold expired) → duplicate; after confirm →
// already_used (refund instead).
//
// Errors: CodeInvalidRequest (field order_id), CodeNotFound (no hold),
// CodeAlreadyUsed, CodeBusy, CodeUnavailable.
func (s *Service) Release(ctx context.Context, actor, orderID string) (*ReleaseResult, error) {
	if err := validateOrderID(orderID); err != nil {
		return nil, err
	}
	o, found, err := s.readOrder(ctx, orderID)
	if err != nil {
		return nil, err
	}
	if !found || o.HoldState == nil || o.HoldCodes == nil {
		return nil, models.Errorf(models.CodeNotFound, "order %s has no hold", orderID)
	}
	codes := strings.Split(*o.HoldCodes, ",")
	p, err := s.readCoupons(ctx, codes)
	if err != nil {
		return nil, err
	}
	unlock, err := s.lockCoupons(ctx, p.coupons)
	if err != nil {
		return nil, err
	}
	defer unlock()
	var res *ReleaseResult
	err = retryCheckout(ctx, func() error {
		o, _, err := s.readOrder(ctx, orderID)
		if err != nil {
			return err
		}
		switch *o.HoldState {
		case HoldConfirmed:
			return models.Errorf(models.CodeAlreadyUsed, "the hold of order %s was confirmed: refund the order instead", orderID)
		case HoldReleased, HoldExpired:
			h, err := s.holdAnswer(ctx, &o)
			if err != nil {
				return err
			}
			res = &ReleaseResult{Duplicate: true, Hold: h}
			return nil
		}
		now := s.now().Truncate(time.Microsecond)
		err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			r := tx.Exec(`UPDATE checkout_orders SET hold_state = ?, updated_at = ? WHERE order_id = ? AND hold_state = ?`,
				HoldReleased, now, orderID, HoldHeld)
			if r.Error != nil {
				return r.Error
			}
			if r.RowsAffected == 0 {
				return errRaced
			}
			return s.freeHeld(tx, actorName(actor), "coupon.release", orderID, "", now)
		})
		if err := txOutcome("order", err); err != nil {
			return err
		}
		o.HoldState = ptrTo(HoldReleased)
		h, err := s.holdAnswer(ctx, &o)
		if err != nil {
			return err
		}
		res = &ReleaseResult{Hold: h}
		return nil
	})
	return res, err
}

// freeHeld gives back every coupon the order holds (held → issued), with
// an audit entry each, and drops them from the order's room, inside tx.
// extra narrows the guard (the expiry pass adds the time).
func (s *Service) freeHeld(tx *gorm.DB, actor, action, orderID, extra string, now time.Time, extraArgs ...any) error {
	var ids []int64
	q := tx.Model(&models.Coupon{}).Where("status = ? AND order_id = ?", models.CouponHeld, orderID)
	if extra != "" {
		q = q.Where(extra, extraArgs...)
	}
	if err := q.Order("id").Pluck("id", &ids).Error; err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	r := tx.Exec(`UPDATE user_coupons SET status = ?, order_id = NULL, hold_expires_at = NULL, version = version + 1, updated_at = ?
		WHERE id IN ? AND status = ? AND order_id = ?`, models.CouponIssued, now, ids, models.CouponHeld, orderID)
	if r.Error != nil {
		return r.Error
	}
	if r.RowsAffected != int64(len(ids)) {
		return errRaced
	}
	for _, id := range ids {
		if err := s.audit(tx, actor, action, fmt.Sprintf("coupon:%d", id), "order="+orderID); err != nil {
			return err
		}
	}
	return dropOrderCoupons(tx, orderID, ids, now)
}

// ExpireHolds releases the holds past their time (the sweeper runs it every
// SweepInterval): per order one transaction, guarded by the hold's state
// and time (`UPDATE checkout_orders ... WHERE hold_state='held' AND
// hold_expires_at <= now`) and each coupon's status and order, so that a
// confirm that committed first wins and one that comes after finds the hold
// expired (the late rule). Safe on several instances at once. Returns the
// holds this pass released. Errors: CodeUnavailable.
func (s *Service) ExpireHolds(ctx context.Context) (int, error) {
	now := s.now().Truncate(time.Microsecond)
	var orders []string
	if err := s.db.WithContext(ctx).Model(&checkoutOrder{}).Where("hold_state = ? AND hold_expires_at <= ?", HoldHeld, now).
		Order("hold_expires_at").Limit(holdExpiryBatch).Pluck("order_id", &orders).Error; err != nil {
		return 0, dbError("holds", err)
	}
	n := 0
	for _, orderID := range orders {
		done := false
		err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			r := tx.Exec(`UPDATE checkout_orders SET hold_state = ?, updated_at = ? WHERE order_id = ? AND hold_state = ? AND hold_expires_at <= ?`,
				HoldExpired, now, orderID, HoldHeld, now)
			if r.Error != nil || r.RowsAffected == 0 {
				return r.Error
			}
			done = true
			return s.freeHeld(tx, "sweeper", "coupon.hold_expire", orderID, "hold_expires_at <= ?", now, now)
		})
		if err != nil {
			if isDeadlock(err) || errors.Is(err, errRaced) {
				continue // the next pass tries again
			}
			return n, dbError("holds", err)
		}
		if done {
			n++
		}
	}
	if n > 0 {
		s.log.Info("released expired holds", "holds", n)
	}
	return n, nil
}
