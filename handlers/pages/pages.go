package pages

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/admin"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/templates"

	"github.com/gin-gonic/gin"
	"github.com/gorilla/csrf"
	"github.com/gorilla/sessions"
)

// Options configure the server-rendered pages.
type Options struct {
	// SessionKey signs and encrypts the session cookie and the CSRF cookie
	// (keys for each are derived from it). It should be 32 bytes or more of
	// randomness and the same on every instance. Empty means a random key for
	// this process: sessions then end when it restarts.
	SessionKey []byte
	// Currency is the ISO 4217 code amounts are shown in; "USD" when empty.
	Currency string
	// Location is the deployment's time zone: forms read times in it and
	// pages show them in it (docs/time.md). Nil takes the service's.
	Location *time.Location
	// Validates are the budgets of codes validated a minute
	// (docs/checkout.md, "Validate"): the shopper's checkout counts its
	// checks against the same ones as the API, the session's user as the
	// caller. Zero: not counted.
	ValidatesPerCaller, ValidatesPerUser int
}

// The Content-Security-Policy of every page: only the service's own assets, no
// inline script or style, never framed.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"

// Pages serves the HTML pages: the shop, the wallet, the cashier's
// checkout and the admin console, with login, sessions and CSRF. Its route
// table is routes.go; each page action has a file named after it.
type Pages struct {
	// The aggregates the pages call, each through the methods they use
	// (services.go); nil when New was given no services.
	core       Core
	events     Events
	claimer    Claims
	codes      Codes
	checkout   Checkout
	reconciler Reconciler
	reports    Reports
	admin      Admin
	once       OnceStore
	// validates counts the codes the checkout checks; nil when not limited.
	validates *core.ValidateLimiter
	log       *slog.Logger
	store     *sessions.CookieStore
	// csrfPlain and csrfTLS check CSRF tokens for requests over plain HTTP and
	// over TLS (whose CSRF cookie is Secure and whose Referer is checked).
	csrfPlain, csrfTLS http.Handler
	tmpl               map[string]*template.Template
	static             fs.FS
	assets             map[string]string // file name → URL with a content hash
	money              moneyFormat
	loc                *time.Location
	// orderKey signs the shop's order numbers (shop_order_id.go).
	orderKey []byte
}

// New makes the pages of svc.
func New(svc *services.App, log *slog.Logger, opts Options) (*Pages, error) {
	key := opts.SessionKey
	if len(key) == 0 {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
	}
	static, err := fs.Sub(templates.FS, "static")
	if err != nil {
		return nil, err
	}
	p := &Pages{log: log, static: static, money: newMoneyFormat(opts.Currency), loc: opts.Location}
	if svc != nil {
		p.core, p.events, p.claimer, p.codes, p.checkout = svc.Core, svc.Events, svc.Claims, svc.Codes, svc.Checkout
		p.reconciler, p.reports, p.admin = svc.Reconciler, svc.Reports, svc.Admin
		p.once = svc.Core
		if opts.ValidatesPerCaller > 0 || opts.ValidatesPerUser > 0 {
			p.validates = svc.NewValidateLimiter(core.ValidateLimits{PerCaller: opts.ValidatesPerCaller, PerUser: opts.ValidatesPerUser})
		}
	}
	if p.loc == nil {
		p.loc = time.UTC
		if svc != nil {
			p.loc = svc.Location()
		}
	}
	p.store = sessions.NewCookieStore(deriveKey(key, "session-auth"), deriveKey(key, "session-encrypt"))
	p.store.MaxAge(int(admin.SessionTTL.Seconds()))
	p.csrfPlain = p.newCSRF(deriveKey(key, "csrf"), false)
	p.csrfTLS = p.newCSRF(deriveKey(key, "csrf"), true)
	p.orderKey = deriveKey(key, "shop-order")
	if p.assets, err = assetURLs(static); err != nil {
		return nil, err
	}
	if p.tmpl, err = p.parseTemplates(); err != nil {
		return nil, err
	}
	return p, nil
}

