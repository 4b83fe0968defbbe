package checkout

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/pricing"

	"gorm.io/gorm"
)

// Hold binds every coupon of the request to the order until now + TTL (or
// the earliest valid_until of the coupons, when that comes first), all
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
func (s *Checkout) Hold(ctx context.Context, req CheckoutRequest) (*CheckoutResult, error) {
	if err := s.parseCheckout(ctx, &req, true); err != nil {
		return nil, err
	}
	if req.TTLSeconds == 0 {
		req.TTLSeconds = DefaultHoldTTL
	}
	if req.TTLSeconds < MinHoldTTL || req.TTLSeconds > MaxHoldTTL {
		return nil, models.Invalid("ttl_seconds", "must be between %d and %d", MinHoldTTL, MaxHoldTTL)
	}
	if err := s.addAutomatic(ctx, &req); err != nil {
		return nil, err
	}
	var res *CheckoutResult
	err := s.withSharedClaims(ctx, &req, func(claims []*sharedClaim) error {
		var err error
		res, err = s.holdWith(ctx, req, claims)
		return err
	})
	return res, err
}

// holdWith holds the request's coupons, the fresh claims' coupons among
// them (written by the hold's transaction), under the locks of the coupons
// that exist.
func (s *Checkout) holdWith(ctx context.Context, req CheckoutRequest, claims []*sharedClaim) (*CheckoutResult, error) {
	// A shopper's own hold answers another user's coupon, and a bearer
	// one, as a code no coupon has, as validation does (hiddenFrom).
	owner := ""
	if req.OwnOnly {
		owner = req.UserID
	}
	p, err := s.readOwnCoupons(ctx, req.CouponCodes, claims, owner, req.OwnOnly)
	if err != nil {
		return nil, err
	}
	if err := s.factsFor(ctx, &req, p); err != nil {
		return nil, err
	}
	release, err := s.lockCoupons(ctx, existing(p))
	if err != nil {
		return nil, err
	}
	defer release()
	var res *CheckoutResult
	first := true
	err = retryCheckout(ctx, func() error {
		if !first {
			if p, err = s.readOwnCoupons(ctx, req.CouponCodes, claims, owner, req.OwnOnly); err != nil {
				return err
			}
			if err := s.factsFor(ctx, &req, p); err != nil {
				return err
			}
		}
		first = false
		res, err = s.holdOnce(ctx, p, req, allIssued(p))
		if errors.Is(err, errOrderExists) {
			// The order had a row after all: decided on it at once.
			res, err = s.holdOnce(ctx, p, req, false)
		}
		return err
	})
	return res, err
}

// factsFor reads the request's facts once, when a template of its
// coupons (p) carries an eligibility rule (ruled).
func (s *Checkout) factsFor(ctx context.Context, req *CheckoutRequest, p *priced) error {
	if req.facts != nil || !ruled(p.templates) {
		return nil
	}
	var err error
	req.facts, err = s.readFacts(ctx, req.UserID, &req.Cart, &req.cart, p.templates, s.Clock())
	return err
}

// existing is the coupons of p that are in the database (not fresh claims).
func existing(p *priced) []*models.Coupon {
	var out []*models.Coupon
	for i, c := range p.coupons {
		if p.claims[i] == nil {
			out = append(out, c)
		}
	}
	return out
}

// allIssued says every coupon of p is issued, as those of a new order's
// hold are: a hold, confirm or redemption of the order would have made
// them held or used.
func allIssued(p *priced) bool {
	for _, c := range p.coupons {
		if c.Status != models.CouponIssued {
			return false
		}
	}
	return true
}

