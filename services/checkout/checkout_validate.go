package checkout

import (
	"context"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/pricing"

	"github.com/couponsvc/couponsvc/models"

	"gorm.io/gorm"
)

// Validate is a dry run of a hold over 1..5 codes: owner, state, validity,
// minimum, target, currency and stacking, priced on the request's cart by
// services/pricing. It writes nothing. A shared
// code is checked as its claim would be (claim rule, budget, stock, the
// user's limit) and priced as the coupon it would make; with an order that
// already claimed with it, that coupon answers. A coupon
// that does not apply is answered in the result (its word in Result, the
// word a hold would answer), not as an error; every coupon a refusal
// concerns carries its word on its line, stacking included.
//
// A code that names no coupon of the user is a refusal of its line too,
// not_found, word for word the same whether no coupon has it, it is
// another user's coupon (with a user_id), or no coupon can have it (a
// mistyped code, with a user_id or without): validation is no oracle of
// which codes exist (docs/result-codes.md, "Validate refuses in its
// answer"; answerNoSuch).
//
// With Choose best it answers the best set of the codes and, with a
// user_id, the user's own usable coupons instead (decideBest).
//
// Errors: CodeInvalidRequest (field order_id, order_amount_cents, user_id,
// choose or coupon_codes: their number, a code named twice or one over the
// length of any code), CodeUnavailable.
func (s *Checkout) Validate(ctx context.Context, req CheckoutRequest) (*CheckoutResult, error) {
	req.answerNoSuch = true
	best, err := parseChoose(req.Choose)
	if err != nil {
		return nil, err
	}
	if err := s.parseCheckout(ctx, &req, false); err != nil {
		return nil, err
	}
	if best && req.UserID != "" {
		if err := s.addOwnCoupons(ctx, &req); err != nil {
			return nil, err
		}
	}
	// A code read as shared that no live template has is the coupon code
	// it then is: one no coupon has, or a mistyped one.
	for i, code := range req.CouponCodes {
		if !req.shared[i] {
			continue
		}
		if err := s.anonymousCode(ctx, "coupon_codes", code); models.IsCode(err, models.CodeInvalidRequest) || models.IsCode(err, models.CodeNotFound) {
			req.shared[i], req.noSuch[i] = false, true
		} else if err != nil {
			return nil, err
		}
	}
	if err := s.addAutomatic(ctx, &req); err != nil {
		return nil, err
	}
	// A shared code is checked as its claim would be, taking nothing.
	claims, err := s.claimSharedCodes(ctx, &req, false)
	if err != nil {
		return nil, err
	}
	p, err := s.readValidated(ctx, &req, claims)
	if err != nil {
		return nil, err
	}
	now := s.Clock()
	if req.facts, err = s.readFacts(ctx, req.UserID, &req.Cart, &req.cart, p.templates, now); err != nil {
		return nil, err
	}
	if req.OrderID != "" {
		if req.taken, err = s.takenForValidate(ctx, &req, p); err != nil {
			return nil, core.DBError("order", err)
		}
		if req.onOrder, err = s.templatesOnOrder(ctx, req.OrderID, p); err != nil {
			return nil, core.DBError("order", err)
		}
	}
	if best {
		res := s.decideBest(p, req, now)
		res.AutomaticNotApplied = req.notApplied
		return res, nil
	}
	res, _ := s.decide(p, req, now)
	markStacking(res, p.templates, s.maxPerOrder())
	answerNoSuch(res, &req)
	res.AutomaticNotApplied = req.notApplied
	return res, nil
}

