package checkout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/pricing"

	"gorm.io/gorm"
)

// RedeemRequest asks to use a coupon on an order at checkout.
type RedeemRequest struct {
	CouponCode       string
	OrderID          string
	OrderAmountCents int64
	// UserID, when given, must be the coupon's holder.
	UserID string
	// Cashier is who redeems (the caller's name), kept in the use log.
	Cashier string
	// Audited writes the redemption to the audit log too, in its
	// transaction (action coupon.redeem): a till's redemption, which the
	// console's audit tells with the holds, refunds and returns
	// (docs/pages.md). An API redemption is told by its event alone
	// (docs/statements.md).
	Audited bool
	// Cart is the order's cart: lines (then OrderAmountCents, when not 0,
	// must be their total), or none for an amount-only redemption.
	Cart Cart
	// cart is the cart priced, oc what the order's row keeps of it
	// (parseRedeemCart).
	cart pricing.Cart
	oc   orderCart
	// facts is what the template's eligibility rule is judged on
	// (readFacts), read once per request.
	facts *facts
}

// parseRedeemCart checks the request's order id, then its cart and amount
// (parseCart).
func (s *Checkout) parseRedeemCart(req *RedeemRequest) error {
	if err := core.ValidateOrderID(req.OrderID); err != nil {
		return err
	}
	cart, err := s.parseCart(req.Cart, req.OrderAmountCents)
	if err != nil {
		return err
	}
	req.cart, req.OrderAmountCents = cart, cart.TotalCents()
	req.oc = orderCartOf(req.Cart, &req.cart)
	return nil
}

// priceAlone prices the coupon of template t alone on the request's cart:
// its discount and allocation on a new order, or the refusal of its
// minimum, target or currency.
func priceAlone(t *models.Template, code string, req *RedeemRequest) (*pricing.CouponResult, error) {
	r := pricing.Price(&req.cart, []pricing.Coupon{core.PricingCoupon(t, code)})
	cr := &r.Coupons[0]
	if cr.Refusal == pricing.RefusalBelowMinimum && !req.Cart.Lined() {
		return nil, &models.Error{Code: models.CodeBelowMinimum, Field: "order_amount_cents",
			Message: fmt.Sprintf("this coupon needs an order of at least %d cents", t.MinOrderCents)}
	}
	if err := couponRefusal(cr, t, &req.cart, req.Cart.Lined(), req.facts); err != nil {
		return nil, err
	}
	return cr, nil
}

// couponAllocation is one coupon's allocation on a cart with lines, as a
// redemption's answer lists it: every line, with the coupon's part.
func couponAllocation(cart *pricing.Cart, r *pricing.CouponResult) *allocation {
	a := &allocation{lined: true, currency: cart.Currency, lines: zeroLines(cart), shipping: r.ShippingCents,
		total: r.DiscountCents, perCoupon: []int64{r.DiscountCents}, shares: []*pricing.CouponResult{r}}
	for _, ls := range r.Lines {
		l := &a.lines[ls.Line]
		l.DiscountCents += ls.DiscountCents
		l.Coupons = append(l.Coupons, LineCoupon{CouponCode: r.Code, DiscountCents: ls.DiscountCents})
	}
	return a
}

// RedeemResult is the answer to a redemption. Duplicate is set for a replay of
// a redemption already done (same coupon, same order): the amounts are then
// those of the first answer, whatever amount the replay carried.
type RedeemResult struct {
	Duplicate        bool
	Coupon           models.CouponView
	OrderAmountCents int64
	DiscountCents    int64
	PayableCents     int64
	// Currency is the order's, of every amount.
	Currency string
	// Lined marks a redemption on an order with lines: Lines (the coupon's
	// part of each line) and ShippingDiscountCents are then given.
	Lined                 bool
	Lines                 []LineDiscount
	ShippingDiscountCents int64
}

// setLines puts a coupon's allocation on an order with lines in the answer.
func (r *RedeemResult) setLines(a *allocation) {
	if a == nil || !a.lined {
		return
	}
	r.Lined, r.Lines, r.ShippingDiscountCents = true, a.lines, a.shipping
}

