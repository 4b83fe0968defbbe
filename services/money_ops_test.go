package services_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"

	"pgregory.net/rapid"
)

// The operations of TestCheckoutMoneyModel (moneyOps): each draws what it
// needs, calls the App as a shop would and brings the model along with
// what was answered.

// Hold states of the model's orders.
const (
	mHoldHeld      = "held"
	mHoldConfirmed = "confirmed"
	mHoldReleased  = "released"
	mHoldExpired   = "expired"
)

// fits narrows keep, mostly, to the coupons in the order's currency: a
// coupon of another currency is refused, and the sequence should mostly
// move money.
func (m *moneyModel) fits(rt *rapid.T, o *moneyOrder, keep func(*moneyCoupon) bool) func(*moneyCoupon) bool {
	if rapid.IntRange(0, 9).Draw(rt, "anyCurrency") == 0 {
		return keep
	}
	return func(c *moneyCoupon) bool { return keep(c) && c.tp.Currency == o.cart.Currency }
}

func (m *moneyModel) opClaim(rt *rapid.T) {
	tp := m.tps[rapid.IntRange(0, len(m.tps)-1).Draw(rt, "template")]
	key := fmt.Sprintf("%s-k%d", m.run, m.next())
	res, err := m.f.Claim(tp.ID, m.user, key)
	if err != nil || res.Duplicate || res.Coupon == nil {
		rt.Logf("claim: %+v %v", res, err)
		rt.Fatalf("claim of template %s refused", tp.Name)
	}
	c := &moneyCoupon{name: fmt.Sprintf("c%d", len(m.coupons)+1), id: res.Coupon.ID, code: res.Coupon.Code, tp: tp, status: mIssued}
	m.coupons = append(m.coupons, c)
	rt.Logf("claim %s (%s): %s", c.name, c.code, describeTemplate(tp))
	m.addReplay("claim "+c.name, func() bool { return true }, func(rt *rapid.T) {
		again, err := m.f.Claim(tp.ID, m.user, key)
		if err != nil || !again.Duplicate || again.Coupon == nil || again.Coupon.ID != c.id {
			rt.Logf("claim replayed: %+v %v", again, err)
			rt.Fatalf("claim of %s replayed: not the duplicate of it", c.name)
		}
	})
}

func describeTemplate(tp *models.Template) string {
	return fmt.Sprintf("%s %s face=%d pct=%d cap=%d min=%d buy=%d get=%d get%%=%d applies=%s target=%v stacking=%s policy=%s",
		tp.Currency, tp.Kind, tp.FaceValueCents, tp.PercentOff, tp.MaxDiscountCents, tp.MinOrderCents, tp.BuyQuantity,
		tp.GetQuantity, tp.GetPercent, tp.AppliesTo, tp.Target.CategoryIDs, tp.Stacking, tp.RefundPolicy)
}

// opValidate validates coupons of any state on an order: an answer, and
// nothing written.
func (m *moneyModel) opValidate(rt *rapid.T) {
	o := m.drawOrder(rt)
	cs := m.drawCoupons(rt, 3, func(*moneyCoupon) bool { return true })
	before := m.snapshot(rt)
	v, err := m.f.Checkout.Validate(m.f.Ctx, m.request(o, codesOf(cs)))
	fault(rt, "validate", err)
	rt.Logf("validate %v on %s: %s", codesOf(cs), o.id, checkoutAnswer(v, err))
	m.sameSnapshot(rt, "validate", before)
}

