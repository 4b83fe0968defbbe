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
	// openAPI returns the document of the router's routes, made on first use.
	openAPI func() []byte
}

// NewRouter returns the HTTP handler of couponsvc: the JSON API under
// /api/v1, the health endpoints and the pages, from the tables of routes.go.
func NewRouter(svc *services.Service, opts Options) *gin.Engine {
	return newRouter(svc, opts, apiRoutes(), pageRoutes())
}

// newRouter is NewRouter with the given route tables.
func newRouter(svc *services.Service, opts Options, api []route, pageRows []pageRoute) *gin.Engine {
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
	s.claims = newClaimGuard(svc, opts.Limits)
	s.registerRoutes(r, s.setUpPages(), api, pageRows)
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
