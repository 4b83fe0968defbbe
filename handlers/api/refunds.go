package api

import (
	"net/http"

	"couponsvc/handlers/web"
	"couponsvc/models"
	"couponsvc/services/checkout"

	"github.com/gin-gonic/gin"
)

type refundRequest struct {
	CouponCode          *string `json:"coupon_code" schema:"code" doc:"the coupon of a whole refund; optional for a partial return"`
	OrderID             *string `json:"order_id" binding:"required" schema:"order_id"`
	ReturnID            *string `json:"return_id" doc:"a partial return: the caller's id of this return (a replay by it answers duplicate)"`
	ReturnedAmountCents *int64  `json:"returned_amount_cents" doc:"a partial return: the cents of the order returned"`
}

// refundCoupon undoes a coupon's use by a cancelled order: 200 "refunded";
// again → 200 "duplicate".
func (s *Server) refundCoupon(c *gin.Context) {
	var req refundRequest
	if !web.BindJSON(c, &req) {
		return
	}
	sr := checkout.RefundRequest{OrderID: *req.OrderID, Cashier: web.Principal(c).Name}
	partial := req.ReturnID != nil || req.ReturnedAmountCents != nil
	switch {
	case partial && req.ReturnID == nil:
		web.RespondError(c, models.Invalid("return_id", "is required with returned_amount_cents"))
		return
	case partial && req.ReturnedAmountCents == nil:
		web.RespondError(c, models.Invalid("returned_amount_cents", "is required with return_id"))
		return
	case partial:
		sr.ReturnID, sr.ReturnedAmountCents = *req.ReturnID, *req.ReturnedAmountCents
		if sr.ReturnID == "" {
			// An empty id would not route to a partial return at all.
			web.RespondError(c, models.Invalid("return_id", "must be 1 to 64 characters"))
			return
		}
	case req.CouponCode == nil:
		web.RespondError(c, models.Invalid("coupon_code", "is required (or return_id and returned_amount_cents for a partial return)"))
		return
	default:
		sr.CouponCode = *req.CouponCode
	}
	res, err := s.checkout.Refund(c.Request.Context(), sr)
	if err != nil {
		web.RespondError(c, err)
		return
	}
	if r := res.Return; r != nil {
		web.Respond(c, http.StatusOK, web.Replayed(res.Duplicate, "refunded"), refundAnswer{Partial: true,
			KeptAmountCents: &r.KeptAmountCents, DiscountKeptCents: &r.DiscountKeptCents,
			ClawbackCents: &r.ClawbackCents, FullRefund: &r.FullRefund})
		return
	}
	web.Respond(c, http.StatusOK, web.Replayed(res.Duplicate, "refunded"), refundAnswer{Coupon: &res.Coupon, StockReturned: &res.StockReturned})
}