func (m *moneyModel) opHold(rt *rapid.T) {
	m.endLapsed()
	o := m.drawOrder(rt)
	if o.holdState == mHoldHeld {
		rt.Skip("the order holds")
	}
	cs := m.drawCoupons(rt, 3, m.fits(rt, o, m.free))
	carried := map[string]int64{}
	for _, c := range cs {
		carried[c.code] = m.carried(rt, o, c)
	}
	req := m.request(o, codesOf(cs))
	v, verr := m.f.Checkout.Validate(m.f.Ctx, req)
	fault(rt, "validate", verr)
	h, err := m.f.Checkout.Hold(m.f.Ctx, req)
	fault(rt, "hold", err)
	rt.Logf("hold %v on %s: validate %s; hold %s", req.CouponCodes, o.id, checkoutAnswer(v, verr), checkoutAnswer(h, err))
	if err != nil {
		m.refusedAsValidate(rt, "hold", v, verr, err)
		return
	}
	if h.Duplicate {
		// The same codes on an order whose hold was confirmed answer its
		// first answer (docs/checkout.md, "The hold of an order"), even
		// when a coupon of it was refunded since: a replay, nothing held.
		if o.holdState != mHoldConfirmed || !slices.Equal(sorted(o.hold), sorted(req.CouponCodes)) {
			rt.Fatalf("a hold of free coupons on %s answered duplicate", o.name)
		}
		return
	}
	m.sameAsValidate(rt, "hold", v, verr, h.DiscountCents, h.PayableCents, perCoupon(h))
	for _, c := range cs {
		c.status, c.order, c.discount, c.keptFrom, c.carried = mHeld, o.id, perCoupon(h)[c.code], o.keptFrom(), carried[c.code]
		c.stamp++
	}
	o.hold, o.holdState, o.holdDisc, o.started = req.CouponCodes, mHoldHeld, h.DiscountCents, true
	o.holdUntil = m.f.Clock.Now().Add(moneyHoldTTL * time.Second)
	if h.ExpiresAt != nil {
		o.holdUntil = *h.ExpiresAt
	}
	o.stamp++
	m.checkPayable(rt, o, "hold", h.PayableCents)
	stamp := o.stamp
	m.addReplay("hold "+o.name, func() bool { return o.stamp == stamp && m.live(o) }, func(rt *rapid.T) {
		again, err := m.f.Checkout.Hold(m.f.Ctx, req)
		if err != nil || !again.Duplicate || !sameJSON(h, again) {
			rt.Logf("hold replayed: %s, want the first answer %s", checkoutAnswer(again, err), checkoutAnswer(h, nil))
			rt.Fatalf("hold of %s replayed: not the first answer", o.name)
		}
	})
}

func (m *moneyModel) opConfirm(rt *rapid.T) {
	m.endLapsed()
	o := m.drawOrderWhere(rt, func(o *moneyOrder) bool { return o.holdState == mHoldHeld || o.holdState == mHoldExpired })
	late := o.holdState == mHoldExpired
	carried := map[string]int64{}
	for _, code := range o.hold {
		carried[code] = m.carried(rt, o, m.coupon(code))
	}
	req := checkout.ConfirmRequest{OrderID: o.id, OrderAmountCents: o.amount(), Cashier: "shop"}
	if o.lined {
		req.Cart = o.cart
	}
	c, err := m.f.Checkout.Confirm(m.f.Ctx, req)
	fault(rt, "confirm", err)
	rt.Logf("confirm %s (late %v): %s", o.id, late, checkoutAnswer(c, err))
	if err != nil {
		if !late {
			rt.Fatalf("confirm of a live hold refused: %s", models.ErrorCode(err).Word())
		}
		return
	}
	if c.Duplicate || c.Late != late {
		rt.Fatalf("confirm answered duplicate=%v late=%v, want a first confirm, late=%v", c.Duplicate, c.Late, late)
	}
	if !late && c.DiscountCents != o.holdDisc {
		rt.Fatalf("confirm takes %d off, the hold held %d", c.DiscountCents, o.holdDisc)
	}
	per := perCoupon(c)
	for _, code := range o.hold {
		mc := m.coupon(code)
		if !late && (mc.status != mHeld || mc.order != o.id) {
			rt.Fatalf("model: confirmed coupon %s is %s", mc.name, mc.status)
		}
		if late {
			mc.keptFrom, mc.carried = o.keptFrom(), carried[code]
		}
		mc.status, mc.order, mc.discount = mUsed, o.id, per[code]
		mc.stamp++
		if !onShippingTemplate(mc.tp) {
			o.discountedBy(code, per[code]+mc.carried)
		}
	}
	o.settled, o.holdState = true, mHoldConfirmed
	o.stamp++
	m.checkPayable(rt, o, "confirm", c.PayableCents)
	stamp := o.stamp
	m.addReplay("confirm "+o.name, func() bool { return o.stamp == stamp }, func(rt *rapid.T) {
		again, err := m.f.Checkout.Confirm(m.f.Ctx, req)
		if err != nil || !again.Duplicate || !sameJSON(c, again) {
			rt.Logf("confirm replayed: %s, want the first answer %s", checkoutAnswer(again, err), checkoutAnswer(c, nil))
			rt.Fatalf("confirm of %s replayed: not the first answer", o.name)
		}
	})
}

