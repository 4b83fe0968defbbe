package checkout

import (
	"context"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/pricing"
)

// UsableOffer is a live automatic offer that joins a cart, as the usable
// coupons list it (docs/automatic-offers.md): no coupon exists until a
// checkout claims it.
type UsableOffer struct {
	TemplateID    int64  `json:"template_id"`
	CouponCode    string `json:"coupon_code" doc:"the offer's place-holder code, AUTO-<template id>; a checkout takes the offer by itself, no code needed"`
	Stacking      string `json:"stacking"`
	DiscountCents int64  `json:"discount_cents" doc:"the offer's discount priced together with the best coupons and the other offers listed"`
	Automatic     bool   `json:"automatic" doc:"always true: an automatic offer"`
}

// offersIn is the live offers of the cart's currency (any, for a cart that
// names none).
func offersIn(offers []models.Template, currency string) []*models.Template {
	out := make([]*models.Template, 0, len(offers))
	for i := range offers {
		if offers[i].Currency == currency || currency == "" {
			out = append(out, &offers[i])
		}
	}
	return out
}

// addUsableOffers lists in out.Automatic the live automatic offers that a
// checkout of out.Best on the cart would take, as a hold takes them: the
// offers chooseAutomatic lets join Best, less those whose claim the user
// could not make now (wouldClaim: budget, stock, per-user limit, campaign
// cap), each priced by the plan together with Best and the offers kept.
// Errors: CodeUnavailable.
func (s *Checkout) addUsableOffers(ctx context.Context, out *Usable, tmpl map[string]*models.Template, userID string,
	in *Cart, cart *pricing.Cart, now time.Time) error {
	out.Automatic, out.AutomaticNotApplied = []UsableOffer{}, []OfferNotApplied{}
	all, err := s.AutomaticOffers(ctx)
	if err != nil || len(all) == 0 {
		return err
	}
	offers := offersIn(all, cart.Currency)
	typed := make([]*models.Template, len(out.Best))
	for i, code := range out.Best {
		typed[i] = tmpl[code]
	}
	f, err := s.readFacts(ctx, userID, in, cart, append(append([]*models.Template(nil), typed...), offers...), now)
	if err != nil {
		return err
	}
	var kept []*models.Template
	chosen, left := chooseAutomatic(offers, typed, cart, in.Lined(), s.maxPerOrder(), f)
	out.AutomaticNotApplied = append(out.AutomaticNotApplied, left...)
	for _, t := range chosen {
		refusal, err := s.wouldClaim(ctx, t, userID, now)
		if err != nil {
			return err
		}
		if refusal == nil {
			kept = append(kept, t)
		} else {
			out.AutomaticNotApplied = append(out.AutomaticNotApplied, notApplied(t, refusal))
		}
	}
	if len(kept) == 0 {
		return nil
	}
	pcs := make([]pricing.Coupon, 0, len(typed)+len(kept))
	for i, t := range typed {
		pcs = append(pcs, core.PricingCoupon(t, out.Best[i]))
	}
	for _, t := range kept {
		pcs = append(pcs, core.PricingCoupon(t, autoCode(t)))
	}
	r := pricing.Price(cart, pcs)
	for j, t := range kept {
		out.Automatic = append(out.Automatic, UsableOffer{TemplateID: t.ID, CouponCode: autoCode(t), Stacking: t.Stacking,
			DiscountCents: r.Coupons[len(typed)+j].DiscountCents, Automatic: true})
	}
	return nil
}
