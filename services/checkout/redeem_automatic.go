package checkout

import (
	"context"
	"errors"

	"github.com/couponsvc/couponsvc/models"
)

// redeemWithOffers is the one-step redemption of a code on a cart that live
// automatic offers join (docs/automatic-offers.md): the first checkout of
// the order holds the code and the offers chooseAutomatic lets join, as a
// hold does (the offers claimed through coupon_deduct.lua), and confirms
// the hold at once (holdConfirm). It answers as any redemption answers
// the typed coupon, from what was stored: its own discount and lines, and
// what the order pays after every coupon on it; a replay finds the order's
// row and is answered by the ordinary path as the duplicate of that answer.
//
// held is the hold confirmed, the order's whole answer (the code and the
// offers), for the till's sale. taken is false when the ordinary path
// redeems the code instead: no offer is live or joins the cart, the order
// has a row already (its offers were taken at its first checkout), or the
// request is one the ordinary path refuses with its own words; a list of
// offers that cannot be read is taken, with its error.
//
// Errors: those of Hold and Confirm (a field coupon_codes named
// coupon_code), CodeUnavailable.
func (s *Checkout) redeemWithOffers(ctx context.Context, req RedeemRequest) (res *RedeemResult, held *CheckoutResult, taken bool, err error) {
	if live, err := s.anyAutomatic(ctx); err != nil || !live {
		return nil, nil, err != nil, err
	}
	parsed := req
	if err := s.parseRedeemCart(&parsed); err != nil {
		return nil, nil, false, nil
	}
	if _, found, err := s.ReadOrder(ctx, req.OrderID); err != nil || found {
		return nil, nil, false, err
	}
	hold := func() CheckoutRequest {
		return CheckoutRequest{OrderID: req.OrderID, OrderAmountCents: req.OrderAmountCents, UserID: req.UserID,
			CouponCodes: []string{req.CouponCode}, Cart: req.Cart}
	}
	creq := hold()
	if err := s.parseCheckout(ctx, &creq, true); err != nil {
		if models.IsCode(err, models.CodeUnavailable) {
			return nil, nil, true, err
		}
		return nil, nil, false, nil
	}
	if err := s.addAutomatic(ctx, &creq); err != nil || len(creq.CouponCodes) < 2 {
		if models.IsCode(err, models.CodeUnavailable) {
			return nil, nil, true, err
		}
		return nil, nil, false, nil
	}
	held, err = s.holdConfirm(ctx, hold(), req.Cashier)
	if err != nil {
		return nil, nil, true, singularCode(err)
	}
	res, err = s.redeemClaimed(ctx, held.Coupons[0].CouponCode, parsed)
	if err != nil {
		return nil, nil, true, err
	}
	res.Duplicate = held.Duplicate
	return res, held, true, nil
}

// holdConfirm holds the request's codes (and the automatic offers that join
// its cart) and confirms the hold at once, for a checkout in one step: a
// confirm refused releases the hold. Sent again, it answers the first
// answer (Duplicate). Errors: as Hold and Confirm.
func (s *Checkout) holdConfirm(ctx context.Context, req CheckoutRequest, actor string) (*CheckoutResult, error) {
	req.TTLSeconds, req.Actor = saleHoldTTL, actor
	held, err := s.Hold(ctx, req)
	if err != nil {
		return nil, err
	}
	res, err := s.Confirm(ctx, ConfirmRequest{OrderID: req.OrderID, OrderAmountCents: held.OrderAmountCents,
		Cart: req.Cart, Cashier: actor})
	if err != nil && !models.IsCode(err, models.CodeUnavailable) {
		if _, rerr := s.Release(ctx, actor, req.OrderID); rerr != nil && !models.IsCode(rerr, models.CodeNotFound) {
			return nil, rerr
		}
	}
	if err != nil {
		return nil, err
	}
	res.Duplicate = res.Duplicate || held.Duplicate
	return res, nil
}

// singularCode names a hold's error on its codes by the redemption's one
// field, coupon_code.
func singularCode(err error) error {
	var me *models.Error
	if !errors.As(err, &me) || me.Field != "coupon_codes" {
		return err
	}
	c := *me
	c.Field = "coupon_code"
	return &c
}