func (m *moneyModel) opRelease(rt *rapid.T) {
	m.endLapsed()
	o := m.drawOrderWhere(rt, func(o *moneyOrder) bool { return o.holdState == mHoldHeld || o.holdState == mHoldExpired })
	res, err := m.f.Checkout.Release(m.f.Ctx, "shop", o.id)
	fault(rt, "release", err)
	rt.Logf("release %s (%s): %+v %v", o.id, o.holdState, res, err)
	if err != nil {
		rt.Fatalf("release of a hold %s refused: %s", o.holdState, models.ErrorCode(err).Word())
	}
	if res.Duplicate != (o.holdState == mHoldExpired) {
		rt.Fatalf("release of a hold %s answered duplicate=%v", o.holdState, res.Duplicate)
	}
	if o.holdState == mHoldHeld {
		for _, code := range o.hold {
			mc := m.coupon(code)
			mc.status, mc.order, mc.discount = mIssued, "", 0
			mc.stamp++
		}
		o.holdState = mHoldReleased
		o.stamp++
	}
	stamp := o.stamp
	m.addReplay("release "+o.name, func() bool { return o.stamp == stamp }, func(rt *rapid.T) {
		again, err := m.f.Checkout.Release(m.f.Ctx, "shop", o.id)
		if err != nil || !again.Duplicate {
			rt.Logf("release replayed: %+v %v", again, err)
			rt.Fatalf("release of %s replayed: not a duplicate", o.name)
		}
	})
}

// opLapse moves the clock past the holds' time: each is expired to
// everyone at once, whether or not the sweeper ran (it does not here).
func (m *moneyModel) opLapse(rt *rapid.T) {
	held := false
	for _, o := range m.orders {
		held = held || (o.holdState == mHoldHeld && m.live(o))
	}
	if !held {
		rt.Skip("no hold to lapse")
	}
	m.f.Clock.Advance((moneyHoldTTL + 1) * time.Second)
	rt.Logf("lapse: the clock is at %s", m.f.Clock.Now().Format(time.RFC3339))
	m.endLapsed()
}

// endLapsed brings the model to the holds past their time: expired, their
// coupons free.
func (m *moneyModel) endLapsed() {
	for _, o := range m.orders {
		if o.holdState != mHoldHeld || m.live(o) {
			continue
		}
		for _, code := range o.hold {
			if mc := m.coupon(code); mc.status == mHeld && mc.order == o.id {
				mc.status, mc.order, mc.discount = mIssued, "", 0
				mc.stamp++
			}
		}
		o.holdState = mHoldExpired
		o.stamp++
	}
}

// opRedeem is the one-step redemption of a free coupon on an order it was
// never refunded from.
func (m *moneyModel) opRedeem(rt *rapid.T) {
	m.endLapsed()
	o := m.drawOrder(rt)
	c := m.drawCoupons(rt, 1, m.fits(rt, o, func(c *moneyCoupon) bool { return m.free(c) && c.refundedFrom != o.id }))[0]
	m.redeem(rt, o, c, "redeem")
}

// opReredeem redeems a refunded coupon again on the order it was refunded
// from.
func (m *moneyModel) opReredeem(rt *rapid.T) {
	m.endLapsed()
	c := m.drawCoupons(rt, 1, func(c *moneyCoupon) bool { return m.free(c) && c.refundedFrom != "" })[0]
	o := m.order(c.refundedFrom)
	m.redeem(rt, o, c, "re-redeem")
}

