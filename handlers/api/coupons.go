package api

import (
	"net/http"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"

	"github.com/gin-gonic/gin"
)

type revokeRequest struct {
	ReturnStock  *bool   `json:"return_stock" doc:"give the stock back (default false)"`
	PublicReason *string `json:"public_reason" schema:"revoke_public_reason"`
	Reason       *string `json:"reason" binding:"required" schema:"reason" doc:"the admin's internal note, for the audit log, never shown to the shopper: 1-500 characters on one line, without control characters, characters that change the text direction or U+FFFD"`
}

// revokeCoupon takes a coupon away from its holder (admin), with the public
// reason the shopper is told and the admin's note in the audit log: 200 "ok";
// a coupon already revoked → 409 "revoked".
func (s *Server) revokeCoupon(c *gin.Context) {
	var req revokeRequest
	if !web.BindJSON(c, &req) {
		return
	}
	returnStock := req.ReturnStock != nil && *req.ReturnStock
	publicReason := models.RevokeOther
	if req.PublicReason != nil {
		publicReason = *req.PublicReason
	}
	res, err := s.admin.RevokeWith(c.Request.Context(), web.Principal(c).Name, c.Param("code"), returnStock, publicReason, *req.Reason)
	if err != nil {
		web.RespondError(c, err)
		return
	}
	web.Respond(c, http.StatusOK, "ok", revokeAnswer{Coupon: res.Coupon, StockReturned: res.StockReturned})
}

// getCoupon shows a coupon, with its effective status, and its template.
func (s *Server) getCoupon(c *gin.Context) {
	d, err := s.core.GetCoupon(c.Request.Context(), c.Param("code"))
	if err != nil {
		web.RespondError(c, err)
		return
	}
	web.Respond(c, http.StatusOK, "ok", couponAnswer{CouponDetail: *d})
}

// listUserCoupons lists a user's coupons with their effective status. A
// shopper sees only their own.
func (s *Server) listUserCoupons(c *gin.Context) {
	userID := c.Param("user_id")
	if p := web.Principal(c); p.Role == models.RoleShopper && p.UserID != userID {
		web.RespondError(c, &models.Error{Code: models.CodeUnauthorized, Forbidden: true, Message: "a shopper sees only their own coupons"})
		return
	}
	after, limit, ok := pageQuery(c)
	if !ok {
		return
	}
	out, err := s.core.ListUserCoupons(c.Request.Context(), userID)
	page, next := newestPageOf(out, func(x *models.CouponView) int64 { return x.ID }, after, limit)
	web.Answer(c, err, http.StatusOK, "ok", couponsAnswer{Coupons: page, Next: Next{next}})
}