// holdOnce decides and writes the hold on the coupons as read (p). With
// assumeNew it skips reading the order's row and holds as for an order
// that has none, inserting the row; when the row is there after all, the
// INSERT fails on the primary key, the transaction rolls back and it
// answers errOrderExists for the caller to decide again on the row. Taking
// the row as missing is what a read just before a racing INSERT would
// have said, and the same INSERT refuses it.
func (s *Checkout) holdOnce(ctx context.Context, p *priced, req CheckoutRequest, assumeNew bool) (*CheckoutResult, error) {
	now := s.Clock().Truncate(time.Microsecond)
	var o CheckoutOrder
	var found bool
	var err error
	if !assumeNew {
		if o, found, err = s.ReadOrder(ctx, req.OrderID); err != nil {
			return nil, err
		}
	}
	// The order's own hold past its time ends now, and the request is
	// decided as a new hold.
	if err := s.endLapsedOrder(ctx, &o, now); err != nil {
		return nil, err
	}
	if o.HoldState != nil && (*o.HoldState == HoldHeld || *o.HoldState == HoldConfirmed) {
		sameCodes := o.HoldCodes != nil && joinCodes(strings.Split(*o.HoldCodes, ",")) == joinCodes(req.CouponCodes)
		if sameCodes && o.AmountCents == req.OrderAmountCents && o.sameCart(req.oc) {
			res, err := s.holdAnswer(ctx, &o)
			if err != nil {
				return nil, err
			}
			res.Duplicate = true
			return res, nil
		}
		if sameCodes && (o.Lined() || req.oc.lined()) {
			return nil, cartMismatch(req.OrderID)
		}
		return nil, &models.Error{Code: models.CodeIdempotencyMismatch, Field: "coupon_codes",
			Message: fmt.Sprintf("order %s already has a hold (%s) with other codes or another amount: release it first", req.OrderID, *o.HoldState)}
	}
	for _, sc := range p.claims {
		if sc != nil {
			sc.bornAt(now, s.Cfg.Location)
		}
	}
	if found && o.AmountCents != 0 && !o.Lined() && !req.oc.lined() && o.Currency != "" {
		req.cart.Currency = o.Currency // the order's one currency, whatever the request said
	}
	if found && o.Lined() && req.oc.lined() {
		// Next to coupons redeemed one step at a time or refunded, or
		// after a return: priced on what their stored allocations and the
		// returns left of each line (docs/checkout.md, "The order state
		// and the plan").
		if err := s.takenOn(s.DB.WithContext(ctx), &o, p, &req); err != nil {
			return nil, core.DBError("order", err)
		}
	} else if found && !o.Lined() && !req.oc.lined() && o.AmountCents != 0 {
		// An amount-only order: priced on what it leaves, as validate
		// and the redemption price it (amountTaken).
		if req.taken, err = amountTaken(s.DB.WithContext(ctx), &o, &req, p, now); err != nil {
			return nil, core.DBError("order", err)
		}
	}
	res, err := s.decide(p, req, now)
	if err != nil {
		return nil, err
	}
	for i, c := range p.coupons {
		if p.claims[i] == nil && lapsedHold(c, now) {
			// Held by a hold past its time that the sweeper has not
			// released yet: it ends now, and the coupon is read again.
			return nil, s.expireLapsed(ctx, c, now)
		}
		if c.Status != models.CouponIssued {
			return nil, core.ErrRetry // held by this order without its row saying so: settle on a fresh read
		}
	}
	// A hold never outlives its coupons: it ends at the earliest
	// valid_until among them when that comes before its TTL
	// (docs/checkout.md).
	expires := now.Add(time.Duration(req.TTLSeconds) * time.Second)
	for _, c := range p.coupons {
		if c.ValidUntil.Before(expires) {
			expires = c.ValidUntil
		}
	}
	// The hold's codes are its coupons' codes: a fresh claim's new code in
	// place of its shared code.
	list := make([]string, len(p.coupons))
	for i, c := range p.coupons {
		list[i] = c.Code
	}
	// In the hold's order: its confirm and replays list the coupons as the
	// hold did.
	codes := strings.Join(list, ",")
	var locked orderDiscounts // the order's state under its row lock (found)
	err = s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if found {
			err = s.takeRoom(tx, req.OrderID, stackingOf(p.templates), len(p.coupons), req.OrderAmountCents, req.oc, now,
				` AND (hold_state IS NULL OR hold_state IN ('released', 'expired'))`,
				`, hold_state = ?, hold_codes = ?, hold_expires_at = ?, discount_cents = ?, hold_parked = ?`,
				HoldHeld, codes, expires, res.DiscountCents, len(req.park) > 0)
		} else {
			// Most holds are of a new order: its row is written here, with
			// the hold, first in the transaction like takeRoom's UPDATE.
			err = tx.Exec(`INSERT INTO checkout_orders (order_id, stacking, coupons, amount_cents, returned_cents,
				hold_state, hold_codes, hold_expires_at, discount_cents, cart_hash, currency, shipping_cents, updated_at)
				VALUES (?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?)`,
				req.OrderID, stackingOf(p.templates), len(p.coupons), req.OrderAmountCents,
				HoldHeld, codes, expires, res.DiscountCents, req.oc.hashArg(), req.oc.currency, req.oc.shipping, now).Error
			if _, dup := core.UniqueViolation(err); dup {
				return errOrderExists
			}
		}
		if err != nil {
			return err
		}
		if found {
			// The order's state under its row lock, before the other
			// writes: next to coupons redeemed one step at a time, the
			// hold fits or is refused (planFits, docs/checkout.md).
			if locked, err = lockedDiscounts(tx, req.OrderID, now, p.ids()); err != nil {
				return err
			}
			if err := planFits(req.OrderID, locked, res.DiscountCents); err != nil {
				return err
			}
		}
		// The order's lines, with its first hold or redemption.
		if err := writeLines(tx, req.OrderID, req.oc, !found); err != nil {
			return err
		}
		// A fresh claim's coupon is written held by the order; the others
		// go issued → held (a bearer coupon gets its owner). The new row
		// comes before order_coupons, which needs its id: a row no other
		// transaction can know of yet keeps the lock order of
		// docs/checkout.md.
		onOrder := make([]*models.Coupon, len(p.coupons))
		for i, c := range p.coupons {
			onOrder[i] = c
			if sc := p.claims[i]; sc != nil {
				row := *c
				row.Status, row.OrderID, row.HoldExpiresAt, row.UpdatedAt = models.CouponHeld, &req.OrderID, &expires, now
				if err := s.insertClaim(tx, sc, &row); err != nil {
					return err
				}
				onOrder[i] = &row
			}
		}
		if err := addOrderCoupons(tx, req.OrderID, onOrder, now); err != nil {
			return err
		}
		for i, c := range onOrder {
			detail := fmt.Sprintf("order=%s order_amount_cents=%d discount_cents=%d expires_at=%s",
				req.OrderID, req.OrderAmountCents, res.Coupons[i].DiscountCents, core.FormatTime(expires))
			if sc := p.claims[i]; sc != nil {
				detail += fmt.Sprintf(" user=%s shared_code=%s claimed=true", c.UserID, sc.code)
			} else {
				owner, ownerArgs := takeOwner(c, req.UserID)
				r := tx.Exec(`UPDATE user_coupons SET status = ?, order_id = ?, hold_expires_at = ?, version = version + 1, updated_at = ?`+owner+`
					WHERE id = ? AND status = ? AND version = ?`+ownerGuard(owner),
					append(append([]any{models.CouponHeld, req.OrderID, expires, now}, ownerArgs...), c.ID, models.CouponIssued, c.Version)...)
				if r.Error != nil {
					return r.Error
				}
				if r.RowsAffected == 0 {
					return core.ErrRaced
				}
				if owner != "" {
					detail += " bearer_owner=" + req.UserID
				}
			}
			if err := s.Audit(tx, core.ActorName(req.Actor), "coupon.hold", fmt.Sprintf("coupon:%d", c.ID), detail); err != nil {
				return err
			}
			ev := models.NewCouponEvent(c, p.templates[i].Currency)
			ev.Status, ev.OrderID, ev.OrderAmountCents, ev.DiscountCents = models.CouponHeld, req.OrderID, req.OrderAmountCents, res.Coupons[i].DiscountCents
			ev.HoldExpiresAt, ev.Actor = &expires, core.ActorName(req.Actor)
			if req.oc.lined() {
				// Its allocation, stored with the hold and never re-priced;
				// its earlier rows on the order (refunded off it), which
				// the order's state showed, parked until the hold ends.
				if slices.Contains(req.park, c.ID) {
					if err := parkAllocation(tx, req.OrderID, c.ID); err != nil {
						return err
					}
				}
				if err := writeAllocation(tx, req.OrderID, c, res.alloc.shares[i], now, false, req.carry[c.ID]); err != nil {
					return err
				}
				ev.Lines, ev.ShippingDiscountCents = res.alloc.eventOf(i, c)
			}
			if err := s.events.EmitEvent(tx, models.EventCouponHeld, ev); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, errOrderExists) {
		if assumeNew {
			return nil, errOrderExists
		}
		return nil, core.ErrRetry // another request wrote the order's row first: decide on it
	}
	if errors.Is(err, errNoRoom) {
		// Another hold of this order may have come first: the fresh read
		// answers it (duplicate or idempotency_mismatch).
		if cur, _, rerr := s.ReadOrder(ctx, req.OrderID); rerr == nil && cur.HoldState != nil &&
			(*cur.HoldState == HoldHeld || *cur.HoldState == HoldConfirmed) {
			return nil, core.ErrRetry
		}
	}
	if err := checkoutTx(err); err != nil {
		return nil, err
	}
	res.Result, res.State, res.ExpiresAt = HoldHeld, HoldHeld, &expires
	if found && !req.oc.lined() && (o.Coupons > 0 || o.ReturnedCents > 0) {
		// An amount-only order that carries other coupons or returns pays
		// its kept amount less every discount on it (docs/checkout.md, "The
		// order state and the plan"), as read under its row lock; a lined
		// one's plan said so already.
		res.PayableCents = locked.payableWith(res.DiscountCents)
	}
	return res, nil
}