func (m *moneyModel) redeem(rt *rapid.T, o *moneyOrder, c *moneyCoupon, what string) {
	carried := m.carried(rt, o, c)
	req := m.request(o, []string{c.code})
	v, verr := m.f.Checkout.Validate(m.f.Ctx, req)
	fault(rt, "validate", verr)
	rreq := checkout.RedeemRequest{CouponCode: c.code, OrderID: o.id, OrderAmountCents: o.amount(), UserID: m.user,
		Cashier: "till", Cart: req.Cart}
	r, err := m.f.Checkout.Redeem(m.f.Ctx, rreq)
	fault(rt, what, err)
	rt.Logf("%s %s on %s: validate %s; redeem %s", what, c.code, o.id, checkoutAnswer(v, verr), redeemAnswer(r, err))
	if err != nil {
		m.refusedAsValidate(rt, what, v, verr, err)
		return
	}
	if r.Duplicate {
		rt.Fatalf("%s of a free coupon answered duplicate", what)
	}
	m.sameAsValidate(rt, what, v, verr, r.DiscountCents, r.PayableCents, map[string]int64{c.code: r.DiscountCents})
	c.status, c.order, c.discount, c.keptFrom, c.carried = mUsed, o.id, r.DiscountCents, o.keptFrom(), carried
	c.stamp++
	o.discountedBy(c.code, r.DiscountCents-r.ShippingDiscountCents+carried)
	delete(o.refundedOff, c.code)
	o.settled, o.started = true, true
	o.stamp++
	if o.holdState != mHoldHeld {
		m.checkPayable(rt, o, what, r.PayableCents)
	}
	stamp, cstamp := o.stamp, c.stamp
	m.addReplay(what+" "+c.name, func() bool { return o.stamp == stamp && c.stamp == cstamp }, func(rt *rapid.T) {
		again, err := m.f.Checkout.Redeem(m.f.Ctx, rreq)
		if err != nil || !again.Duplicate || !sameRedeem(r, again) {
			rt.Logf("%s replayed: %s, want the first answer %s", what, redeemAnswer(again, err), redeemAnswer(r, nil))
			rt.Fatalf("%s of %s replayed: not the first answer", what, c.name)
		}
	})
}

// opRefund refunds a used coupon whole: it goes back to its holder (or the
// pool); what the order was paid stays as it was.
func (m *moneyModel) opRefund(rt *rapid.T) {
	m.endLapsed()
	c := m.drawCoupons(rt, 1, func(c *moneyCoupon) bool { return c.status == mUsed })[0]
	o := m.order(c.order)
	req := checkout.RefundRequest{CouponCode: c.code, OrderID: o.id, Cashier: "till"}
	res, err := m.f.Checkout.Refund(m.f.Ctx, req)
	fault(rt, "refund", err)
	rt.Logf("refund %s of %s: %+v %v", c.code, o.id, res, err)
	if err != nil || res.Duplicate {
		rt.Fatalf("refund of used coupon %s: not refunded", c.name)
	}
	m.refunded(c, o)
	stamp, cstamp := o.stamp, c.stamp
	m.addReplay("refund "+c.name, func() bool { return o.stamp == stamp && c.stamp == cstamp }, func(rt *rapid.T) {
		again, err := m.f.Checkout.Refund(m.f.Ctx, req)
		if err != nil || !again.Duplicate {
			rt.Logf("refund replayed: %+v %v", again, err)
			rt.Fatalf("refund of %s replayed: not a duplicate", c.name)
		}
	})
}

// refunded brings a coupon refunded from o to its template's policy.
func (m *moneyModel) refunded(c *moneyCoupon, o *moneyOrder) {
	c.status, c.order, c.discount, c.refundedFrom = mIssued, "", 0, o.id
	if o.refundedOff == nil {
		o.refundedOff = map[string]bool{}
	}
	o.refundedOff[c.code] = true
	if c.tp.RefundPolicy == models.RefundRecycle {
		c.status = mRevoked
	}
	c.stamp++
	o.stamp++
}

