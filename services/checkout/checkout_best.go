package checkout

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/pricing"
)

// Validate and usable with choose best (docs/checkout.md, "Choosing the
// best coupons"): the candidates are read as every validation reads its
// coupons, each is judged alone by decide (the word a hold of it alone
// answers), the search (best.go) chooses among those left, and the set
// chosen is answered as decide prices it, so that a hold of its codes
// takes exactly what validate said.

// LeftOutCoupon is a coupon the best-of choice weighed and left out.
type LeftOutCoupon struct {
	CouponCode string `json:"coupon_code"`
	Reason     string `json:"reason" schema:"left_out_reason" doc:"refused: refused on its own (refusal says why); not_combinable: the stacking rules keep it off the coupons chosen; not_best: they would take it, but the coupons chosen give more without it; not_considered: past the coupons the search weighs"`
	// Refusal is, for reason refused, the word a hold of it alone answers.
	Refusal       string `json:"refusal,omitempty" doc:"reason refused: the word a hold of this coupon alone would answer (below_minimum, not_found, ...)"`
	Message       string `json:"message"`
	DiscountCents int64  `json:"discount_cents" doc:"what it takes off the order alone (0 when refused)"`
}

// parseChoose reads a request's choose: best says models.ChooseBest.
func parseChoose(choose string) (best bool, err error) {
	switch choose {
	case "", models.ChooseAll:
		return false, nil
	case models.ChooseBest:
		return true, nil
	}
	return false, models.Invalid("choose", "must be all or best (or left out)")
}

// ParseChoose reads a request's choose, for the API's usable route:
// best says models.ChooseBest. Errors: CodeInvalidRequest (field choose).
func ParseChoose(choose string) (best bool, err error) { return parseChoose(choose) }

// freeCoupons reads the user's coupons free to use now: issued, or held
// by a hold past its time (free, swept or not: docs/checkout.md), by id,
// at most core.MaxUserCoupons. One SELECT.
func (s *Checkout) freeCoupons(ctx context.Context, userID string, now time.Time) ([]models.Coupon, error) {
	var cs []models.Coupon
	if err := s.DB.WithContext(ctx).
		Where("user_id = ? AND (status = ? OR (status = ? AND hold_expires_at <= ?))",
			userID, models.CouponIssued, models.CouponHeld, now).
		Order("id").Limit(core.MaxUserCoupons).Find(&cs).Error; err != nil {
		return nil, core.DBError("coupons", err)
	}
	return cs, nil
}

// addOwnCoupons adds to the request's codes, after those typed, the codes
// of the user's coupons free to use that it does not name, by id.
func (s *Checkout) addOwnCoupons(ctx context.Context, req *CheckoutRequest) error {
	cs, err := s.freeCoupons(ctx, req.UserID, s.Clock())
	if err != nil {
		return err
	}
	for _, c := range cs {
		if slices.ContainsFunc(req.CouponCodes, func(code string) bool { return strings.EqualFold(code, c.Code) }) {
			continue
		}
		req.CouponCodes = append(req.CouponCodes, c.Code)
		req.shared, req.noSuch = append(req.shared, false), append(req.noSuch, false)
	}
	return nil
}

// subset is the coupons of p at the indexes is, in that order.
func (p *priced) subset(is []int) *priced {
	q := &priced{}
	for _, i := range is {
		q.codes, q.coupons, q.templates = append(q.codes, p.codes[i]), append(q.coupons, p.coupons[i]), append(q.templates, p.templates[i])
		q.claims, q.fail = append(q.claims, p.claims[i]), append(q.fail, p.fail[i])
	}
	return q
}

// bestRulesOn are the stacking rules of a set added to the order o (nil:
// no row), as noRoomOn judges a request: an order that carries coupons
// takes no exclusive one, nothing next to an exclusive one, and combinable
// ones up to the cap; a request naming a coupon already on it is left to
// its own answer.
func (s *Checkout) bestRulesOn(o *CheckoutOrder, p *priced) bestRules {
	rules := bestRules{MaxCoupons: s.maxPerOrder()}
	if o == nil || o.Coupons == 0 {
		return rules
	}
	for _, c := range p.coupons {
		if c.OrderID != nil && *c.OrderID == o.OrderID {
			return rules
		}
	}
	rules.NoExclusive = true
	if o.Stacking != models.StackingCombinable {
		rules.MaxCoupons = 0
	} else {
		rules.MaxCoupons -= int(o.Coupons)
	}
	return rules
}

