package api

import (
	"net/http"

	"couponsvc/handlers/web"
	"couponsvc/services"

	"github.com/gin-gonic/gin"
)

type refundRequest struct {
	CouponCode *string `json:"coupon_code" binding:"required" schema:"code"`
	OrderID    *string `json:"order_id" binding:"required" schema:"order_id"`
}

// refundCoupon undoes a coupon's use by a cancelled order: 200 "refunded";
// again → 200 "duplicate".
func (s *Server) refundCoupon(c *gin.Context) {
	var req refundRequest
	if !web.BindJSON(c, &req) {
		return
	}
	res, err := s.svc.Refund(c.Request.Context(), services.RefundRequest{CouponCode: *req.CouponCode,
		OrderID: *req.OrderID, Cashier: web.Principal(c).Name})
	if err != nil {
		web.RespondError(c, err)
		return
	}
	web.Respond(c, http.StatusOK, web.Replayed(res.Duplicate, "refunded"), gin.H{"coupon": res.Coupon, "stock_returned": res.StockReturned})
}