func (m *moneyModel) opReturnLines(rt *rapid.T) {
	m.endLapsed()
	o := m.drawOrderWhere(rt, func(o *moneyOrder) bool { return o.lined && o.started && !o.allReturned() })
	var lines []checkout.ReturnLine
	for i, l := range o.cart.Lines {
		if left := l.Quantity - o.returned[i]; left > 0 && rapid.Bool().Draw(rt, "returnLine") {
			lines = append(lines, checkout.ReturnLine{LineID: l.ID, Quantity: rapid.Int64Range(1, left).Draw(rt, "units")})
		}
	}
	if len(lines) == 0 {
		rt.Skip("no line drawn")
	}
	if m.live(o) && o.holdState == mHoldHeld {
		id := fmt.Sprintf("ret%d", o.returns+1)
		m.refusedWhileHeld(rt, o, func() error {
			_, err := m.f.Checkout.ReturnLines(m.f.Ctx, "pos", o.id, id, lines)
			return err
		})
		return
	}
	o.returns++
	id := fmt.Sprintf("ret%d", o.returns)
	res, err := m.f.Checkout.ReturnLines(m.f.Ctx, "pos", o.id, id, lines)
	fault(rt, "return by line", err)
	rt.Logf("return %s of %s: %+v: %s", id, o.id, lines, returnAnswer(res, err))
	if err != nil {
		if models.ErrorCode(err) == models.CodeReturnExceedsOrder {
			rt.Fatalf("a return of units of %s bought and not returned refused", o.name)
		}
		return
	}
	for _, rl := range lines {
		for i, l := range o.cart.Lines {
			if l.ID == rl.LineID {
				o.returned[i] += rl.Quantity
			}
		}
	}
	o.refunds += res.RefundCents
	m.returned(rt, o, res)
	m.addReplay("return "+o.name+"/"+id, func() bool { return true }, func(rt *rapid.T) {
		again, err := m.f.Checkout.ReturnLines(m.f.Ctx, "pos", o.id, id, lines)
		if err != nil || !again.Duplicate || !sameReturn(res, again) {
			rt.Logf("return replayed: %s, want the first answer %s", returnAnswer(again, err), returnAnswer(res, nil))
			rt.Fatalf("return %s of %s replayed: not the first answer", id, o.name)
		}
	})
}

func (m *moneyModel) opReturnAmount(rt *rapid.T) {
	m.endLapsed()
	o := m.drawOrderWhere(rt, func(o *moneyOrder) bool {
		return !o.lined && o.started && !o.allReturned()
	})
	amount := rapid.Int64Range(1, o.total-o.returnedCents).Draw(rt, "returned")
	id := fmt.Sprintf("ret%d", o.returns+1)
	if m.live(o) && o.holdState == mHoldHeld {
		m.refusedWhileHeld(rt, o, func() error {
			_, err := m.f.Checkout.ReturnPart(m.f.Ctx, "pos", o.id, id, amount)
			return err
		})
		return
	}
	o.returns++
	res, err := m.f.Checkout.ReturnPart(m.f.Ctx, "pos", o.id, id, amount)
	fault(rt, "return by amount", err)
	rt.Logf("return %s of %s: %d: %s", id, o.id, amount, returnAnswer(res, err))
	if err != nil {
		if models.ErrorCode(err) == models.CodeReturnExceedsOrder {
			rt.Fatalf("a return of %s within the amount kept refused", o.name)
		}
		return
	}
	o.returnedCents += amount
	o.refunds += amount - res.ClawbackCents
	m.returned(rt, o, res)
	m.addReplay("return "+o.name+"/"+id, func() bool { return true }, func(rt *rapid.T) {
		again, err := m.f.Checkout.ReturnPart(m.f.Ctx, "pos", o.id, id, amount)
		if err != nil || !again.Duplicate || !sameReturn(res, again) {
			rt.Logf("return replayed: %s, want the first answer %s", returnAnswer(again, err), returnAnswer(res, nil))
			rt.Fatalf("return %s of %s replayed: not the first answer", id, o.name)
		}
	})
}

