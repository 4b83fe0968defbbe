// Package api is couponsvc's JSON API under /api/v1 and the operational
// endpoints (health, readiness, metrics). Its route table is routes.go; each
// file holds the handlers of one resource.
package api

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/core"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Server holds what the API's handlers need.
type Server struct {
	// The aggregates the API calls, each through the methods it uses
	// (services.go).
	core       Core
	events     Events
	claimer    Claims
	codes      Codes
	checkout   Checkout
	reconciler Reconciler
	reports    Reports
	admin      Admin
	log        *slog.Logger
	claims     *claimGuard
	// badTokens counts failed token look-ups per address; nil when off.
	badTokens *core.BadTokenLimiter
	// validates counts validated codes per caller and per user; nil when
	// both limits are off.
	validates *core.ValidateLimiter
	// sessionPrincipal returns the logged-in user of a page session, or nil.
	sessionPrincipal func(*gin.Context) *models.Principal
	metrics          http.Handler
}

// New returns the API of svc. sessionPrincipal, when not nil, lets the API
// accept the session of a logged-in user of the pages.
func New(svc *services.App, log *slog.Logger, limits web.Limits, sessionPrincipal func(*gin.Context) *models.Principal) *Server {
	s := &Server{core: svc.Core, events: svc.Events, claimer: svc.Claims, codes: svc.Codes, checkout: svc.Checkout,
		reconciler: svc.Reconciler, reports: svc.Reports, admin: svc.Admin, log: log, sessionPrincipal: sessionPrincipal,
		claims: newClaimGuard(svc, limits), metrics: promhttp.HandlerFor(svc.Metrics().Registry, promhttp.HandlerOpts{})}
	if limits.BadTokensPerAddr > 0 {
		s.badTokens = svc.NewBadTokenLimiter(limits.BadTokensPerAddr)
	}
	if limits.ValidatesPerCaller > 0 || limits.ValidatesPerUser > 0 {
		s.validates = svc.NewValidateLimiter(core.ValidateLimits{PerCaller: limits.ValidatesPerCaller, PerUser: limits.ValidatesPerUser})
	}
	return s
}

// Chain returns the middleware of an API row, before its handler: the
// credentials under /api/v1, the row's guard, its role check, then what
// makes its handler answer the row's Answer type (web.ExpectAnswer), the
// refusal of empty parameters (web.RefuseEmptyParams).
func (s *Server) Chain(rt web.Route) []gin.HandlerFunc {
	var chain []gin.HandlerFunc
	if strings.HasPrefix(rt.Path, web.APIPrefix) {
		chain = append(chain, s.authenticate)
	}
	if rt.Guard != nil {
		chain = append(chain, rt.Guard)
	}
	if rt.Roles != nil {
		chain = append(chain, requireRole(rt.Roles...))
	}
	if expect := web.ExpectAnswer(rt); expect != nil {
		chain = append(chain, expect)
	}
	if empty := web.RefuseEmptyParams(rt); empty != nil {
		chain = append(chain, empty)
	}
	if rt.Idempotent() {
		chain = append(chain, web.Idempotency(s.core))
	}
	return chain
}

// admitClaim is the claim's admission control (claimGuard.admit).
func (s *Server) admitClaim(c *gin.Context) { s.claims.admit(c) }

func (s *Server) healthz(c *gin.Context) {
	web.Write(c, http.StatusOK, "ok", web.NoPayload{})
}

func (s *Server) readyz(c *gin.Context) {
	if err := s.core.Ready(c.Request.Context()); err != nil {
		web.RespondError(c, err)
		return
	}
	web.Respond(c, http.StatusOK, "ok", web.NoPayload{})
}

// serveMetrics serves the Prometheus text format.
func (s *Server) serveMetrics(c *gin.Context) { s.metrics.ServeHTTP(c.Writer, c.Request) }
