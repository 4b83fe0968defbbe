package checkout

import (
	"context"
	"time"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/pricing"

	"gorm.io/gorm"
)

// redeemShared is the one-step redemption of a shared code
// (docs/shared-codes.md): the claim for the user (or, without a user_id,
// the anonymous shopper's, which holds no ordinal) is reserved by
// coupon_deduct.lua (idempotency keyed on template, user and order), and
// one transaction writes the coupon already used by the order, lists it on
// the order (stacking, as any redemption) and writes its use log row; then
// the reservation is confirmed, or given back when the transaction failed.
// A repeat (same code, user and order) finds the order's claim and answers
// as a repeated redemption does: duplicate with the first answer.
//
// Errors: CodeInvalidRequest (field coupon_code, order_id,
// order_amount_cents or user_id), CodeNotFound (no live template has the
// code), CodeNotClaimable, CodeSoldOut, CodeUserLimitReached,
// CodeBudgetExhausted, CodeNotValidNow, CodeBelowMinimum, CodeNotCombinable,
// CodeHeld (the order holds its claim: confirm the hold), CodeInProgress,
// CodeBusy, CodeUnavailable.
func (s *Checkout) redeemShared(ctx context.Context, req RedeemRequest) (*RedeemResult, error) {
	code, err := models.ParseSharedCode("coupon_code", req.CouponCode)
	if err != nil {
		return nil, err
	}
	if err := s.parseRedeemCart(&req); err != nil {
		return nil, err
	}
	if req.UserID == "" {
		// An anonymous shopper at the till: the claim takes stock and budget,
		// no ordinal (docs/shared-codes.md).
		if err := s.anonymousCode(ctx, "coupon_code", code); err != nil {
			return nil, err
		}
	} else if err := models.ValidateUserID("user_id", req.UserID); err != nil {
		return nil, err
	}
	t, err := s.sharedTemplate(ctx, code)
	if err != nil {
		return nil, err
	}
	// What needs no claim to be refused is refused before claiming.
	now := s.Clock().Truncate(time.Microsecond)
	from, _ := t.ValidityFor(now, s.Cfg.Location)
	if err := notYetValid(from, now); err != nil {
		return nil, err
	}
	if req.facts, err = s.readFacts(ctx, req.UserID, &req.Cart, &req.cart, []*models.Template{t}, now); err != nil {
		return nil, err
	}
	if _, err := priceAlone(t, code, &req); err != nil {
		return nil, err
	}
	if err := s.ensureOrder(ctx, req.OrderID); err != nil {
		return nil, err
	}
	creq := CheckoutRequest{OrderID: req.OrderID, UserID: req.UserID, CouponCodes: []string{code}, shared: []bool{true}}
	var res *RedeemResult
	err = s.withSharedClaims(ctx, &creq, func(claims []*sharedClaim) error {
		sc := claims[0]
		if sc == nil {
			// The order claimed with the code before: a repeat, answered
			// as the redemption of that coupon.
			var err error
			res, err = s.redeemClaimed(ctx, creq.CouponCodes[0], req)
			return err
		}
		return s.retryRedeemClaim(ctx, t, sc, req, &res)
	})
	return res, err
}

// redeemClaimed redeems the coupon an order claimed with a shared code
// before, as Redeem does any coupon.
func (s *Checkout) redeemClaimed(ctx context.Context, code string, req RedeemRequest) (*RedeemResult, error) {
	c, err := s.CouponByCode(ctx, code)
	if err != nil {
		return nil, err
	}
	return s.redeemCoupon(ctx, c, req)
}

// retryRedeemClaim writes a fresh claim's coupon used by the order, again on
// errRetry (a deadlock, a code taken), a bounded number of times.
func (s *Checkout) retryRedeemClaim(ctx context.Context, t *models.Template, sc *sharedClaim, req RedeemRequest, out **RedeemResult) error {
	return retryCheckout(ctx, func() error {
		now := s.Clock().Truncate(time.Microsecond)
		sc.bornAt(now, s.Cfg.Location)
		row := *sc.coupon
		row.Status, row.OrderID, row.UsedAt, row.UpdatedAt = models.CouponUsed, &req.OrderID, &now, now
		lg := &models.UseLog{OrderID: req.OrderID, UserID: row.UserID, TemplateID: row.TemplateID,
			OrderAmountCents: req.OrderAmountCents, Cashier: core.ActorName(req.Cashier), UsedAt: now}
		var payable int64
		// The order's row exists (ensureOrder): priced under its lock on
		// what the order leaves, as any one-step redemption (priceOnOrder).
		share := &pricing.CouponResult{Code: row.Code}
		err := s.redeemTxWith(ctx, t, req, lg, now, false, &payable, share, func(tx *gorm.DB) (*models.Coupon, error) {
			if err := s.insertClaim(tx, sc, &row); err != nil {
				return nil, err
			}
			if err := addOrderCoupons(tx, req.OrderID, []*models.Coupon{&row}, now); err != nil {
				return nil, err
			}
			return &row, nil
		})
		if err := checkoutTx(err); err != nil {
			return err
		}
		*out = &RedeemResult{Coupon: row.View(now, t.Currency), OrderAmountCents: req.OrderAmountCents, DiscountCents: lg.DiscountCents,
			PayableCents: payable, Currency: req.cart.Currency}
		if req.oc.lined() {
			(*out).setLines(couponAllocation(&req.cart, share))
		}
		return nil
	})
}
