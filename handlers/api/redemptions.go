package api

import (
	"net/http"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/services/checkout"

	"github.com/gin-gonic/gin"
)

type redeemRequest struct {
	CouponCode       *string `json:"coupon_code" binding:"required" schema:"checkout_code"`
	OrderID          *string `json:"order_id" binding:"required" schema:"order_id"`
	OrderAmountCents *int64  `json:"order_amount_cents" schema:"order_amount" doc:"the order's amount, before the discount (required without lines)"`
	cartFields
	UserID *string `json:"user_id" schema:"user_id" doc:"the coupon must belong to this user (403 forbidden otherwise); a bearer coupon becomes theirs; a shared code claims a coupon for this user and uses it; without user_id the claim is an anonymous shopper's (stock and budget, no per-user limit, the coupon has no owner)"`
}

// redeemCoupon uses a coupon on an order at checkout: 200 "redeemed" with the
// discount and the amount to pay; the same coupon and order again → 200
// "duplicate" with the first answer.
func (s *Server) redeemCoupon(c *gin.Context) {
	req, amount, cart, ok := bindOrder[redeemRequest](c)
	if !ok {
		return
	}
	// Given but empty is a mistake, not "no owner check".
	userID, err := optionalUserID(req.UserID)
	if err != nil {
		web.RespondError(c, err)
		return
	}
	res, err := s.checkout.Redeem(c.Request.Context(), checkout.RedeemRequest{CouponCode: *req.CouponCode, OrderID: *req.OrderID,
		OrderAmountCents: amount, Cart: cart, UserID: userID, Cashier: web.Principal(c).Name})
	if err != nil {
		web.RespondError(c, err)
		return
	}
	out := redeemAnswer{Coupon: res.Coupon, OrderAmountCents: res.OrderAmountCents,
		DiscountCents: res.DiscountCents, PayableCents: res.PayableCents, cartAnswer: cartAnswer{Currency: res.Currency}}
	if res.Lined {
		out.cartAnswer = cartAnswer{Currency: res.Currency, Lines: res.Lines, ShippingDiscountCents: &res.ShippingDiscountCents}
	}
	web.Respond(c, http.StatusOK, web.Replayed(res.Duplicate, "redeemed"), out)
}