// holdAnswer rebuilds the answer of an order's hold from the database: its
// coupons priced as they were held (for an order with lines, their stored
// allocation while held or confirmed).
func (s *Checkout) holdAnswer(ctx context.Context, o *CheckoutOrder) (*CheckoutResult, error) {
	if o.HoldCodes == nil || *o.HoldCodes == "" {
		return holdAnswerOf(o, s.orderCurrency(o), nil, nil), nil
	}
	p, err := s.readCoupons(ctx, strings.Split(*o.HoldCodes, ","))
	if err != nil {
		return nil, err
	}
	return s.holdAnswerOn(ctx, o, p)
}

// holdAnswerOn is holdAnswer with the hold's coupons in hand (p, read by
// the order's hold codes): only their codes, templates and shared-code
// claims are answered, which no change of their state alters.
func (s *Checkout) holdAnswerOn(ctx context.Context, o *CheckoutOrder, p *priced) (*CheckoutResult, error) {
	a, err := s.orderAllocation(s.DB.WithContext(ctx), o, p, s.Clock())
	if err != nil {
		return nil, core.DBError("order", err)
	}
	res := holdAnswerOf(o, s.orderCurrency(o), p, a)
	if res.State == HoldHeld || res.State == HoldConfirmed {
		if res.PayableCents, err = payableAfterAll(s.DB.WithContext(ctx), o, len(p.coupons), s.Clock()); err != nil {
			return nil, core.DBError("order", err)
		}
	}
	return res, nil
}