// returned brings the model along with a return: the one that completes
// the order refunds its coupons.
func (m *moneyModel) returned(rt *rapid.T, o *moneyOrder, res *checkout.ReturnResult) {
	o.stamp++
	if res.FullRefund != o.allReturned() {
		rt.Fatalf("return answered full_refund=%v, every unit returned: %v", res.FullRefund, o.allReturned())
	}
	if !res.FullRefund {
		return
	}
	for _, c := range m.coupons {
		if c.status == mUsed && c.order == o.id {
			m.refunded(c, o)
		}
	}
}

// refusedWhileHeld: a return of an order whose hold is pending is refused
// 409 held, and changes nothing (docs/returns.md).
func (m *moneyModel) refusedWhileHeld(rt *rapid.T, o *moneyOrder, ret func() error) {
	before := m.snapshot(rt)
	err := ret()
	fault(rt, "return while held", err)
	rt.Logf("return of %s while its hold is pending: %v", o.id, err)
	if models.ErrorCode(err) != models.CodeHeld {
		rt.Fatalf("a return of %s while its hold is pending answered %v, want held", o.name, err)
	}
	m.sameSnapshot(rt, "refused return", before)
}

// opReplay sends again a request already answered, whose order and coupon
// nothing touched since: the first answer again, and nothing changed.
func (m *moneyModel) opReplay(rt *rapid.T) {
	m.endLapsed()
	var valid []moneyReplay
	for _, r := range m.replays {
		if r.valid() {
			valid = append(valid, r)
		}
	}
	if len(valid) == 0 {
		rt.Skip("nothing to replay")
	}
	r := valid[rapid.IntRange(0, len(valid)-1).Draw(rt, "replay")]
	rt.Logf("replay %s", r.name)
	before := m.snapshot(rt)
	r.run(rt)
	m.sameSnapshot(rt, "replay of "+r.name, before)
}

func (m *moneyModel) addReplay(name string, valid func() bool, run func(*rapid.T)) {
	m.replays = append(m.replays, moneyReplay{name: name, valid: valid, run: run})
}

// drawOrderWhere draws one of the orders that pass keep.
func (m *moneyModel) drawOrderWhere(rt *rapid.T, keep func(*moneyOrder) bool) *moneyOrder {
	var pool []*moneyOrder
	for _, o := range m.orders {
		if keep(o) {
			pool = append(pool, o)
		}
	}
	if len(pool) == 0 {
		rt.Skip("no order fits")
	}
	return pool[rapid.IntRange(0, len(pool)-1).Draw(rt, "order")]
}

func (m *moneyModel) coupon(code string) *moneyCoupon {
	for _, c := range m.coupons {
		if c.code == code {
			return c
		}
	}
	panic("no coupon " + code)
}