// answerNoSuch puts the line of each code no coupon of the user has
// (req.noSuch) at its place among the priced coupons: not_found, with the
// message of a code no coupon has. The result is then not_found, as a hold
// reads every coupon before it decides, and nothing is discounted.
func answerNoSuch(res *CheckoutResult, req *CheckoutRequest) {
	if !slices.Contains(req.noSuch, true) {
		return
	}
	lines := make([]CheckoutCoupon, 0, len(req.CouponCodes))
	priced := res.Coupons
	for i, code := range req.CouponCodes {
		if !req.noSuch[i] {
			lines, priced = append(lines, priced[0]), priced[1:]
			continue
		}
		e := core.NoSuchCoupon(code, nil)
		lines = append(lines, CheckoutCoupon{CouponCode: code, Result: e.Code.Word(), Code: e.Code, Message: e.Message})
	}
	res.Coupons, res.Result, res.alloc = lines, models.CodeNotFound.Word(), nil
	res.DiscountCents, res.PayableCents = 0, req.OrderAmountCents
	if req.Cart.Lined() {
		res.Lines, res.ShippingDiscountCents = zeroLines(&req.cart), ptrTo(int64(0))
	}
}

// takenForValidate is what the order named by a validation with lines
// already gives or gave away (its state, orderState.taken): the coupons on
// it other than the request's, and its returns, so that validate prices as
// the hold that follows would. An order without a row, or with another
// cart (a hold would refuse it), leaves the whole cart; an amount-only
// order prices the request in its currency. Three SELECTs when the order
// carries coupons or returns, one otherwise.
func (s *Checkout) takenForValidate(ctx context.Context, req *CheckoutRequest, p *priced) (pricing.Taken, error) {
	db := s.DB.WithContext(ctx)
	var o CheckoutOrder
	if err := db.Where("order_id = ?", req.OrderID).Limit(1).Find(&o).Error; err != nil {
		return pricing.Taken{}, err
	}
	if o.OrderID != "" && o.AmountCents != 0 && !o.Lined() && !req.Cart.Lined() && o.Currency != "" {
		req.cart.Currency = o.Currency // the order's one currency, whatever the request said
	}
	if o.OrderID == "" {
		return pricing.Taken{}, nil
	}
	if o.HoldState != nil && *o.HoldState == HoldHeld && o.HoldExpiresAt != nil && !s.Clock().Before(*o.HoldExpiresAt) &&
		o.HoldCodes != nil && *o.HoldCodes != "" {
		// Its hold past its time is gone for every path (endLapsedOrder):
		// its coupons take no room.
		o.Coupons = max(o.Coupons-int64(strings.Count(*o.HoldCodes, ",")+1), 0)
	}
	req.noRoom, req.order = s.noRoomOn(&o, p), &o
	if !o.Lined() && !req.Cart.Lined() {
		return amountTaken(db, &o, req, p, s.Clock())
	}
	if !o.Lined() || !req.Cart.Lined() || !o.sameCart(orderCartOf(req.Cart, &req.cart)) {
		return pricing.Taken{}, nil
	}
	st, err := loadStateOnCart(db, req.OrderID, &req.cart, s.Clock())
	if err != nil {
		return pricing.Taken{}, err
	}
	return st.forRequest(req, p)
}

// templatesOnOrder is the templates of the coupons the order lists
// (order_coupons: used, or held, but those of a hold past its time, which
// every path ends before it takes room: endLapsedOrder) other than the
// request's, which a hold or redemption would refuse a second coupon of
// (addOrderCoupons). One SELECT.
func (s *Checkout) templatesOnOrder(ctx context.Context, orderID string, p *priced) (map[int64]bool, error) {
	ids := append([]int64{0}, p.ids()...)
	var tids []int64
	if err := s.DB.WithContext(ctx).Raw(`SELECT oc.template_id FROM order_coupons oc JOIN user_coupons u ON u.id = oc.coupon_id
		WHERE oc.order_id = ? AND oc.coupon_id NOT IN ? AND NOT (u.status = ? AND u.hold_expires_at <= ?)`,
		orderID, ids, models.CouponHeld, s.Clock()).Scan(&tids).Error; err != nil {
		return nil, err
	}
	out := make(map[int64]bool, len(tids))
	for _, id := range tids {
		out[id] = true
	}
	return out, nil
}