// orderAllocation is the allocation of the hold's coupons (p) on the order:
// while its hold holds them (held or confirmed), as held (an order with
// lines: the stored one; an amount-only order: its stored discount split
// as the hold priced it, planHeldAmount); else planned on the order's
// state at now, the hold's coupons left out of it, as they would be held
// again (a late confirm).
func (s *Checkout) orderAllocation(db *gorm.DB, o *CheckoutOrder, p *priced, now time.Time) (*allocation, error) {
	held := o.HoldState != nil && (*o.HoldState == HoldHeld || *o.HoldState == HoldConfirmed)
	if o.Lined() && held {
		return storedAllocation(db, o, p.coupons)
	}
	pcs := make([]pricing.Coupon, len(p.coupons))
	for i, c := range p.coupons {
		pcs[i] = core.PricingCoupon(p.templates[i], c.Code)
		if !o.Lined() {
			pcs[i].Currency = "" // an amount-only order was checked in its currency when held
		}
	}
	var r pricing.Result
	if !o.Lined() {
		cart := pricing.OneLine(s.orderCurrency(o), o.AmountCents)
		if held {
			planHeldAmount(&cart, o.DiscountCents, pcs, &r)
			return allocationOf(&r, &cart, false), nil
		}
		row, err := readDiscounts(db, o.OrderID, now, p.ids())
		if err != nil {
			return nil, err
		}
		var pr pricing.Pricer
		pr.PriceAfter(&cart, leftTaken(&cart, row.left()), pcs, &r)
		return allocationOf(&r, &cart, false), nil
	}
	st, err := loadOrderState(db, o)
	if err != nil {
		return nil, err
	}
	st.without(p.ids()...)
	if err := planCoupons(st, st.cart, pcs, &r); err != nil {
		return nil, err
	}
	a := allocationOf(&r, st.cart, true)
	if a.carry, err = st.carriedAll(); err != nil {
		return nil, err
	}
	return a, nil
}

