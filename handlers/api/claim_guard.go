package api

import (
	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/core"

	"github.com/gin-gonic/gin"
)

// claimGuard applies the abuse limits of claims: the in-flight bound of this
// instance and the rate limits shared by all instances through Redis.
type claimGuard struct {
	limiter *core.RateLimiter // nil when both rate limits are off
	slots   chan struct{}     // nil when in-flight claims are not bounded
	metrics *core.Metrics
}

func newClaimGuard(svc *services.App, l web.Limits) *claimGuard {
	g := &claimGuard{metrics: svc.Metrics()}
	if l.ClaimsPerUser > 0 || l.ClaimsPerAddr > 0 {
		g.limiter = svc.NewRateLimiter(core.ClaimLimits{PerUser: l.ClaimsPerUser, PerAddr: l.ClaimsPerAddr})
	}
	if l.MaxInflightClaims > 0 {
		g.slots = make(chan struct{}, l.MaxInflightClaims)
	}
	return g
}

// admit lets a claim in. It takes one of the instance's in-flight slots for
// the rest of the request (503 with Retry-After at once when none is free)
// and, unless the request carries an API token, one claim from the client
// address's budget. It runs before the role check so that anonymous floods
// are counted too.
func (g *claimGuard) admit(c *gin.Context) {
	if g.slots != nil {
		select {
		case g.slots <- struct{}{}:
			defer func() { <-g.slots }()
		default:
			g.metrics.Refused.WithLabelValues("shed").Inc()
			web.RespondError(c, &models.Error{Code: models.CodeUnavailable, RetryAfterSeconds: 1,
				Message: "this server has too many claims in progress; try again shortly"})
			return
		}
	}
	if g.limiter != nil && !viaToken(c) {
		if err := g.limiter.AllowAddr(c.Request.Context(), c.ClientIP()); err != nil {
			g.countRefusal(err, "rate_limited_addr")
			web.RespondError(c, err)
			return
		}
	}
	c.Next()
}

// allowUser takes one claim from the budget of userID, the user the claim is
// for; it returns the refusal when the budget is spent or Redis cannot be
// asked, and leaves the answer to the caller (a replay is still answered).
// claimCoupon calls it once the body is read and the role checked, so that
// only a request the handler takes is counted; a user id the service will
// refuse is not counted either.
func (g *claimGuard) allowUser(c *gin.Context, userID string) error {
	if g.limiter == nil || g.limiter.Limits().PerUser <= 0 || models.ValidateUserID("user_id", userID) != nil {
		return nil
	}
	return g.limiter.AllowUser(c.Request.Context(), userID)
}

// countRefusal counts a claim refused by a rate limit (not a fault of Redis).
func (g *claimGuard) countRefusal(err error, reason string) {
	if models.IsCode(err, models.CodeRateLimited) {
		g.metrics.Refused.WithLabelValues(reason).Inc()
	}
}

// viaToken reports whether the request was authenticated with an API token
// (authenticate has refused a bad one already).
func viaToken(c *gin.Context) bool {
	return c.GetHeader("Authorization") != "" && web.Principal(c) != nil
}
