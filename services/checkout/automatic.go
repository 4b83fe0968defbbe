package checkout

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/pricing"
)

// autoCodePrefix starts the place-holder code of an automatic offer in a
// request's codes until its claim gives it a coupon code (and in a
// validation's answer, which claims nothing).
const autoCodePrefix = "AUTO-"

// autoCode is the place-holder code of automatic offer t.
func autoCode(t *models.Template) string { return autoCodePrefix + strconv.FormatInt(t.ID, 10) }

// OfferNotApplied is a live automatic offer of the cart's currency that
// does not join it, with why (docs/automatic-offers.md, "Why an offer is
// not applied"): the offer's own refusal on this cart (condition_not_met,
// below_minimum, not_eligible, not_for_items, ...), not_combinable when the
// stacking rules keep it out, or the word its claim was refused with.
type OfferNotApplied struct {
	TemplateID int64  `json:"template_id"`
	Name       string `json:"name"`
	Reason     string `json:"reason" doc:"the result word of why the offer does not join the cart, e.g. condition_not_met, below_minimum, not_eligible, not_for_items, not_combinable, user_limit_reached"`
	Message    string `json:"message" doc:"why, for people, e.g. needs 2 items of category trousers, the cart has 1"`
}

// notApplied is the answer's line of offer t left out by err. The offer
// has no code a shopper knows: a refusal that names it by its place-holder
// code says "this offer", and one that starts with it says what the offer
// needs alone ("needs 2 items of category trousers, the cart has 1").
func notApplied(t *models.Template, err error) OfferNotApplied {
	var e *models.Error
	if errors.As(err, &e) {
		msg := strings.ReplaceAll(e.Message, "coupon "+autoCode(t), "this offer")
		return OfferNotApplied{TemplateID: t.ID, Name: t.Name, Reason: e.Code.Word(), Message: strings.TrimPrefix(msg, "this offer ")}
	}
	return OfferNotApplied{TemplateID: t.ID, Name: t.Name, Reason: models.ErrorCode(err).Word(), Message: err.Error()}
}

// chooseAutomatic is the one rule of which automatic offers join a cart
// (docs/automatic-offers.md): offers are taken in their order (priority,
// then id); each joins when the stacking rules let the whole set (the typed
// coupons' templates, the offers chosen before it and it) share one order
// and, priced together on the cart, it and every coupon of the set that
// discounted something without it still do (its minimum, targets,
// currency and conditions admit the cart, and it squeezes no other coupon
// to nothing, and its eligibility rule admits the request's facts f). A
// typed code is never refused because of an offer: an offer that cannot
// join is left out, and answered in left with why (the stacking rule's
// refusal, its own refusal on the cart, or not_combinable when it would
// leave another coupon nothing to discount). It is pure: no database,
// Redis or clock.
func chooseAutomatic(offers, typed []*models.Template, cart *pricing.Cart, lined bool, maxPerOrder int, f *facts) (chosen []*models.Template, left []OfferNotApplied) {
	refusals := func(set []*models.Template) []error {
		pcs := make([]pricing.Coupon, len(set))
		for i, st := range set {
			code := "c" + strconv.Itoa(i)
			if i >= len(typed) {
				code = autoCode(st) // an offer's refusal names it by its place-holder (notApplied)
			}
			pcs[i] = core.PricingCoupon(st, code)
		}
		r := pricing.Price(cart, pcs)
		out := make([]error, len(set))
		for i := range set {
			out[i] = couponRefusal(&r.Coupons[i], set[i], cart, lined, f)
		}
		return out
	}
	before := refusals(typed)
	for _, t := range offers {
		set := append(append(append([]*models.Template(nil), typed...), chosen...), t)
		if err := stackingError(set, maxPerOrder); err != nil {
			left = append(left, notApplied(t, err))
			continue
		}
		refused := refusals(set)
		if own := refused[len(set)-1]; own != nil {
			left = append(left, notApplied(t, own))
			continue
		}
		squeezed := false
		for i := range set[:len(set)-1] {
			if refused[i] != nil && (i >= len(typed) || before[i] == nil) {
				squeezed = true
			}
		}
		if squeezed {
			left = append(left, notApplied(t, models.Errorf(models.CodeNotCombinable,
				"it would leave another coupon of the cart nothing to discount")))
			continue
		}
		chosen = append(chosen, t)
	}
	return chosen, left
}

