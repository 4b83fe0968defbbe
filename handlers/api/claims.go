package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/claims"

	"github.com/gin-gonic/gin"
)

type claimRequest struct {
	UserID *string `json:"user_id" schema:"user_id" doc:"the user to claim for: required with an app token; a shopper claims for themself"`
}

// claimCoupon claims one coupon of a template: for the user named in the body
// (app tokens) or for the logged-in shopper. The Idempotency-Key header makes
// a retry return the first answer.
func (s *Server) claimCoupon(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	p := web.Principal(c)
	var req claimRequest
	// A shopper's page may send no body: they claim as themself.
	if p.Role != models.RoleShopper || c.Request.ContentLength != 0 {
		if !web.BindJSON(c, &req) {
			return
		}
	}
	userID := p.UserID
	switch {
	case p.Role == models.RoleShopper:
		if req.UserID != nil && *req.UserID != p.UserID {
			web.RespondError(c, &models.Error{Code: models.CodeUnauthorized, Forbidden: true, Message: "a shopper claims only for themself"})
			return
		}
	case req.UserID == nil:
		web.RespondError(c, models.Invalid("user_id", "is required"))
		return
	default:
		userID = *req.UserID
	}
	creq := claims.ClaimRequest{TemplateID: id, UserID: userID, IdempotencyKey: c.GetHeader("Idempotency-Key"),
		Admit: func(context.Context) error { return s.claims.allowUser(c, userID) }}
	res, err := s.claimer.Claim(c.Request.Context(), creq)
	var refused *claims.AdmitError
	if errors.As(err, &refused) {
		// The limit counts new claims: a replay still gets the first answer.
		// Only a refused claim pays for the look-up.
		limited := refused.Err
		if !models.IsCode(limited, models.CodeRateLimited) {
			web.RespondError(c, limited)
			return
		}
		if res, err = s.claimer.ReplayClaim(c.Request.Context(), creq); err != nil {
			s.claims.countRefusal(limited, "rate_limited_user")
			web.RespondError(c, limited)
			return
		}
	}
	if err != nil {
		web.RespondError(c, err)
		return
	}
	status, result := http.StatusCreated, "claimed"
	if res.Duplicate {
		status, result = http.StatusOK, models.CodeDuplicate.Word()
	}
	web.Respond(c, status, result, claimAnswer{Coupon: res.Coupon.View(s.core.Now(), res.Currency), Remaining: res.Remaining})
}