// Redeem uses a coupon on an order (see docs/flows.md). A shared code
// claims a coupon for the user and redeems it at once (see redeemShared); a
// bearer coupon redeemed with a user_id becomes that user's.
// On an order's first checkout, live automatic offers that join its cart
// are taken with the code through a hold confirmed at once
// (redeemWithOffers, docs/automatic-offers.md).
//
// The code's check character, the order id, the amount and the owner are
// checked before anything else; then, under the coupon's lock, the coupon is
// read and the redemption decided: used by this order → duplicate with the
// first answer; used by another order → already_used; revoked; outside its
// validity → not_valid_now; below min_order_cents → below_minimum. The write is
// one transaction: `UPDATE ... WHERE id=? AND status='issued' AND version=?`,
// decided on RowsAffected, and the use log row, whose unique (coupon_id,
// order_id) index refuses a second row. When the UPDATE matches nothing, the
// use log refuses the row, or the transaction deadlocks, the whole transaction
// is rolled back and the redemption decided anew on a fresh read (a bounded
// number of times): a stale decision is never applied, and a duplicate or a
// deadlock never surfaces as a fault.
//
// The coupon is read outside the transaction: the version in the UPDATE's
// guard makes a stale read harmless, and the transaction stays two statements
// long (on SQLite it holds the one writer; on MySQL the coupon's row lock).
//
// An order has one amount (docs/checkout.md, "One amount per order"): a
// redemption on an order that has another is refused idempotency_mismatch,
// and on an order that carries other coupons or returns the discount is
// priced under the order's row lock on what the order leaves (priceOnOrder),
// so that the discounts of an order never sum over its amount.
//
// A coupon whose redemption by an order was refunded may be redeemed by the
// same order again, with the order's amount: the refunded use log row is made
// live again with the new discount (the unique index keeps one row per coupon and order, so the row
// shows the latest redemption; the refund's audit entry keeps the history).
//
// Errors: CodeInvalidRequest (field coupon_code, order_id, order_amount_cents or
// user_id), CodeNotFound, CodeUnauthorized with Forbidden (field user_id: the
// coupon belongs to another user), CodeAlreadyUsed, CodeRevoked,
// CodeNotValidNow, CodeBelowMinimum, CodeHeld (another order holds it),
// CodeNotCombinable (the order carries a coupon this one cannot share it
// with: the order's row in checkout_orders refuses it, see takeRoom; or
// nothing is left of its amount to discount), CodeIdempotencyMismatch
// (field order_amount_cents: the order has another amount),
// CodeBusy, CodeUnavailable.
func (s *Checkout) Redeem(ctx context.Context, req RedeemRequest) (*RedeemResult, error) {
	res, _, err := s.redeem(ctx, req)
	return res, err
}

// redeem is Redeem, the one path of every redemption of one code (the
// till's sale of one code too); held is the hold confirmed when live
// automatic offers joined the cart (redeemWithOffers), the whole order's
// answer with the offers, nil otherwise.
func (s *Checkout) redeem(ctx context.Context, req RedeemRequest) (res *RedeemResult, held *CheckoutResult, err error) {
	if res, held, taken, err := s.redeemWithOffers(ctx, req); taken || err != nil {
		return res, held, err
	}
	res, err = s.redeemCode(ctx, req)
	return res, nil, err
}

// redeemCode redeems one code with no automatic offer: a shared code's
// claim and redemption, or a coupon's. Errors: as Redeem.
func (s *Checkout) redeemCode(ctx context.Context, req RedeemRequest) (*RedeemResult, error) {
	code, err := models.ParseCouponCode("coupon_code", req.CouponCode)
	if shared, serr := s.readsAsShared(ctx, req.CouponCode, err); serr != nil {
		return nil, serr
	} else if shared {
		return s.redeemShared(ctx, req)
	}
	if err != nil {
		return nil, err
	}
	if err := s.parseRedeemCart(&req); err != nil {
		return nil, err
	}
	if req.UserID != "" {
		if err := models.ValidateUserID("user_id", req.UserID); err != nil {
			return nil, err
		}
	}
	c, err := s.CouponByCode(ctx, code)
	if err != nil {
		return nil, err
	}
	if req.UserID != "" && c.UserID != req.UserID && c.UserID != models.BearerUserID {
		// "Not your coupon" is 403 (docs/result-codes.md). The cashier
		// holds the code, so saying that it exists tells them nothing new.
		return nil, &models.Error{Code: models.CodeUnauthorized, Forbidden: true, Field: "user_id",
			Message: "this coupon belongs to another user"}
	}
	return s.redeemCoupon(ctx, c, req)
}

