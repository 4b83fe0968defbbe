package pages

import (
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/admin"

	"github.com/gin-gonic/gin"
)

// loginPage is the data of login.html.
type loginPage struct {
	basePage
	Username string
	Next     string
	Error    string
	// Errors are the fields' own: each empty one is named.
	Errors formErrors
	// WrongPassword marks both fields invalid, described by Error.
	WrongPassword bool
	LoggedOut     bool
}

// showLogin shows the login form; a logged-in user goes to their home page.
func (p *Pages) showLogin(c *gin.Context) {
	next := safeNext(c.Query("next"))
	if pr := web.Principal(c); pr != nil {
		redirect(c, firstNonEmpty(next, homeFor(pr.Role)))
		return
	}
	p.render(c, http.StatusOK, "login", &loginPage{basePage: basePage{Title: "Log in", Nav: "login"},
		Next: next, LoggedOut: c.Query("bye") == "1"})
}

// login checks the password (within the login limits), starts a session in a
// fresh cookie, and sends the user on.
func (p *Pages) login(c *gin.Context) {
	username := strings.TrimSpace(c.PostForm("username"))
	next := safeNext(c.PostForm("next"))
	page := &loginPage{basePage: basePage{Title: "Log in", Nav: "login"}, Username: username, Next: next,
		Errors: formErrors{}}
	handleForm(p, c, formPost[noInput]{errs: page.Errors,
		read: func() noInput {
			if username == "" {
				page.Errors.add("username", "Enter your username.")
			}
			if c.PostForm("password") == "" {
				page.Errors.add("password", "Enter your password.")
			}
			return noInput{}
		},
		act: func(noInput) (outcome, error) {
			sid, u, err := p.admin.Login(c.Request.Context(), admin.LoginRequest{
				Username: username, Password: c.PostForm("password"), Addr: c.ClientIP(),
			})
			if err != nil {
				return outcome{}, err
			}
			// End the session this browser had, and start from a fresh cookie, so
			// that nothing set before the login carries over.
			sess := p.session(c)
			if old, _ := sess.Values[sidKey].(string); old != "" {
				_ = p.admin.Logout(c.Request.Context(), old)
			}
			sess.Values = map[any]any{sidKey: sid}
			p.saveSession(c, sess)
			p.dropCSRFCookie(c)
			return outcome{to: firstNonEmpty(next, homeFor(u.Role))}, nil
		},
		refused: func(_ noInput, err error) bool {
			var e *models.Error
			switch {
			case asError(err, &e) && e.Code == models.CodeUnauthorized:
				page.Error, page.WrongPassword = "Wrong username or password.", true
			case asError(err, &e) && e.Code == models.CodeRateLimited:
				c.Header("Retry-After", fmt.Sprint(e.RetryAfterSeconds))
				page.Error = "Too many login attempts. Please wait " + waitWords(e.RetryAfterSeconds) + " and try again."
			default:
				return false
			}
			return true
		},
		status: func(err error) int {
			if models.IsCode(err, models.CodeRateLimited) {
				return http.StatusTooManyRequests
			}
			return http.StatusUnauthorized
		},
		show: func(status int) { p.render(c, status, "login", page) },
	})
}

// maxNextLen bounds a "next" address; a longer one is not kept.
const maxNextLen = 500

// safeNext keeps a "next" address only when it is a clean absolute path on
// this site, and returns it rebuilt from its parsed path and query alone, so
// that the browser is sent exactly what was checked. Browsers drop tabs and
// newlines anywhere in an address, trim control characters and spaces at its
// ends and read a backslash as a slash: "/\t/evil.example" or "/\\evil.example"
// would take them to another host. So an address is refused, before and after
// percent-decoding, for any control character, space, invisible formatting
// character, backslash or invalid UTF-8, for a scheme or host, and for a path
// that starts with "//" or is not clean ("." or ".." segments, doubled
// slashes). A refused address means the default page.
func safeNext(next string) string {
	if next == "" || len(next) > maxNextLen || next[0] != '/' || !plainURLText(next) {
		return ""
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return ""
	}
	p := u.Path
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || !plainURLText(p) || !cleanPath(p) ||
		p == "/login" || strings.HasPrefix(p, "/login/") || p == "/logout" || strings.HasPrefix(p, "/logout/") {
		return ""
	}
	if q, err := url.PathUnescape(u.RawQuery); err != nil || !plainURLText(q) {
		return ""
	}
	return (&url.URL{Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery}).String()
}

// plainURLText reports whether s is valid UTF-8 with only visible characters:
// no control or formatting character, no space of any kind, no backslash.
func plainURLText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r == '\\' || unicode.IsSpace(r) || !unicode.IsGraphic(r) {
			return false
		}
	}
	return true
}

// cleanPath reports whether the absolute path p is as path.Clean leaves it
// (a trailing slash allowed), which is also what http.Redirect would send.
func cleanPath(p string) bool {
	c := path.Clean(p)
	return c == p || (strings.HasSuffix(p, "/") && c+"/" == p)
}

// waitWords says a wait in words: "a minute", "3 minutes", "20 seconds".
func waitWords(seconds int) string {
	switch {
	case seconds <= 1:
		return "a second"
	case seconds < 60:
		return fmt.Sprintf("%d seconds", seconds)
	case seconds < 120:
		return "a minute"
	}
	return fmt.Sprintf("%d minutes", (seconds+59)/60)
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
