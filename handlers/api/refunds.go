package api

import (
	"net/http"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"

	"github.com/gin-gonic/gin"
)

type refundRequest struct {
	CouponCode          *string             `json:"coupon_code" schema:"code" doc:"the coupon of a whole refund; optional for a partial return"`
	OrderID             *string             `json:"order_id" binding:"required" schema:"order_id"`
	ReturnID            *string             `json:"return_id" schema:"order_id" doc:"a partial return: the caller's id of this return (a replay by it answers duplicate)"`
	ReturnedAmountCents *int64              `json:"returned_amount_cents" schema:"order_amount" doc:"a partial return of an order redeemed for an amount: the cents of the order returned"`
	Lines               []returnLineRequest `json:"lines" schema:"cart_lines" doc:"a return by line of an order redeemed with a cart: the units returned (1 to 500 lines, each named once)"`
}

// returnLineRequest is one line of a return by line.
type returnLineRequest struct {
	LineID   *string `json:"line_id" binding:"required" schema:"cart_id" doc:"the order's line"`
	Quantity *int64  `json:"quantity" binding:"required" schema:"line_quantity" doc:"units of it returned"`
}

// returnLines reads the lines of a return by line; a field left out is
// answered by the service as empty (line_id) or out of range (quantity).
func returnLines(in []returnLineRequest) []checkout.ReturnLine {
	out := make([]checkout.ReturnLine, len(in))
	for i, l := range in {
		if l.LineID != nil {
			out[i].LineID = *l.LineID
		}
		if l.Quantity != nil {
			out[i].Quantity = *l.Quantity
		}
	}
	return out
}

// refundCoupon undoes a coupon's use by a cancelled order: 200 "refunded";
// again → 200 "duplicate".
func (s *Server) refundCoupon(c *gin.Context) {
	var req refundRequest
	if !web.BindJSON(c, &req) {
		return
	}
	sr := checkout.RefundRequest{OrderID: *req.OrderID, Cashier: web.Principal(c).Name}
	partial := req.ReturnID != nil || req.ReturnedAmountCents != nil || req.Lines != nil
	switch {
	case req.Lines != nil && req.ReturnedAmountCents != nil:
		web.RespondError(c, models.Invalid("returned_amount_cents", "a return names lines or an amount, not both"))
		return
	case req.Lines != nil && req.ReturnID == nil:
		web.RespondError(c, models.Invalid("return_id", "is required with lines"))
		return
	case req.Lines != nil:
		sr.ReturnID, sr.Lines = *req.ReturnID, returnLines(req.Lines)
		if sr.ReturnID == "" {
			web.RespondError(c, models.Invalid("return_id", "must be 1 to 64 characters"))
			return
		}
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
	if r := res.Return; r != nil && r.Lined {
		web.Respond(c, http.StatusOK, web.Replayed(res.Duplicate, "refunded"), refundAnswer{Partial: true, Currency: r.Currency,
			Lines: r.Lines, RefundCents: &r.RefundCents, DiscountReturnedCents: &r.DiscountReturnedCents,
			ShippingDiscountReturnedCents: &r.ShippingDiscountReturnedCents,
			KeptAmountCents:               &r.KeptAmountCents, DiscountKeptCents: &r.DiscountKeptCents,
			ClawbackCents: &r.ClawbackCents, FullRefund: &r.FullRefund})
		return
	}
	if r := res.Return; r != nil {
		web.Respond(c, http.StatusOK, web.Replayed(res.Duplicate, "refunded"), refundAnswer{Partial: true, Currency: r.Currency,
			KeptAmountCents: &r.KeptAmountCents, DiscountKeptCents: &r.DiscountKeptCents,
			DiscountReturnedCents: &r.ClawbackCents, ClawbackCents: &r.ClawbackCents, FullRefund: &r.FullRefund})
		return
	}
	web.Respond(c, http.StatusOK, web.Replayed(res.Duplicate, "refunded"), refundAnswer{Currency: res.Coupon.Currency,
		Coupon: &res.Coupon, StockReturned: &res.StockReturned})
}
