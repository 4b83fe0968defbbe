package api

import (
	"net/http"

	"couponsvc/handlers/web"
	"couponsvc/models"
	"couponsvc/services"

	"github.com/gin-gonic/gin"
)

type redeemRequest struct {
	CouponCode       *string `json:"coupon_code" binding:"required" schema:"code"`
	OrderID          *string `json:"order_id" binding:"required" schema:"order_id"`
	OrderAmountCents *int64  `json:"order_amount_cents" binding:"required" schema:"order_amount" doc:"the order's amount, before the discount"`
	UserID           *string `json:"user_id" schema:"user_id" doc:"the coupon must belong to this user (403 forbidden otherwise)"`
}

// redeemCoupon uses a coupon on an order at checkout: 200 "redeemed" with the
// discount and the amount to pay; the same coupon and order again → 200
// "duplicate" with the first answer.
func (s *Server) redeemCoupon(c *gin.Context) {
	var req redeemRequest
	if !web.BindJSON(c, &req) {
		return
	}
	if err := web.FirstErr(web.Required("coupon_code", req.CouponCode), web.Required("order_id", req.OrderID),
		web.Required("order_amount_cents", req.OrderAmountCents)); err != nil {
		web.RespondError(c, err)
		return
	}
	sr := services.RedeemRequest{CouponCode: *req.CouponCode, OrderID: *req.OrderID,
		OrderAmountCents: *req.OrderAmountCents, Cashier: web.Principal(c).Name}
	if req.UserID != nil {
		if *req.UserID == "" {
			// Given but empty is a mistake, not "no owner check".
			web.RespondError(c, models.Invalid("user_id", "must be 1 to 64 characters (or left out)"))
			return
		}
		sr.UserID = *req.UserID
	}
	res, err := s.svc.Redeem(c.Request.Context(), sr)
	if err != nil {
		web.RespondError(c, err)
		return
	}
	result := "redeemed"
	if res.Duplicate {
		result = models.CodeDuplicate.Word()
	}
	web.Respond(c, http.StatusOK, result, gin.H{"coupon": res.Coupon, "order_amount_cents": res.OrderAmountCents,
		"discount_cents": res.DiscountCents, "payable_cents": res.PayableCents})
}

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
	if err := web.FirstErr(web.Required("coupon_code", req.CouponCode), web.Required("order_id", req.OrderID)); err != nil {
		web.RespondError(c, err)
		return
	}
	res, err := s.svc.Refund(c.Request.Context(), services.RefundRequest{CouponCode: *req.CouponCode,
		OrderID: *req.OrderID, Cashier: web.Principal(c).Name})
	if err != nil {
		web.RespondError(c, err)
		return
	}
	result := "refunded"
	if res.Duplicate {
		result = models.CodeDuplicate.Word()
	}
	web.Respond(c, http.StatusOK, result, gin.H{"coupon": res.Coupon, "stock_returned": res.StockReturned})
}

type revokeRequest struct {
	ReturnStock *bool   `json:"return_stock" doc:"give the stock back (default false)"`
	Reason      *string `json:"reason" binding:"required" doc:"why, for the audit log: 1-500 characters on one line, without control characters or characters that change the text direction"`
}

// revokeCoupon takes a coupon away from its holder (admin), with the reason in
// the audit log: 200 "ok"; a coupon already revoked → 200 "duplicate".
func (s *Server) revokeCoupon(c *gin.Context) {
	var req revokeRequest
	if !web.BindJSON(c, &req) {
		return
	}
	if err := web.Required("reason", req.Reason); err != nil {
		web.RespondError(c, err)
		return
	}
	returnStock := req.ReturnStock != nil && *req.ReturnStock
	res, err := s.svc.Revoke(c.Request.Context(), web.Principal(c).Name, c.Param("code"), returnStock, *req.Reason)
	if err != nil {
		web.RespondError(c, err)
		return
	}
	result := "ok"
	if res.Duplicate {
		result = models.CodeDuplicate.Word()
	}
	web.Respond(c, http.StatusOK, result, gin.H{"coupon": res.Coupon, "stock_returned": res.StockReturned})
}

// getCoupon shows a coupon, with its effective status, and its template.
func (s *Server) getCoupon(c *gin.Context) {
	d, err := s.svc.GetCoupon(c.Request.Context(), c.Param("code"))
	if err != nil {
		web.RespondError(c, err)
		return
	}
	web.Respond(c, http.StatusOK, "ok", gin.H{"coupon": d.Coupon, "template": d.Template})
}

// listUserCoupons lists a user's coupons with their effective status. A
// shopper sees only their own.
func (s *Server) listUserCoupons(c *gin.Context) {
	userID := c.Param("user_id")
	if p := web.Principal(c); p.Role == models.RoleShopper && p.UserID != userID {
		web.RespondError(c, &models.Error{Code: models.CodeUnauthorized, Forbidden: true, Message: "a shopper sees only their own coupons"})
		return
	}
	out, err := s.svc.ListUserCoupons(c.Request.Context(), userID)
	if err != nil {
		web.RespondError(c, err)
		return
	}
	web.Respond(c, http.StatusOK, "ok", gin.H{"coupons": out})
}