// takenOn puts in req what the coupons and the returns of an order with
// lines took of its cart, the request's coupons (p) left out (its state,
// orderState.forRequest).
func (s *Checkout) takenOn(db *gorm.DB, o *CheckoutOrder, p *priced, req *CheckoutRequest) error {
	st, err := loadOrderState(db, o)
	if err != nil {
		return err
	}
	_, err = st.forRequest(req, p)
	return err
}

// holdAnswerOf is holdAnswer with the order's currency, the hold's coupons
// and templates in hand (p, in the order of its codes; nil when it has
// none) and their allocation.
func holdAnswerOf(o *CheckoutOrder, currency string, p *priced, a *allocation) *CheckoutResult {
	res := &CheckoutResult{OrderID: o.OrderID, ExpiresAt: o.HoldExpiresAt, OrderAmountCents: o.AmountCents, Coupons: []CheckoutCoupon{},
		Currency: currency}
	if o.HoldState != nil {
		res.State = *o.HoldState
	}
	res.Result = res.State
	if res.State == HoldConfirmed {
		res.Result = "redeemed"
	}
	if p == nil {
		return res
	}
	for i, c := range p.coupons {
		res.Coupons = append(res.Coupons, CheckoutCoupon{CouponCode: c.Code, Result: models.CodeOK.Word(),
			DiscountCents: a.perCoupon[i], TemplateID: c.TemplateID, SharedCode: core.SharedCodeOf(c, p.templates[i])})
	}
	res.DiscountCents = o.DiscountCents
	res.PayableCents = o.AmountCents - o.DiscountCents
	res.setLines(a)
	return res
}

// GetHold returns the order's hold: state held, confirmed, released or
// expired, its coupons, expires_at and amounts. A hold past its time that
// the sweeper has not released yet shows as expired.
//
// Errors: CodeInvalidRequest (field order_id), CodeNotFound, CodeUnavailable.
func (s *Checkout) GetHold(ctx context.Context, orderID string) (*CheckoutResult, error) {
	if err := core.ValidateOrderID(orderID); err != nil {
		return nil, err
	}
	o, found, err := s.ReadOrder(ctx, orderID)
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
	if res.State == HoldHeld && o.HoldExpiresAt != nil && !s.Clock().Before(*o.HoldExpiresAt) {
		res.State, res.Result = HoldExpired, HoldExpired
	}
	return res, nil
}