// Chain returns the middleware of a page row, before its handler: the
// security headers, the CSRF check and the session (not for a static asset),
// then the role check.
func (p *Pages) Chain(rt web.Route) []gin.HandlerFunc {
	chain := []gin.HandlerFunc{p.securityHeaders}
	if !rt.Asset {
		chain = append(chain, p.checkCSRF, p.loadSession)
	}
	if rt.Roles != nil {
		chain = append(chain, p.requireRole(rt.Roles...))
	}
	return chain
}

// NotFound answers a path no route has with the page saying so. The page
// has the layout of every other: a logged-in user is shown as logged in, with
// the navigation of their role and a working log-out button, so the session
// and (for a GET, which it never refuses) the CSRF token are read as a page
// route's chain does.
func (p *Pages) NotFound(c *gin.Context) {
	p.securityHeaders(c)
	if m := c.Request.Method; (m == http.MethodGet || m == http.MethodHead) && !p.runCSRF(c) {
		c.Abort()
		return
	}
	if p.loadSession(c); c.IsAborted() {
		return
	}
	p.renderError(c, http.StatusNotFound, "Page not found", "There is no page at this address.")
}

// SessionPrincipal lets the API accept the page session (see sessionPrincipal).
func (p *Pages) SessionPrincipal(c *gin.Context) *models.Principal { return p.sessionPrincipal(c) }

// assetURLs gives each static file a URL carrying a hash of its content, so
// that browsers may cache it for ever and still get a changed file at once.
func assetURLs(static fs.FS) (map[string]string, error) {
	out := map[string]string{}
	err := fs.WalkDir(static, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(static, name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[name] = "/static/" + name + "?v=" + hex.EncodeToString(sum[:6])
		return nil
	})
	return out, err
}

// parseTemplates parses each page once, with the layout and the partials.
func (p *Pages) parseTemplates() (map[string]*template.Template, error) {
	names, err := fs.Glob(templates.FS, "*.html")
	if err != nil {
		return nil, err
	}
	out := map[string]*template.Template{}
	for _, name := range names {
		if name == "layout.html" || name == "partials.html" {
			continue
		}
		t, err := template.New(name).Funcs(p.funcs()).ParseFS(templates.FS, "layout.html", "partials.html", name)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", name, err)
		}
		out[strings.TrimSuffix(name, ".html")] = t
	}
	return out, nil
}