// redeemCoupon redeems the coupon as just read under its lock: the one path
// of every redemption, of a code typed at the till or of a coupon an order
// claimed with a shared code.
func (s *Checkout) redeemCoupon(ctx context.Context, c *models.Coupon, req RedeemRequest) (*RedeemResult, error) {
	t, err := s.Template(ctx, c.TemplateID)
	if err != nil {
		return nil, err
	}
	if req.facts == nil && ruled([]*models.Template{t}) {
		if req.facts, err = s.readFacts(ctx, req.UserID, &req.Cart, &req.cart, []*models.Template{t}, s.Clock()); err != nil {
			return nil, err
		}
	}
	var res *RedeemResult
	err = s.WithCouponLock(ctx, c, func(cur *models.Coupon) error {
		var err error
		res, err = s.redeemOnce(ctx, t, cur, req)
		return err
	})
	return res, err
}

// redeemOnce decides a redemption on the coupon as just read and, when it is
// to be done, writes it. It answers errRetry when the coupon changed under it.
func (s *Checkout) redeemOnce(ctx context.Context, t *models.Template, c *models.Coupon, req RedeemRequest) (*RedeemResult, error) {
	now := s.Clock().Truncate(time.Microsecond) // what the database keeps
	switch c.Status {
	case models.CouponUsed:
		if c.OrderID == nil || *c.OrderID != req.OrderID {
			return nil, alreadyUsed(c)
		}
		lg, found, err := s.UseLog(ctx, c.ID, req.OrderID)
		if err != nil {
			return nil, err
		}
		if !found || lg.UndoFlag {
			// A refund committed between the two reads: decide again.
			return nil, core.ErrRetry
		}
		res := &RedeemResult{Duplicate: true, Coupon: c.View(now, t.Currency), OrderAmountCents: lg.OrderAmountCents,
			DiscountCents: lg.DiscountCents, PayableCents: lg.OrderAmountCents - lg.DiscountCents, Currency: t.Currency}
		o, found, err := s.ReadOrder(ctx, req.OrderID)
		if err != nil {
			return nil, err
		}
		if found {
			res.Currency = s.orderCurrency(&o)
		}
		switch {
		case lg.PayableCents != nil:
			// The first answer's payable, as it answered it: what the
			// order paid after every coupon on it then (docs/checkout.md,
			// "Replays"), whatever came to the order since.
			res.PayableCents = *lg.PayableCents
		case found:
			// A row written before the payable was kept: what the order
			// pays after every coupon on it, as it stood when the coupon
			// was redeemed (a hold counted while it held then).
			o.Coupons = -1
			if res.PayableCents, err = payableAfterAll(s.DB.WithContext(ctx), &o, 0, lg.UsedAt); err != nil {
				return nil, core.DBError("order", err)
			}
		}
		if found && o.Lined() {
			a, err := storedAllocation(s.DB.WithContext(ctx), &o, []*models.Coupon{c})
			if err != nil {
				return nil, core.DBError("order", err)
			}
			res.setLines(a)
		}
		return res, nil
	case models.CouponRevoked:
		return nil, models.Errorf(models.CodeRevoked, "this coupon was revoked")
	case models.CouponHeld:
		return nil, s.expireLapsed(ctx, c, now) // a hold past its time ends now (docs/checkout.md)
	case models.CouponIssued:
	default:
		return nil, fmt.Errorf("coupon %d has the unknown status %q", c.ID, c.Status)
	}
	if err := couponFits(c, "", "", now); err != nil { // "usable now": the one rule of every path
		return nil, err
	}
	share, err := priceAlone(t, c.Code, &req)
	if err != nil {
		return nil, err
	}
	if s.Hooks.AfterRedeemDecide != nil {
		s.Hooks.AfterRedeemDecide(req.OrderID)
	}
	owner, ownerArgs := takeOwner(c, req.UserID)
	user := c.UserID
	if owner != "" {
		user = req.UserID
	}
	lg := models.UseLog{CouponID: c.ID, OrderID: req.OrderID, UserID: user, TemplateID: c.TemplateID,
		OrderAmountCents: req.OrderAmountCents, DiscountCents: share.DiscountCents, Cashier: core.ActorName(req.Cashier), UsedAt: now}
	start := time.Now()
	// Most orders carry one coupon: the first attempt creates the order's
	// row inside the transaction, with the room already taken, which saves
	// the commit of a separate insert. When the row is there already, the
	// attempt rolls back (releasing the lock the failed insert took) and
	// the redemption takes the room of the existing row.
	payable := req.OrderAmountCents - lg.DiscountCents
	first := *share
	err = s.redeemTx(ctx, t, c, req, &lg, now, true, owner, ownerArgs, &payable, share)
	if errors.Is(err, errOrderExists) {
		// A hold of the order past its time ends first: its coupons leave
		// the order for every path at once (endLapsedOrder).
		o, _, rerr := s.ReadOrder(ctx, req.OrderID)
		if rerr != nil {
			return nil, rerr
		}
		if rerr := s.endLapsedOrder(ctx, &o, now); rerr != nil {
			return nil, rerr
		}
		*share = first
		err = s.redeemTx(ctx, t, c, req, &lg, now, false, owner, ownerArgs, &payable, share)
	}
	core.Observe(ctx, s.Meter.DBSeconds.WithLabelValues("redeem"), "redeem", start)
	if err := checkoutTx(err); err != nil {
		if models.IsCode(err, models.CodeNotCombinable) {
			// The order may be full of this very coupon, redeemed by a
			// request that raced this one: a changed coupon is decided anew.
			if cur, rerr := s.CouponByID(ctx, c.ID); rerr == nil && cur.Version != c.Version {
				return nil, core.ErrRetry
			}
		}
		return nil, err
	}
	c.Status, c.OrderID, c.UsedAt, c.UserID = models.CouponUsed, &req.OrderID, &now, user
	c.Version++
	c.UpdatedAt = now
	res := &RedeemResult{Coupon: c.View(now, t.Currency), OrderAmountCents: req.OrderAmountCents, DiscountCents: lg.DiscountCents,
		PayableCents: payable, Currency: req.cart.Currency}
	if req.oc.lined() {
		res.setLines(couponAllocation(&req.cart, share))
	}
	return res, nil
}

