package handlers

import (
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/couponsvc/couponsvc/handlers/api"
	"github.com/couponsvc/couponsvc/handlers/pages"
	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"

	"github.com/gin-gonic/gin"
)

// Options wire optional parts into the router.
type Options struct {
	Logger *slog.Logger
	// SessionPrincipal returns the logged-in user of a page session, or nil;
	// by default the pages' own session.
	SessionPrincipal func(*gin.Context) *models.Principal
	// Pages configures the server-rendered pages.
	Pages PageOptions
	// Limits are the abuse and resource limits (web/limits.go).
	Limits Limits
	// TrustedProxies lists the reverse proxies (addresses or CIDRs) whose
	// X-Forwarded-For names the client; none by default.
	TrustedProxies []string
	// Middleware runs on every request after its observation, before the
	// route's own chain (the handler tests record the answers with it).
	Middleware []gin.HandlerFunc
}

// PageOptions configure the server-rendered pages.
type PageOptions = pages.Options

// Limits bound what clients may ask of one instance.
type Limits = web.Limits

// DefaultRequestTimeout bounds a request when Limits.RequestTimeout is zero.
const DefaultRequestTimeout = web.DefaultRequestTimeout

// NewRouter returns the HTTP handler of couponsvc: the JSON API under
// /api/v1, the health endpoints and the pages, from the route tables of
// api/routes.go and pages/routes.go.
func NewRouter(svc *services.App, opts Options) *gin.Engine {
	return newRouter(svc, opts)
}

// newRouter is NewRouter with extra API rows (a test adds one).
func newRouter(svc *services.App, opts Options, extra ...web.Route) *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	// The shopper's checkout page counts its checks against the API's
	// validate budgets (docs/checkout.md, "Validate").
	opts.Pages.ValidatesPerCaller, opts.Pages.ValidatesPerUser = opts.Limits.ValidatesPerCaller, opts.Limits.ValidatesPerUser
	p, err := pages.New(svc, opts.Logger, opts.Pages)
	if err != nil {
		// The templates are embedded: a parse error is a bug caught by any test.
		panic(fmt.Sprintf("couponsvc: pages: %v", err))
	}
	// The API accepts the page session (with its CSRF token on state-changing
	// requests).
	if opts.SessionPrincipal == nil {
		opts.SessionPrincipal = p.SessionPrincipal
	}
	a := api.New(svc, opts.Logger, opts.Limits, opts.SessionPrincipal)

	r := gin.New()
	r.HandleMethodNotAllowed = true
	// Paths are matched escaped and their parameters unescaped: an escaped
	// "/" in an order id (a%2Fb) reaches its route and is refused there by
	// name (400 order_id), instead of not routing at all.
	r.UseRawPath = true
	r.ContextWithFallback = true
	web.TrustProxies(r, opts.TrustedProxies, opts.Logger)
	apiRows := append(append(a.Routes(), openAPIRoute(nil)), extra...)
	pageRows := p.Routes()
	r.Use(web.LimitRequest(opts.Limits.RequestTimeout, append(slices.Clone(apiRows), pageRows...)...))
	r.Use(web.Observe(svc, opts.Logger), recoverPanic)
	r.Use(opts.Middleware...)

	doc := openAPIRoute(sync.OnceValue(func() []byte { return web.OpenAPIJSON(apiRows, a.DocumentBounds()) }))
	for _, rt := range apiRows {
		if rt.Path == doc.Path {
			rt = doc
		}
		r.Handle(rt.Method, rt.Path, append(a.Chain(rt), rt.Handler)...)
	}
	for _, rt := range pageRows {
		r.Handle(rt.Method, rt.Path, append(p.Chain(rt), rt.Handler)...)
	}

	// Unknown paths: JSON under /api, a page elsewhere.
	r.NoRoute(func(c *gin.Context) {
		if strings.HasPrefix(c.Request.URL.Path, "/api/") {
			web.RespondError(c, models.Errorf(models.CodeNotFound, "no such endpoint"))
			return
		}
		p.NotFound(c)
	})
	r.NoMethod(func(c *gin.Context) {
		web.RespondError(c, web.WithStatus(http.StatusMethodNotAllowed,
			models.Errorf(models.CodeInvalidRequest, "method not allowed on this endpoint")))
	})
	return r
}

// recoverPanic turns a panic into a logged 500 with the usual JSON body.
func recoverPanic(c *gin.Context) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			web.RespondError(c, fmt.Errorf("panic: %v", v))
		}
	}()
	c.Next()
}