// serveStatic serves an embedded asset; with the hash of its URL it may be
// cached for a year.
func (p *Pages) serveStatic(c *gin.Context) {
	name := strings.TrimPrefix(path.Clean(c.Param("file")), "/")
	b, err := fs.ReadFile(p.static, name)
	if err != nil {
		c.Status(http.StatusNotFound)
		return
	}
	if c.Query("v") != "" && p.assets[name] == c.Request.URL.Path+"?v="+c.Query("v") {
		c.Header("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		c.Header("Cache-Control", "no-cache")
	}
	ctype := "application/octet-stream"
	switch path.Ext(name) {
	case ".css":
		ctype = "text/css; charset=utf-8"
	case ".js":
		ctype = "text/javascript; charset=utf-8"
	case ".svg":
		ctype = "image/svg+xml"
	case ".png":
		ctype = "image/png"
	}
	c.Data(http.StatusOK, ctype, b)
}

// securityHeaders sets the headers every page and asset carries.
func (p *Pages) securityHeaders(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Permissions-Policy", "camera=(self), microphone=(), geolocation=(), payment=()")
	if isTLS(c.Request) {
		h.Set("Strict-Transport-Security", "max-age=31536000")
	}
}

// isTLS reports whether the browser reached the service over TLS, directly or
// through a proxy that says so. Believing a forged X-Forwarded-Proto only makes
// the cookies Secure and the CSRF check stricter.
func isTLS(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// basePage holds what the layout shows on every page.
type basePage struct {
	Title     string
	Nav       string // which navigation entry is current
	User      *models.Principal
	CSRFToken string
	FlashOK   []string
	FlashErr  []string
	Assets    map[string]string
	// Poll asks the page's script to keep the stock figures current.
	Poll string
	// AlreadyCreated are the addresses of what create forms sent twice
	// made the first time (form_once.go).
	AlreadyCreated []string
	// Kept is a form's input kept across a login, for the script to fill
	// the form with (form_kept.go).
	Kept *core.KeptForm
}

func (b *basePage) base() *basePage { return b }

// pageData is a page's data: a struct that embeds basePage.
type pageData interface{ base() *basePage }

// render fills the common fields and writes the page. Flash messages are
// taken out of the session as they are shown.
func (p *Pages) render(c *gin.Context, status int, name string, data pageData) {
	b := data.base()
	b.User = web.Principal(c)
	b.CSRFToken = csrf.Token(c.Request)
	b.Assets = p.assets
	kept, err := p.keptForm(c)
	if err != nil {
		p.fail(c, err)
		return
	}
	b.Kept = kept
	if sess := p.session(c); sess != nil {
		for _, f := range sess.Flashes(flashOK) {
			if s, ok := f.(string); ok {
				b.FlashOK = append(b.FlashOK, s)
			}
		}
		for _, f := range sess.Flashes(flashErr) {
			if s, ok := f.(string); ok {
				b.FlashErr = append(b.FlashErr, s)
			}
		}
		for _, f := range sess.Flashes(flashAlreadyCreated) {
			if s, ok := f.(string); ok && safeNext(s) != "" {
				b.AlreadyCreated = append(b.AlreadyCreated, s)
			}
		}
		// A secret kept for a page (secret_once.go) lives for the next page
		// shown, taken or not: it never waits in the cookie for later.
		dropped := len(sess.Flashes(flashSecret))
		if len(b.FlashOK)+len(b.FlashErr)+len(b.AlreadyCreated)+dropped > 0 {
			p.saveSession(c, sess)
		}
	}
	t, ok := p.tmpl[name]
	if !ok {
		p.fail(c, fmt.Errorf("no page template %q", name))
		return
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", data); err != nil {
		p.fail(c, fmt.Errorf("render %s: %w", name, err))
		return
	}
	c.Header("Cache-Control", "no-store")
	c.Data(status, "text/html; charset=utf-8", buf.Bytes())
}

// errorPage is the data of error.html.
type errorPage struct {
	basePage
	Status  int
	Message string
}

// renderError shows a page that explains what went wrong.
func (p *Pages) renderError(c *gin.Context, status int, title, message string) {
	p.render(c, status, "error", &errorPage{basePage: basePage{Title: title}, Status: status, Message: message})
	c.Abort()
}

// fail shows the page for an error of a service: its message for business
// outcomes and faults (503), a generic one for bugs, which are logged.
func (p *Pages) fail(c *gin.Context, err error) {
	status, _ := web.StatusOf(err)
	var e *models.Error
	switch {
	case status >= 500 && status != http.StatusServiceUnavailable:
		p.log.Error("page failed", "path", c.FullPath(), "err", err)
		c.Header("Cache-Control", "no-store")
		c.Data(http.StatusInternalServerError, "text/html; charset=utf-8",
			[]byte("<!doctype html><title>Error</title><p>Something went wrong on our side. Please try again."))
		c.Abort()
		return
	case status == http.StatusServiceUnavailable:
		p.log.Warn("page unavailable", "path", c.FullPath(), "err", err)
		c.Header("Retry-After", "5")
		p.renderError(c, status, "Temporarily unavailable", "The service cannot reach its database or Redis right now. Please try again in a moment.")
		return
	case asError(err, &e) && e.Code == models.CodeNotFound:
		p.renderError(c, http.StatusNotFound, "Not found", sentence(e.Message))
		return
	}
	msg := "That did not work."
	if asError(err, &e) {
		msg = sentence(e.Message)
	}
	p.renderError(c, status, "That did not work", msg)
}

// sentence starts a message with a capital and ends it with a full stop.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "!") && !strings.HasSuffix(s, "?") {
		s += "."
	}
	return s
}

// redirect answers a POST with 303 See Other (PRG).
func redirect(c *gin.Context, to string) {
	c.Redirect(http.StatusSeeOther, to)
	c.Abort()
}

// now is the service's clock, for effective statuses on the pages.
func (p *Pages) now() time.Time { return p.core.Now() }