// errOrderExists is returned inside a transaction that tried to create the
// order's row when it was there already.
var errOrderExists = errors.New("the order's row exists")

// redeemTx writes a redemption in one transaction: the order's room (a new
// row for the order when newOrder, else a guarded UPDATE of its row), its
// live coupon, the guarded UPDATE of the coupon (taking a bearer coupon for
// its user: owner and ownerArgs, see takeOwner) and its use log row. On an
// order that has a row, the discount (lg) and what the order then pays
// (payable) are priced under the row's lock (priceOnOrder).
func (s *Checkout) redeemTx(ctx context.Context, t *models.Template, c *models.Coupon, req RedeemRequest, lg *models.UseLog,
	now time.Time, newOrder bool, owner string, ownerArgs []any, payable *int64, share *pricing.CouponResult) error {
	return s.redeemTxWith(ctx, t, req, lg, now, newOrder, payable, share, func(tx *gorm.DB) (*models.Coupon, error) {
		if err := addOrderCoupons(tx, req.OrderID, []*models.Coupon{c}, now); err != nil {
			return nil, err
		}
		res := tx.Exec(`UPDATE user_coupons SET status = ?, order_id = ?, used_at = ?, version = version + 1, updated_at = ?`+owner+`
			WHERE id = ? AND status = ? AND version = ?`+ownerGuard(owner),
			append(append([]any{models.CouponUsed, req.OrderID, now, now}, ownerArgs...), c.ID, models.CouponIssued, c.Version)...)
		if res.Error != nil {
			return nil, res.Error
		}
		if res.RowsAffected == 0 {
			return nil, core.ErrRaced
		}
		if s.Hooks.AfterRedeemUpdate != nil {
			s.Hooks.AfterRedeemUpdate(req.OrderID)
		}
		return c, nil
	})
}