// noRoomOn says the order's row has no room for the request's coupons, as
// takeRoom decides: it carries coupons, and it or one of them is not
// combinable, or they would pass the cap. A request naming a coupon already
// on the order is left to its own answer.
func (s *Checkout) noRoomOn(o *CheckoutOrder, p *priced) bool {
	if o.Coupons == 0 {
		return false
	}
	for _, c := range p.coupons {
		if c.OrderID != nil && *c.OrderID == o.OrderID {
			return false
		}
	}
	if o.Stacking != models.StackingCombinable || o.Coupons+int64(len(p.coupons)) > int64(s.maxPerOrder()) {
		return true
	}
	for _, t := range p.templates {
		if t.Stacking != models.StackingCombinable {
			return true
		}
	}
	return false
}

// amountTaken is takenForValidate of an amount-only order: what the
// redemption prices a coupon on (discountLeft: the amount less its returns
// and the discounts of the coupons on it) taken off the cart's one line, so
// that validate answers the redemption's discount, payable and refusal (an
// order returned in full leaves nothing). A request naming a coupon already
// on the order is priced on the whole amount, as itself. One more SELECT.
func amountTaken(db *gorm.DB, o *CheckoutOrder, req *CheckoutRequest, p *priced, now time.Time) (pricing.Taken, error) {
	for _, c := range p.coupons {
		if c.OrderID != nil && *c.OrderID == o.OrderID {
			return pricing.Taken{}, nil
		}
	}
	if len(req.cart.Lines) != 1 {
		return pricing.Taken{}, nil
	}
	row, err := readDiscounts(db, o.OrderID, now, p.ids())
	if err != nil {
		return pricing.Taken{}, err
	}
	req.settled = min(row.Settled, row.Kept)
	return leftTaken(&req.cart, row.left()), nil
}

// readValidated is readOwnCoupons with the request's coupons read in one
// SELECT instead of one per code (docs/statements.md, "Validate"): the
// same coupons, in the request's order. A code no coupon has, and one
// hiddenFrom the user (another user's coupon), is marked in req.noSuch and
// left out of the plan, for its line to say not_found (answerNoSuch).
// Templates come from the cache, as for every checkout request.
func (s *Checkout) readValidated(ctx context.Context, req *CheckoutRequest, claims []*sharedClaim) (*priced, error) {
	wanted := make([]string, 0, len(req.CouponCodes))
	for i, code := range req.CouponCodes {
		if !req.noSuch[i] && (i >= len(claims) || claims[i] == nil) {
			wanted = append(wanted, code)
		}
	}
	var rows []models.Coupon
	if len(wanted) > 0 {
		var err error
		if rows, err = s.readValidatedCoupons(ctx, wanted); err != nil {
			return nil, core.DBError("coupon", err)
		}
	}
	find := func(code string) (*models.Coupon, error) {
		j := slices.IndexFunc(rows, func(c models.Coupon) bool { return c.Code == code })
		if j < 0 {
			// A case-insensitive collation matches as `code = ?` did.
			j = slices.IndexFunc(rows, func(c models.Coupon) bool { return strings.EqualFold(c.Code, code) })
		}
		if j < 0 {
			return nil, core.NoSuchCoupon(code, gorm.ErrRecordNotFound)
		}
		return &rows[j], nil
	}
	codes, kept := make([]string, 0, len(req.CouponCodes)), make([]*sharedClaim, 0, len(req.CouponCodes))
	for i, code := range req.CouponCodes {
		var claim *sharedClaim
		if i < len(claims) {
			claim = claims[i]
		}
		if !req.noSuch[i] && claim == nil {
			c, err := find(code)
			req.noSuch[i] = err != nil || hiddenFrom(c, req.UserID, req.OwnOnly)
		}
		if !req.noSuch[i] {
			codes, kept = append(codes, code), append(kept, claim)
		}
	}
	return s.readWith(ctx, codes, kept, req.UserID, req.OwnOnly, find)
}

// validatedColumns are the columns of user_coupons that a validation's
// answer reads (couponFits, decide, SharedCodeOf): the rest of the row is
// left in the database.
const validatedColumns = `id, code, template_id, user_id, status, valid_from, valid_until, used_at, order_id,
	hold_expires_at, claim_order_id`

