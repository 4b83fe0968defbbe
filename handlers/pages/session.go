package pages

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/admin"

	"github.com/gin-gonic/gin"
	"github.com/gorilla/csrf"
	"github.com/gorilla/sessions"
)

// Cookie and form names of the pages.
const (
	sessionCookie = web.SessionCookie
	csrfCookie    = "couponsvc_csrf"
	// csrfField is the hidden form field of the CSRF token; scripts send the
	// token in the X-CSRF-Token header instead.
	csrfField = "csrf_token"
	sidKey    = "sid"
	flashOK   = "_ok"
	flashErr  = "_err"
)

// Gin context keys of the pages.
const (
	csrfPassedKey = "couponsvc.csrf_passed"
	sessionKey    = "couponsvc.session"
)

// ginContextKey carries the *gin.Context through gorilla/csrf, which works on
// net/http handlers.
type ginContextKey struct{}

// deriveKey derives a key for one purpose from the configured secret.
func deriveKey(secret []byte, purpose string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("couponsvc/" + purpose))
	return m.Sum(nil)
}

// newCSRF builds the gorilla/csrf check. The handler it protects only records
// that the check passed; the gin chain continues in checkCSRF.
func (p *Pages) newCSRF(key []byte, secure bool) http.Handler {
	passed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := r.Context().Value(ginContextKey{}).(*gin.Context)
		c.Request = r // carries the masked token for csrf.Token
		c.Set(csrfPassedKey, true)
	})
	return csrf.Protect(key,
		csrf.CookieName(csrfCookie),
		csrf.FieldName(csrfField),
		csrf.Path("/"),
		csrf.HttpOnly(true),
		csrf.Secure(secure),
		csrf.SameSite(csrf.SameSiteLaxMode),
		csrf.MaxAge(int(admin.SessionTTL.Seconds())),
		csrf.ErrorHandler(http.HandlerFunc(p.csrfFailed)),
	)(passed)
}

// runCSRF runs the CSRF check on the request and reports whether it passed;
// when it did not, the refusal has been written.
func (p *Pages) runCSRF(c *gin.Context) bool {
	if bodyOverLimit(c.Request) {
		// Cut short, the form would lack its token and pass for an expired one.
		if strings.HasPrefix(c.Request.URL.Path, "/api/") {
			web.RespondError(c, web.ErrBodyTooLarge)
			return false
		}
		p.renderError(c, http.StatusRequestEntityTooLarge, "This form is too large",
			"A form may send at most 64 KiB, and this one sent more. Shorten the longest field, such as the description, and send it again.")
		return false
	}
	r := c.Request.WithContext(context.WithValue(c.Request.Context(), ginContextKey{}, c))
	h := p.csrfTLS
	if !isTLS(r) {
		// gorilla/csrf checks the Referer strictly unless told the request
		// came over plain HTTP; the Origin header is checked either way.
		r = csrf.PlaintextHTTPRequest(r)
		h = p.csrfPlain
	}
	h.ServeHTTP(c.Writer, r)
	return c.GetBool(csrfPassedKey)
}

// bodyOverLimit reports whether a state-changing request's body is over
// web.MaxBodyBytes. It reads a form (which the handlers read later from
// r.PostForm) and leaves other bodies to their handlers unless their length
// says so.
func bodyOverLimit(r *http.Request) bool {
	if slices.Contains([]string{http.MethodGet, http.MethodHead, http.MethodOptions}, r.Method) || r.Body == nil {
		return false
	}
	if r.ContentLength > web.MaxBodyBytes {
		return true
	}
	var err error
	switch mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt {
	case "application/x-www-form-urlencoded":
		err = r.ParseForm()
	case "multipart/form-data":
		err = r.ParseMultipartForm(web.MaxBodyBytes)
	}
	return web.BodyTooLarge(err)
}

// checkCSRF is the pages' middleware: every page gets a token, and every
// state-changing request must send it back (form field or header) with the
// cookie it belongs to.
func (p *Pages) checkCSRF(c *gin.Context) {
	if !p.runCSRF(c) {
		c.Abort()
	}
}

// csrfFailed refuses a request whose CSRF token is missing, does not match its
// cookie, or comes from another origin.
func (p *Pages) csrfFailed(w http.ResponseWriter, r *http.Request) {
	c := r.Context().Value(ginContextKey{}).(*gin.Context)
	p.log.Info("CSRF check failed", "path", r.URL.Path, "reason", csrf.FailureReason(r))
	if strings.HasPrefix(r.URL.Path, "/api/") {
		web.RespondError(c, &models.Error{Code: models.CodeUnauthorized, Forbidden: true,
			Message: "a request made with the page session must carry the page's X-CSRF-Token header; reload the page"})
		return
	}
	p.renderError(c, http.StatusForbidden, "This form has expired",
		"The form was not sent from this site's current page, or it is too old. Go back, reload the page and try again.")
}