// redeemTxWith is the one transaction of every redemption, of an issued
// coupon (redeemTx) or of a shared code's fresh claim (retryRedeemClaim):
// the order's room (and, for a new order with lines, its lines), then
// write, which lists the coupon on the order and writes its row used by the
// order (returning the coupon its event tells of), then the coupon's line
// discounts (an order with lines), the use log row (on an amount-only
// order with each action's part of share) and the event. share is
// the coupon's allocation on a new order; on an order that has a row it is
// priced again under the row's lock (priceOnOrder) and share takes that.
func (s *Checkout) redeemTxWith(ctx context.Context, t *models.Template, req RedeemRequest, lg *models.UseLog,
	now time.Time, newOrder bool, payable *int64, share *pricing.CouponResult, write func(tx *gorm.DB) (*models.Coupon, error)) error {
	return s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var carry map[int][]pricing.UnitRun // what a coupon redeemed again keeps of its earlier part
		// The order's row first: its lock and guarded counter refuse a
		// coupon the order's others cannot share it with.
		if newOrder {
			// As takeRoom leaves a row that had no coupon.
			err := tx.Exec(`INSERT INTO checkout_orders
				(order_id, stacking, coupons, amount_cents, returned_cents, discount_cents, cart_hash, currency, shipping_cents, updated_at)
				VALUES (?, ?, 1, ?, 0, 0, ?, ?, ?, ?)`,
				req.OrderID, t.Stacking, req.OrderAmountCents, req.oc.hashArg(), req.oc.currency, req.oc.shipping, now).Error
			if _, dup := core.UniqueViolation(err); dup {
				return errOrderExists
			}
			if err != nil {
				return err
			}
			if err := writeLines(tx, req.OrderID, req.oc, true); err != nil {
				return err
			}
		} else {
			if err := s.takeRoom(tx, req.OrderID, t.Stacking, 1, req.OrderAmountCents, req.oc, now, "", ""); err != nil {
				return err
			}
			if err := writeLines(tx, req.OrderID, req.oc, false); err != nil {
				return err
			}
			// Under the row's lock: priced on what the order's other
			// coupons and returns leave of it.
			pc := core.PricingCoupon(t, share.Code)
			d, pay, sh, kept, err := priceOnOrder(tx, pc, lg.CouponID, req.OrderID, &req.cart, req.oc, now)
			if err != nil {
				return err
			}
			carry = kept
			lg.DiscountCents, *payable = d, pay
			if sh != nil {
				*share = *sh
			}
			share.DiscountCents = d
		}
		c, err := write(tx)
		if err != nil {
			return err
		}
		lg.CouponID = c.ID
		lg.PayableCents = ptrTo(*payable) // the first answer's, for its replays
		if req.oc.lined() {
			if err := writeAllocation(tx, req.OrderID, c, share, now, !newOrder, carry); err != nil {
				return err
			}
		}
		if !req.oc.lined() {
			// Each action's part of the one plan (docs/pricing.md, "Several actions").
			lg.Actions = core.EncodeUseLogActions(share)
		}
		if err := writeUseLog(tx, lg); err != nil {
			return err
		}
		if req.Audited {
			if err := s.Audit(tx, lg.Cashier, "coupon.redeem", fmt.Sprintf("coupon:%d", c.ID),
				fmt.Sprintf("order=%s order_amount_cents=%d discount_cents=%d", req.OrderID, req.OrderAmountCents, lg.DiscountCents)); err != nil {
				return err
			}
		}
		ev := models.NewCouponEvent(c, t.Currency)
		ev.Status, ev.OrderID, ev.OrderAmountCents, ev.DiscountCents, ev.Actor = models.CouponUsed, req.OrderID, req.OrderAmountCents, lg.DiscountCents, lg.Cashier
		ev.UserID = lg.UserID // a bearer coupon's new owner
		if req.oc.lined() {
			ev.Lines, ev.ShippingDiscountCents = couponAllocation(&req.cart, share).eventOf(0, c)
		}
		return s.events.EmitEvent(tx, models.EventCouponRedeemed, ev)
	})
}

// writeUseLog records a redemption inside its transaction: a row is inserted,
// or, when this order's redemption of the coupon was refunded, that row is made
// live again. The insert comes first: an UPDATE that matches no row would take
// a gap lock on the unique index and serialise the redemptions of neighbouring
// coupons. The unique (coupon_id, order_id) index refuses a second live row; the
// caller rolls back and decides again.
func writeUseLog(tx *gorm.DB, lg *models.UseLog) error {
	err := core.InsertUseLog(tx, lg)
	if index, ok := core.UniqueViolation(err); !ok || index != core.UniqueUseLog {
		return err
	}
	lg.ID = 0
	res := tx.Exec(`UPDATE coupon_use_log SET undo_flag = ?, undone_at = NULL, user_id = ?, template_id = ?,
		order_amount_cents = ?, discount_cents = ?, cashier = ?, used_at = ?, payable_cents = ?, actions = ?
		WHERE coupon_id = ? AND order_id = ? AND undo_flag = ?`,
		false, lg.UserID, lg.TemplateID, lg.OrderAmountCents, lg.DiscountCents, lg.Cashier, lg.UsedAt, lg.PayableCents, lg.Actions,
		lg.CouponID, lg.OrderID, true)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return err // a live row for this order: the unique index refused ours
	}
	return nil
}

