package handlers

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"couponsvc/models"
	"couponsvc/services"

	"github.com/gin-gonic/gin"
)

// Limits bound what clients may ask of one instance. The zero value
// turns the claim limits off and keeps DefaultRequestTimeout; cmd/couponsvc
// sets the production defaults.
type Limits struct {
	// ClaimsPerUser bounds the claims of one user_id a minute, whoever sends
	// them (0: off).
	ClaimsPerUser int
	// ClaimsPerAddr bounds the claims a minute from one client address
	// (IPv4 address or IPv6 /64) of anonymous and session requests; requests
	// with an API token are not counted, since the shop's backend sends the
	// claims of all its shoppers from one address (0: off).
	ClaimsPerAddr int
	// BadTokensPerAddr bounds the failed bearer-token look-ups a minute from
	// one client address; over it, every bearer request from the address is
	// answered 429 until the next look-up would be allowed (0: off).
	BadTokensPerAddr int
	// MaxInflightClaims bounds the claims this instance works on at once;
	// beyond it a claim is answered 503 at once rather than queued (0: no
	// bound).
	MaxInflightClaims int
	// RequestTimeout bounds the work of every request through its context
	// (0: DefaultRequestTimeout; negative: none).
	RequestTimeout time.Duration
}

// DefaultRequestTimeout bounds a request when Limits.RequestTimeout is zero.
// It stays above services.Config.DBTimeout, so that a claim's own timeout
// fires first and settles the claim.
const DefaultRequestTimeout = 10 * time.Second

// maxRequestBytes bounds the body of every request, the pages' forms included.
// It is one byte above maxBodyBytes so that decodeJSON still tells an oversized
// JSON body by its length and names it.
const maxRequestBytes = maxBodyBytes + 1

// limitRequest bounds every request: its body is cut at maxRequestBytes and
// its context ends after timeout.
func limitRequest(timeout time.Duration) gin.HandlerFunc {
	if timeout == 0 {
		timeout = DefaultRequestTimeout
	}
	return func(c *gin.Context) {
		if c.Request.Body != nil && c.Request.Body != http.NoBody {
			c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, maxRequestBytes)
		}
		if timeout > 0 {
			ctx, cancel := context.WithTimeout(c.Request.Context(), timeout)
			defer cancel()
			c.Request = c.Request.WithContext(ctx)
		}
		c.Next()
	}
}

// trustProxies makes c.ClientIP() believe X-Forwarded-For only from the given
// proxies. Gin trusts every peer by default, which would let any client pick
// the address its claims are counted under.
func trustProxies(r *gin.Engine, proxies []string, log *slog.Logger) {
	if err := r.SetTrustedProxies(proxies); err != nil {
		log.Error("trusted proxies refused; trusting none", "err", err)
		_ = r.SetTrustedProxies(nil)
	}
}

// claimGuard applies the abuse limits of claims: the in-flight bound of this
// instance and the rate limits shared by all instances through Redis.
type claimGuard struct {
	limiter *services.RateLimiter // nil when both rate limits are off
	slots   chan struct{}         // nil when in-flight claims are not bounded
	metrics *services.Metrics
}

func newClaimGuard(svc *services.Service, l Limits) *claimGuard {
	g := &claimGuard{metrics: svc.Metrics()}
	if l.ClaimsPerUser > 0 || l.ClaimsPerAddr > 0 {
		g.limiter = svc.NewRateLimiter(services.ClaimLimits{PerUser: l.ClaimsPerUser, PerAddr: l.ClaimsPerAddr})
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
			respondError(c, &models.Error{Code: models.CodeUnavailable, RetryAfterSeconds: 1,
				Message: "this server has too many claims in progress; try again shortly"})
			return
		}
	}
	if g.limiter != nil && !viaToken(c) {
		if err := g.limiter.AllowAddr(c.Request.Context(), c.ClientIP()); err != nil {
			g.countRefusal(err, "rate_limited_addr")
			respondError(c, err)
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
	return c.GetHeader("Authorization") != "" && principal(c) != nil
}