// session returns the request's cookie session (a new one when there is none
// or it does not verify), with cookie options fit for the connection.
func (p *Pages) session(c *gin.Context) *sessions.Session {
	if v, ok := c.Get(sessionKey); ok {
		return v.(*sessions.Session)
	}
	sess, err := p.store.Get(c.Request, sessionCookie)
	if err != nil {
		// A cookie signed with another key, or tampered with: start afresh.
		sess, _ = p.store.New(c.Request, sessionCookie)
		sess.Values = map[any]any{}
	}
	sess.Options = &sessions.Options{
		Path:     "/",
		MaxAge:   int(admin.SessionTTL.Seconds()),
		HttpOnly: true,
		Secure:   isTLS(c.Request),
		SameSite: http.SameSiteLaxMode,
	}
	c.Set(sessionKey, sess)
	return sess
}

// saveSession writes the session cookie; a failure is logged (the page still
// shows, the flash or login just does not stick).
func (p *Pages) saveSession(c *gin.Context, sess *sessions.Session) {
	if err := sess.Save(c.Request, c.Writer); err != nil {
		p.log.Error("save the session cookie", "err", err)
	}
}

// flash keeps a message for the next page this browser shows (after a
// redirect).
func (p *Pages) flash(c *gin.Context, ok bool, msg string) {
	sess := p.session(c)
	key := flashErr
	if ok {
		key = flashOK
	}
	sess.AddFlash(msg, key)
	p.saveSession(c, sess)
}

// sessionUser returns the live session of the request's cookie, or nil.
func (p *Pages) sessionUser(c *gin.Context) (*admin.Session, error) {
	if _, err := c.Request.Cookie(sessionCookie); err != nil {
		return nil, nil // no cookie: skip decoding
	}
	sid, _ := p.session(c).Values[sidKey].(string)
	if sid == "" {
		return nil, nil
	}
	return p.admin.LookupSession(c.Request.Context(), sid)
}

// loadSession makes the logged-in user the request's principal.
func (p *Pages) loadSession(c *gin.Context) {
	u, err := p.sessionUser(c)
	if err != nil {
		p.fail(c, err)
		return
	}
	if u != nil {
		c.Set(web.PrincipalKey, u.Principal())
	}
}

// sessionPrincipal lets the API accept the page session (Options.
// SessionPrincipal). A state-changing request made with the session must carry
// the page's CSRF token in the X-CSRF-Token header; without it the request is
// refused (403) here. Bearer-token requests never come here.
func (p *Pages) sessionPrincipal(c *gin.Context) *models.Principal {
	u, err := p.sessionUser(c)
	if err != nil {
		web.RespondError(c, err)
		return nil
	}
	if u == nil {
		return nil
	}
	if !slices.Contains([]string{http.MethodGet, http.MethodHead, http.MethodOptions}, c.Request.Method) {
		if !p.runCSRF(c) {
			c.Abort()
			return nil
		}
	}
	return u.Principal()
}

// requireRole lets through only the given roles: a visitor who is not logged
// in is sent to the login page, a user with another role gets a 403 page.
func (p *Pages) requireRole(roles ...string) gin.HandlerFunc {
	return func(c *gin.Context) {
		pr := web.Principal(c)
		if pr == nil {
			if c.Request.Method == http.MethodGet {
				redirect(c, "/login?next="+url.QueryEscape(c.Request.URL.RequestURI()))
				return
			}
			// What the form held is kept for the login to bring back to it
			// (docs/pages.md, "Session ended").
			next, err := p.keepPosted(c)
			if err != nil {
				p.fail(c, err)
				return
			}
			p.flash(c, false, "Your session has ended. Please log in again.")
			if next != "" {
				redirect(c, "/login?next="+url.QueryEscape(next))
				return
			}
			redirect(c, "/login")
			return
		}
		if !slices.Contains(roles, pr.Role) {
			p.renderError(c, http.StatusForbidden, "Not for your account",
				"This page is for "+roleNames(roles)+" only, and you are logged in as “"+pr.Name+"”, a "+pr.Role+".")
			return
		}
		c.Next()
	}
}

// roleNames names roles in words: "cashiers", "admins".
func roleNames(roles []string) string {
	var out []string
	for _, r := range roles {
		out = append(out, r+"s")
	}
	return strings.Join(out, " and ")
}

// homeFor is where a user lands after login.
func homeFor(role string) string {
	switch role {
	case models.RoleAdmin:
		return "/admin"
	case models.RoleCashier:
		return "/pos"
	}
	return "/"
}

// asError is errors.As for the domain error.
func asError(err error, target **models.Error) bool { return errors.As(err, target) }