// addAutomatic appends to the request the automatic offers that join its
// cart (chooseAutomatic), each at the end of its codes as a place-holder
// that claimSharedCodes claims (or, validating, checks) as a shared code's
// template: the same claim through coupon_deduct.lua, counted in the
// template's stock and limit, the campaign's budget and per-customer cap.
// The typed codes' templates are read for the stacking rules (a coupon
// code no coupon has is left to the flow to answer). Without a live offer
// it reads nothing. Errors: CodeUnavailable.
func (s *Checkout) addAutomatic(ctx context.Context, req *CheckoutRequest) error {
	offers, err := s.AutomaticOffers(ctx)
	if err != nil || len(offers) == 0 {
		return err
	}
	typed := make([]*models.Template, 0, len(req.CouponCodes))
	for i, code := range req.CouponCodes {
		if req.noSuch[i] {
			continue
		}
		var t *models.Template
		if req.shared[i] {
			t, err = s.sharedTemplate(ctx, code)
		} else {
			var c *models.Coupon
			if c, err = s.CouponByCode(ctx, code); err == nil {
				t, err = s.Template(ctx, c.TemplateID)
			}
		}
		if models.IsCode(err, models.CodeUnavailable) {
			return err
		}
		if err != nil {
			return noneLeft(req, s.MaxCouponCodes(), nil) // the flow answers the code's own error
		}
		if t.CodeMode == models.CodeModeAutomatic {
			continue
		}
		typed = append(typed, t)
	}
	ptrs := offersIn(offers, req.cart.Currency)
	// The offers' eligibility rules are judged on the request's facts, read
	// once for the offers and the typed codes' templates (no read when no
	// rule needs the customer's counts).
	f, err := s.readFacts(ctx, req.UserID, &req.Cart, &req.cart, append(append([]*models.Template(nil), typed...), ptrs...), s.Clock())
	if err != nil {
		return err
	}
	chosen, left := chooseAutomatic(ptrs, typed, &req.cart, req.Cart.Lined(), s.maxPerOrder(), f)
	req.notApplied = left
	for _, t := range chosen {
		req.CouponCodes = append(req.CouponCodes, autoCode(t))
		req.shared = append(req.shared, true)
		req.noSuch = append(req.noSuch, false)
		req.auto = append(req.auto, make([]*models.Template, len(req.CouponCodes)-1-len(req.auto))...)
		req.auto = append(req.auto, t)
	}
	return withNotApplied(noneLeft(req, s.MaxCouponCodes(), nil), req.notApplied)
}

// OffersNotAppliedError is the cause (models.Error.Err) of the refusal of
// a request with no code that no automatic offer joins (or whose only
// offer's claim was refused): why each live offer of its cart's currency
// is left out, so that a page can say it (docs/automatic-offers.md). The
// refusal stays the *models.Error the API answers as it is.
type OffersNotAppliedError struct {
	NotApplied []OfferNotApplied
	// Err is the refusal's own cause, if any.
	Err error
}

// Error says how many offers are left out.
func (e *OffersNotAppliedError) Error() string {
	return strconv.Itoa(len(e.NotApplied)) + " automatic offers not applied"
}

// Unwrap returns the refusal's own cause.
func (e *OffersNotAppliedError) Unwrap() error { return e.Err }

// NotAppliedOf returns the offers left out that a checkout's refusal
// carries (OffersNotAppliedError), nil when it carries none.
func NotAppliedOf(err error) []OfferNotApplied {
	var e *OffersNotAppliedError
	if errors.As(err, &e) {
		return e.NotApplied
	}
	return nil
}

// withNotApplied is err carrying the offers left out as its cause (err as
// it is when nil, not a *models.Error, or none is left out).
func withNotApplied(err error, left []OfferNotApplied) error {
	e, ok := err.(*models.Error) // only the refusal itself: a wrapped one is left as it is
	if len(left) == 0 || !ok {
		return err
	}
	out := *e
	out.Err = &OffersNotAppliedError{NotApplied: left, Err: e.Err}
	return &out
}

// noneLeft refuses a request left with no code: none was typed and no
// automatic offer joins the cart (refused, when not nil, is why the last
// offer's claim was refused).
func noneLeft(req *CheckoutRequest, n int, refused error) error {
	if len(req.CouponCodes) > 0 {
		return nil
	}
	if refused != nil {
		return refused
	}
	return models.Invalid("coupon_codes", "must hold 1 to %d codes: no automatic offer applies to this cart", n)
}

// anyAutomatic says an automatic offer is live. A list that cannot be read
// is an error, never "no offer": the request is answered 503 rather than
// decided without the offers it may take (docs/automatic-offers.md).
// Errors: CodeUnavailable.
func (s *Checkout) anyAutomatic(ctx context.Context) (bool, error) {
	offers, err := s.AutomaticOffers(ctx)
	return len(offers) > 0, err
}

// autoAt is the automatic offer at index i of the request's codes, nil for
// a typed code.
func (req *CheckoutRequest) autoAt(i int) *models.Template {
	if i < len(req.auto) {
		return req.auto[i]
	}
	return nil
}

// claimRefused says err is a claim's refusal (the offer is then left out
// of the cart, as if it did not apply), not a fault.
func claimRefused(err error) bool {
	switch models.ErrorCode(err) {
	case models.CodeSoldOut, models.CodeBudgetExhausted, models.CodeUserLimitReached, models.CodeCampaignLimit,
		models.CodeNotClaimable:
		return true
	}
	return false
}

// dropRefusedOffers removes from the request the automatic offers whose
// claim was refused (drop[i]), with their places in claims.
func (req *CheckoutRequest) dropRefusedOffers(claims []*sharedClaim, drop []bool) []*sharedClaim {
	var codes []string
	var shared, noSuch []bool
	var auto []*models.Template
	var kept []*sharedClaim
	for i := range req.CouponCodes {
		if drop[i] {
			continue
		}
		codes, shared, noSuch = append(codes, req.CouponCodes[i]), append(shared, req.shared[i]), append(noSuch, req.noSuch[i])
		auto, kept = append(auto, req.autoAt(i)), append(kept, claims[i])
	}
	req.CouponCodes, req.shared, req.noSuch, req.auto = codes, shared, noSuch, auto
	return kept
}
