package handlers

import (
	"fmt"
	"log/slog"
	"net/http"

	"couponsvc/models"
	"couponsvc/services"

	"github.com/gin-gonic/gin"
)

// Options wire optional parts into the router.
type Options struct {
	Logger *slog.Logger
	// SessionPrincipal returns the logged-in user of a page session, or nil.
	SessionPrincipal func(*gin.Context) *models.Principal
	// Pages configures the server-rendered pages (pages.go).
	Pages PageOptions
	// Limits are the abuse and resource limits (limits.go).
	Limits Limits
	// TrustedProxies lists the reverse proxies (addresses or CIDRs) whose
	// X-Forwarded-For names the client; none by default.
	TrustedProxies []string
}

// Server holds what the handlers need.
type Server struct {
	svc    *services.Service
	opts   Options
	log    *slog.Logger
	claims *claimGuard
	// badTokens counts failed token look-ups per address; nil when off.
	badTokens *services.BadTokenLimiter
}

// NewRouter returns the HTTP handler of couponsvc: the JSON API under
// /api/v1, the health endpoints and, when wired, the pages.
func NewRouter(svc *services.Service, opts Options) *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Server{svc: svc, opts: opts, log: opts.Logger}
	if opts.Limits.BadTokensPerAddr > 0 {
		s.badTokens = svc.NewBadTokenLimiter(opts.Limits.BadTokensPerAddr)
	}
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.ContextWithFallback = true
	trustProxies(r, opts.TrustedProxies, opts.Logger)
	r.Use(limitRequest(opts.Limits.RequestTimeout))
	r.Use(s.observeRequest, s.recoverPanic)
	r.NoRoute(func(c *gin.Context) { respondError(c, models.Errorf(models.CodeNotFound, "no such endpoint")) })
	r.NoMethod(func(c *gin.Context) {
		c.AbortWithStatusJSON(http.StatusMethodNotAllowed, gin.H{"code": models.CodeInvalidRequest,
			"result": models.CodeInvalidRequest.Word(), "error": "method not allowed on this endpoint"})
	})

	r.GET("/healthz", s.healthz)
	r.GET("/readyz", s.readyz)
	r.GET("/metrics", s.metricsHandler())
	r.GET("/api/openapi.json", serveOpenAPI)

	api := r.Group("/api/v1", s.authenticate)
	admin := requireRole(models.RoleAdmin)
	api.POST("/campaigns", admin, s.createCampaign)
	api.GET("/campaigns", admin, s.listCampaigns)
	api.GET("/campaigns/:id", admin, s.getCampaign)
	api.POST("/templates", admin, s.createTemplate)
	api.GET("/templates", s.listTemplates)
	api.GET("/templates/:id", s.getTemplate)
	api.PATCH("/templates/:id", admin, s.updateTemplate)
	api.POST("/templates/:id/stock", admin, s.addStock)
	s.claims = newClaimGuard(svc, opts.Limits)
	api.POST("/templates/:id/claim", s.claims.admit, requireRole(models.RoleApp, models.RoleShopper), s.claimCoupon)
	api.POST("/tokens", admin, s.createToken)
	api.POST("/users", admin, s.createUser)
	s.registerRedemptionRoutes(api)
	api.POST("/reconcile", admin, s.reconcileCounters)
	s.registerPages(r)
	return r
}

// recoverPanic turns a panic into a logged 500 with the usual JSON body.
func (s *Server) recoverPanic(c *gin.Context) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			respondError(c, fmt.Errorf("panic: %v", v))
		}
	}()
	c.Next()
}

func (s *Server) healthz(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"code": models.CodeOK, "result": "ok", "error": ""})
}

func (s *Server) readyz(c *gin.Context) {
	if err := s.svc.Ready(c.Request.Context()); err != nil {
		respondError(c, err)
		return
	}
	respond(c, http.StatusOK, "ok", nil)
}