// keptFrom is per line the first unit not returned.
func (o *moneyOrder) keptFrom() map[int]int64 {
	out := map[int]int64{}
	for i, r := range o.returned {
		out[i] = r
	}
	return out
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func perCoupon(r *checkout.CheckoutResult) map[string]int64 {
	out := map[string]int64{}
	for _, c := range r.Coupons {
		out[c.CouponCode] = c.DiscountCents
	}
	return out
}

// onShippingTemplate says the template's coupons discount the shipping
// alone.
func onShippingTemplate(tp *models.Template) bool {
	return tp.Kind == models.KindFreeShipping || tp.AppliesTo == models.AppliesToShipping
}

// sameAsValidate fails unless the validation before a hold or redemption
// that went through said ok with the same discounts and payable.
func (m *moneyModel) sameAsValidate(rt *rapid.T, what string, v *checkout.CheckoutResult, verr error, discount, payable int64, per map[string]int64) {
	rt.Helper()
	if verr != nil || v.Result != "ok" {
		rt.Fatalf("the %s went through (%d off) where validate did not say ok", what, discount)
	}
	if v.DiscountCents != discount || v.PayableCents != payable {
		rt.Fatalf("validate: %d off, payable %d; the %s: %d off, payable %d", v.DiscountCents, v.PayableCents, what, discount, payable)
	}
	for i, c := range v.Coupons {
		if per[c.CouponCode] != c.DiscountCents {
			rt.Fatalf("validate gives coupon %d %d off, the %s %d", i, c.DiscountCents, what, per[c.CouponCode])
		}
	}
}

// refusedAsValidate fails when a hold or redemption was refused by a
// coupon rule (minimum, currency, stacking) that its validation let pass.
func (m *moneyModel) refusedAsValidate(rt *rapid.T, what string, v *checkout.CheckoutResult, verr error, err error) {
	rt.Helper()
	switch models.ErrorCode(err) {
	case models.CodeBelowMinimum, models.CodeCurrencyMismatch, models.CodeNotCombinable:
		if verr == nil && v.Result == "ok" {
			rt.Fatalf("validate said ok (%d off), the %s refused: %s", v.DiscountCents, what, models.ErrorCode(err).Word())
		}
	}
}

// checkPayable: an answer's payable is what the order pays after every
// coupon on it (while it has no return).
func (m *moneyModel) checkPayable(rt *rapid.T, o *moneyOrder, what string, payable int64) {
	rt.Helper()
	if o.returns > 0 {
		return
	}
	want := o.total + o.cart.ShippingCents
	for _, c := range m.coupons {
		if c.order == o.id && (c.status == mUsed || (c.status == mHeld && m.live(o))) {
			want -= c.discount
		}
	}
	if payable != want {
		rt.Fatalf("the %s answers payable %d; the order pays %d after every coupon on it", what, payable, want)
	}
}

func checkoutAnswer(r *checkout.CheckoutResult, err error) string {
	if err != nil {
		return fmt.Sprintf("error %s: %v", models.ErrorCode(err).Word(), err)
	}
	b, _ := json.Marshal(r)
	return string(b)
}

func redeemAnswer(r *checkout.RedeemResult, err error) string {
	if err != nil {
		return fmt.Sprintf("error %s: %v", models.ErrorCode(err).Word(), err)
	}
	return fmt.Sprintf("dup=%v %d off %d (shipping %d) payable %d lines %+v", r.Duplicate, r.DiscountCents,
		r.OrderAmountCents, r.ShippingDiscountCents, r.PayableCents, r.Lines)
}

func returnAnswer(r *checkout.ReturnResult, err error) string {
	if err != nil {
		return fmt.Sprintf("error %s: %v", models.ErrorCode(err).Word(), err)
	}
	return fmt.Sprintf("dup=%v full=%v refund=%d kept=%d discount_kept=%d clawback=%d returned=%d shipping_returned=%d lines=%+v",
		r.Duplicate, r.FullRefund, r.RefundCents, r.KeptAmountCents, r.DiscountKeptCents, r.ClawbackCents,
		r.DiscountReturnedCents, r.ShippingDiscountReturnedCents, r.Lines)
}

func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// sameRedeem says a replayed redemption gave the first answer, its
// payable included.
func sameRedeem(a, b *checkout.RedeemResult) bool {
	x, y := *a, *b
	x.Duplicate, y.Duplicate = false, false
	return sameJSON(x, y)
}

func sameReturn(a, b *checkout.ReturnResult) bool {
	return a.Currency == b.Currency && a.KeptAmountCents == b.KeptAmountCents && a.DiscountKeptCents == b.DiscountKeptCents &&
		a.ClawbackCents == b.ClawbackCents && a.FullRefund == b.FullRefund && a.Lined == b.Lined &&
		sameJSON(a.Lines, b.Lines) && a.RefundCents == b.RefundCents && a.DiscountReturnedCents == b.DiscountReturnedCents &&
		a.ShippingDiscountReturnedCents == b.ShippingDiscountReturnedCents
}