// readValidatedCoupons reads the coupons of codes, validatedColumns only,
// scanned straight into models.Coupon without gorm's reflection of the row
// (docs/statements.md, "Validate"): one SELECT, as Find did.
func (s *Checkout) readValidatedCoupons(ctx context.Context, codes []string) ([]models.Coupon, error) {
	rs, err := s.DB.WithContext(ctx).Raw(`SELECT `+validatedColumns+` FROM user_coupons WHERE code IN ?`, codes).Rows()
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	out := make([]models.Coupon, 0, len(codes))
	for rs.Next() {
		var c models.Coupon
		if err := rs.Scan(&c.ID, &c.Code, &c.TemplateID, &c.UserID, &c.Status, &c.ValidFrom, &c.ValidUntil, &c.UsedAt,
			&c.OrderID, &c.HoldExpiresAt, &c.ClaimOrderID); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rs.Err()
}

// markStacking puts not_combinable on the line of each coupon the stacking
// rules refuse that has no other refusal: every coupon past the cap, the
// second coupon of a template, and an exclusive coupon among others.
// Result stays the word a hold would answer (decide).
func markStacking(res *CheckoutResult, ts []*models.Template, maxPerOrder int) {
	seen := map[int64]bool{}
	for i, t := range ts {
		err := stackingRefusalAt(ts, i, seen, maxPerOrder)
		seen[t.ID] = true
		if err == nil || i >= len(res.Coupons) || res.Coupons[i].Code != models.CodeOK {
			continue
		}
		cc := &res.Coupons[i]
		cc.Result, cc.Code, cc.Message, cc.DiscountCents = err.Code.Word(), err.Code, err.Message, 0
	}
}

// UsableCoupon is one of a user's coupons that applies to an order amount
// or cart.
type UsableCoupon struct {
	Coupon        models.CouponView `json:"coupon"`
	Stacking      string            `json:"stacking"`
	DiscountCents int64             `json:"discount_cents"`
}

// Usable is the answer of UsableCoupons: the coupons best first, and Best,
// the codes of the combination with the largest total discount.
type Usable struct {
	// Currency is the cart's, of every amount.
	Currency          string         `json:"currency" schema:"currency"`
	Coupons           []UsableCoupon `json:"coupons"`
	Best              []string       `json:"best"`
	BestDiscountCents int64          `json:"best_discount_cents"`
	// LeftOut is, with choose best, every usable coupon the best-of choice
	// left out of Best, with why.
	LeftOut []LeftOutCoupon `json:"left_out,omitempty"`
	// Automatic is the live automatic offers a checkout of Best on the
	// cart would take (docs/automatic-offers.md).
	Automatic []UsableOffer `json:"automatic"`
	// AutomaticNotApplied is every other live offer of the cart's
	// currency, with why a checkout of Best would not take it
	// (docs/automatic-offers.md); [] when none is left out.
	AutomaticNotApplied []OfferNotApplied `json:"automatic_not_applied"`
}

// UsableCoupons is UsableForCart of an amount-only order.
func (s *Checkout) UsableCoupons(ctx context.Context, userID string, amount int64) (*Usable, error) {
	return s.UsableForCart(ctx, userID, amount, Cart{})
}

// UsableForCart returns the user's coupons that apply to an order of that
// amount, or of that cart, now (issued, valid, minimum, target and currency
// met), each with its discount alone on it (services/pricing), largest
// first, and the combination the stacking rules allow with the largest
// total discount (the best exclusive coupon alone, or the best combinable
// coupon of each template, at most the cap, priced together).
//
// Errors: CodeInvalidRequest (field user_id, order_amount_cents, currency,
// shipping_cents or lines), CodeUnavailable.
func (s *Checkout) UsableForCart(ctx context.Context, userID string, amount int64, in Cart) (*Usable, error) {
	return s.usableFor(ctx, userID, amount, in, false)
}

// UsableBestForCart is UsableForCart whose best combination is the one the
// best-of search chooses (chooseBest: the set the stacking rules allow that
// the plan prices highest), with every usable coupon it leaves out and why.
//
// Errors: those of UsableForCart.
func (s *Checkout) UsableBestForCart(ctx context.Context, userID string, amount int64, in Cart) (*Usable, error) {
	return s.usableFor(ctx, userID, amount, in, true)
}

// usableFor is UsableForCart, or UsableBestForCart when best.
func (s *Checkout) usableFor(ctx context.Context, userID string, amount int64, in Cart, best bool) (*Usable, error) {
	if err := models.ValidateUserID("user_id", userID); err != nil {
		return nil, err
	}
	cart, err := s.parseCart(in, amount)
	if err != nil {
		return nil, err
	}
	now := s.Clock()
	cs, err := s.freeCoupons(ctx, userID, now)
	if err != nil {
		return nil, err
	}
	out := &Usable{Currency: cart.Currency, Coupons: []UsableCoupon{}, Best: []string{}}
	tmpl := map[string]*models.Template{}
	var pricer pricing.Pricer
	var r pricing.Result
	one := make([]pricing.Coupon, 1)
	ts := make([]*models.Template, len(cs))
	for i := range cs {
		if couponFits(&cs[i], userID, "", now) != nil {
			continue
		}
		if ts[i], err = s.Template(ctx, cs[i].TemplateID); err != nil {
			return nil, err
		}
	}
	f, err := s.readFacts(ctx, userID, &in, &cart, ts, now)
	if err != nil {
		return nil, err
	}
	for i := range cs {
		c, t := &cs[i], ts[i]
		if t == nil {
			continue
		}
		one[0] = core.PricingCoupon(t, c.Code)
		pricer.Price(&cart, one, &r)
		if couponRefusal(&r.Coupons[0], t, &cart, in.Lined(), f) != nil {
			continue
		}
		tmpl[c.Code] = t
		out.Coupons = append(out.Coupons, UsableCoupon{Coupon: c.View(now, t.Currency), Stacking: t.Stacking, DiscountCents: r.Coupons[0].DiscountCents})
	}
	sort.SliceStable(out.Coupons, func(a, b int) bool { return out.Coupons[a].DiscountCents > out.Coupons[b].DiscountCents })
	if best {
		s.chooseUsable(out, tmpl, &cart)
	} else {
		s.bestUsable(out, tmpl, &cart)
	}
	if err := s.addUsableOffers(ctx, out, tmpl, userID, &in, &cart, now); err != nil {
		return nil, err
	}
	return out, nil
}

// bestUsable puts in out the usable coupons' best combination: the best
// combinable coupon of each template, best first, up to the cap, or the
// best exclusive coupon alone when it gives more.
func (s *Checkout) bestUsable(out *Usable, tmpl map[string]*models.Template, cart *pricing.Cart) {
	var r pricing.Result
	var pricer pricing.Pricer
	// The best combinable coupon of each template, best first, up to the cap.
	var combo []string
	var comboC []pricing.Coupon
	taken := map[int64]bool{}
	for _, u := range out.Coupons {
		t := tmpl[u.Coupon.Code]
		if t.Stacking != models.StackingCombinable || taken[t.ID] || len(combo) == s.maxPerOrder() {
			continue
		}
		taken[t.ID] = true
		combo, comboC = append(combo, u.Coupon.Code), append(comboC, core.PricingCoupon(t, u.Coupon.Code))
	}
	if len(combo) > 0 {
		pricer.Price(cart, comboC, &r)
		out.Best, out.BestDiscountCents = combo, r.DiscountCents
	}
	for _, u := range out.Coupons {
		if tmpl[u.Coupon.Code].Stacking == models.StackingExclusive && u.DiscountCents > out.BestDiscountCents {
			out.Best, out.BestDiscountCents = []string{u.Coupon.Code}, u.DiscountCents
		}
	}
}

// ensureOrder makes the order's row in checkout_orders, empty, unless it is
// there. Its own statement, outside the transactions that lock the row: two
// requests creating it at once make one row, and neither waits on a gap lock.