// alreadyUsed names the order that holds the coupon and since when.
func alreadyUsed(c *models.Coupon) error {
	return models.Errorf(models.CodeAlreadyUsed, "this coupon was already used by %s", orderSince(c.OrderID, " at ", c.UsedAt))
}

// priceOnOrder is the discount of a coupon redeemed one step at a time on
// an order that has a row, inside tx after the order's row lock was taken:
// the coupon planned on what the order leaves (planCoupons), and what the
// order then pays after every coupon on it. An amount-only order leaves
// its amount less its returns and the discounts on it (discountLeft); an
// order with lines leaves each kept unit's price less what the stored
// allocations of its live coupons took of it (its state, read with
// loadStateOnCart), and the coupon's share of each line is returned to be
// stored; on an amount-only order its result is returned, whose actions'
// parts its use log row keeps (docs/pricing.md, "Several actions"). A coupon refunded off the order and redeemed on it again
// (couponID) supersedes its earlier part there: the state leaves it out,
// and carry is what it keeps of it on the units returned before
// (orderState.carried).
// The coupon's minimums were checked on the order before. A coupon that
// would discount nothing is refused not_combinable rather than used up.
func priceOnOrder(tx *gorm.DB, pc pricing.Coupon, couponID int64, orderID string, cart *pricing.Cart, oc orderCart, now time.Time) (discount, payable int64, share *pricing.CouponResult, carry map[int][]pricing.UnitRun, err error) {
	if oc.lined() {
		st, err := loadStateOnCart(tx, orderID, oc.cart, now)
		if err != nil {
			return 0, 0, nil, nil, err
		}
		st.without(couponID)
		carry, err := st.carried(couponID)
		if err != nil {
			return 0, 0, nil, nil, err
		}
		var r pricing.Result
		if err := planCoupons(st, oc.cart, []pricing.Coupon{pc}, &r); err != nil {
			return 0, 0, nil, nil, err
		}
		if d := r.Coupons[0].DiscountCents; d > 0 {
			return d, r.PayableCents, &r.Coupons[0], carry, nil
		}
		if !st.keptUnits() {
			return 0, 0, nil, nil, returnedInFull(orderID)
		}
		return 0, 0, nil, nil, nothingLeft(orderID, r.PayableCents, st.keptCents())
	}
	row, err := readDiscounts(tx, orderID, now, []int64{couponID})
	if err != nil {
		return 0, 0, nil, nil, err
	}
	left, kept, cur := row.left(), row.Kept, row.Currency
	if cur == "" {
		cur = cart.Currency // a row written before amount-only orders kept theirs
	}
	if pc.Currency != "" && pc.Currency != cur {
		// The order's one currency, whatever the request said.
		return 0, 0, nil, nil, &models.Error{Code: models.CodeCurrencyMismatch, Field: "currency",
			Message: fmt.Sprintf("coupon %s is in %s, order %s in %s", pc.Code, pc.Currency, orderID, cur)}
	}
	if left > 0 {
		pc.MinOrderCents, pc.MinQuantity = 0, 0 // checked on the order's amount before
		one := pricing.OneLine(cur, left)
		var r pricing.Result
		if err := planCoupons(nil, &one, []pricing.Coupon{pc}, &r); err != nil {
			return 0, 0, nil, nil, err
		}
		if d := r.DiscountCents; d > 0 {
			// The settled discounts are no coupon's on the order now.
			return d, left - d + min(row.Settled, kept), &r.Coupons[0], nil, nil
		}
	}
	if kept == 0 {
		return 0, 0, nil, nil, returnedInFull(orderID)
	}
	return 0, 0, nil, nil, nothingLeft(orderID, left, kept)
}

// returnedInFull refuses a coupon on an order whose every unit came back.
func returnedInFull(orderID string) error {
	return models.Errorf(models.CodeNotCombinable, "order %s was returned in full: there is nothing left to discount", orderID)
}

// nothingLeft refuses a coupon that would discount nothing of what the
// order kept (kept cents, of which left are still paid).
func nothingLeft(orderID string, left, kept int64) error {
	return models.Errorf(models.CodeNotCombinable,
		"the coupons of order %s already discount %d of its %d cents: this coupon would discount nothing", orderID, kept-left, kept)
}