// noRoomFor is noRoomOn of the order validate read (none: room).
func (s *Checkout) noRoomFor(req *CheckoutRequest, p *priced) bool {
	return req.order != nil && s.noRoomOn(req.order, p)
}

// decideBest answers a validation with choose best: each coupon read is
// judged alone by decide (a refusal leaves it out, refused, with the word
// a hold of it alone answers), the search chooses among the others on
// what the order left (req.taken), and the set chosen is priced by decide
// as any validation is. Every code left out is listed with its reason, in
// the order of the codes; a code no coupon of the user has is refused
// not_found.
func (s *Checkout) decideBest(p *priced, req CheckoutRequest, now time.Time) *CheckoutResult {
	var cands []bestCandidate
	var at []int
	var pcs []pricing.Coupon
	left := map[int]LeftOutCoupon{} // by index in p
	for i, code := range p.codes {
		one := p.subset([]int{i})
		r := req
		r.noRoom = s.noRoomFor(&req, one)
		res, err := s.decide(one, r, now)
		if err != nil {
			var de *models.Error
			errors.As(err, &de)
			left[i] = LeftOutCoupon{CouponCode: code, Reason: models.LeftOutRefused, Refusal: de.Code.Word(), Message: de.Message}
			continue
		}
		t := p.templates[i]
		cands = append(cands, bestCandidate{Code: code, TemplateID: t.ID, Exclusive: t.Stacking != models.StackingCombinable,
			Alone: res.DiscountCents})
		at, pcs = append(at, i), append(pcs, core.PricingCoupon(t, p.coupons[i].Code))
	}
	rules := s.bestRulesOn(req.order, p)
	ch := chooseBest(cands, rules, planValue(&req.cart, req.taken, pcs))
	is := make([]int, len(ch.Set))
	for k, j := range ch.Set {
		is[k] = at[j]
	}
	chosen := p.subset(is)
	req.noRoom = s.noRoomFor(&req, chosen)
	res, _ := s.decide(chosen, req, now)
	markStacking(res, chosen.templates, s.maxPerOrder())
	for k, c := range cands {
		if reason, msg, ok := leftOutReason(cands, rules, ch, k); ok {
			left[at[k]] = LeftOutCoupon{CouponCode: c.Code, Reason: reason, Message: msg, DiscountCents: c.Alone}
		}
	}
	j := 0 // p holds the codes but those no coupon of the user has, in order
	for i, code := range req.CouponCodes {
		if req.noSuch[i] {
			e := core.NoSuchCoupon(code, nil)
			res.LeftOut = append(res.LeftOut, LeftOutCoupon{CouponCode: code, Reason: models.LeftOutRefused, Refusal: e.Code.Word(), Message: e.Message})
			continue
		}
		if l, ok := left[j]; ok {
			res.LeftOut = append(res.LeftOut, l)
		}
		j++
	}
	return res
}

// chooseUsable puts in out the usable coupons' best set as the search
// chooses it (the plan's price of each set on the cart, the stacking rules
// of a new order) and every usable coupon it leaves out, in their order.
func (s *Checkout) chooseUsable(out *Usable, tmpl map[string]*models.Template, cart *pricing.Cart) {
	cands := make([]bestCandidate, len(out.Coupons))
	pcs := make([]pricing.Coupon, len(out.Coupons))
	for i, u := range out.Coupons {
		t := tmpl[u.Coupon.Code]
		cands[i] = bestCandidate{Code: u.Coupon.Code, TemplateID: t.ID, Exclusive: t.Stacking != models.StackingCombinable, Alone: u.DiscountCents}
		pcs[i] = core.PricingCoupon(t, u.Coupon.Code)
	}
	rules := bestRules{MaxCoupons: s.maxPerOrder()}
	ch := chooseBest(cands, rules, planValue(cart, pricing.Taken{}, pcs))
	out.Best, out.BestDiscountCents = make([]string, 0, len(ch.Set)), ch.DiscountCents
	for _, i := range ch.Set {
		out.Best = append(out.Best, cands[i].Code)
	}
	for i, c := range cands {
		if reason, msg, ok := leftOutReason(cands, rules, ch, i); ok {
			out.LeftOut = append(out.LeftOut, LeftOutCoupon{CouponCode: c.Code, Reason: reason, Message: msg, DiscountCents: c.Alone})
		}
	}
}
