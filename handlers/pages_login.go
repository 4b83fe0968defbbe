package handlers

import (
	"fmt"
	"net/http"
	"strings"

	"couponsvc/models"
	"couponsvc/services"

	"github.com/gin-gonic/gin"
)

// loginPage is the data of login.html.
type loginPage struct {
	basePage
	Username  string
	Next      string
	Error     string
	LoggedOut bool
}

// showLogin shows the login form; a logged-in user goes to their home page.
func (p *pages) showLogin(c *gin.Context) {
	next := safeNext(c.Query("next"))
	if pr := principal(c); pr != nil {
		redirect(c, firstNonEmpty(next, homeFor(pr.Role)))
		return
	}
	p.render(c, http.StatusOK, "login", &loginPage{basePage: basePage{Title: "Log in", Nav: "login"},
		Next: next, LoggedOut: c.Query("bye") == "1"})
}

// login checks the password (within the login limits), starts a session in a
// fresh cookie, and sends the user on.
func (p *pages) login(c *gin.Context) {
	username := strings.TrimSpace(c.PostForm("username"))
	next := safeNext(c.PostForm("next"))
	page := &loginPage{basePage: basePage{Title: "Log in", Nav: "login"}, Username: username, Next: next}
	if username == "" || c.PostForm("password") == "" {
		page.Error = "Enter your username and password."
		p.render(c, http.StatusBadRequest, "login", page)
		return
	}
	sid, u, err := p.svc.Login(c.Request.Context(), services.LoginRequest{
		Username: username, Password: c.PostForm("password"), Addr: c.ClientIP(),
	})
	var e *models.Error
	switch {
	case err == nil:
	case asError(err, &e) && e.Code == models.CodeUnauthorized:
		page.Error = "Wrong username or password."
		p.render(c, http.StatusUnauthorized, "login", page)
		return
	case asError(err, &e) && e.Code == models.CodeRateLimited:
		c.Header("Retry-After", fmt.Sprint(e.RetryAfterSeconds))
		page.Error = "Too many login attempts. Please wait " + waitWords(e.RetryAfterSeconds) + " and try again."
		p.render(c, http.StatusTooManyRequests, "login", page)
		return
	default:
		p.fail(c, err)
		return
	}
	// End the session this browser had, and start from a fresh cookie, so
	// that nothing set before the login carries over.
	sess := p.session(c)
	if old, _ := sess.Values[sidKey].(string); old != "" {
		_ = p.svc.Logout(c.Request.Context(), old)
	}
	sess.Values = map[any]any{sidKey: sid}
	p.saveSession(c, sess)
	p.dropCSRFCookie(c)
	redirect(c, firstNonEmpty(next, homeFor(u.Role)))
}

// logoutPage is the data of logout.html.
type logoutPage struct{ basePage }

// showLogout asks to confirm: logging out is a POST, so that another site
// cannot log a user out with a link.
func (p *pages) showLogout(c *gin.Context) {
	if principal(c) == nil {
		redirect(c, "/login")
		return
	}
	p.render(c, http.StatusOK, "logout", &logoutPage{basePage{Title: "Log out"}})
}

// logout ends the session on the server (a copy of the cookie stops working
// too) and removes the cookies.
func (p *pages) logout(c *gin.Context) {
	sess := p.session(c)
	if sid, _ := sess.Values[sidKey].(string); sid != "" {
		if err := p.svc.Logout(c.Request.Context(), sid); err != nil {
			p.fail(c, err)
			return
		}
	}
	sess.Values = map[any]any{}
	sess.Options.MaxAge = -1
	p.saveSession(c, sess)
	p.dropCSRFCookie(c)
	redirect(c, "/login?bye=1")
}

// dropCSRFCookie removes the CSRF cookie at login and logout, so that each
// session gets a token of its own on its next page.
func (p *pages) dropCSRFCookie(c *gin.Context) {
	http.SetCookie(c.Writer, &http.Cookie{Name: csrfCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: isTLS(c.Request), SameSite: http.SameSiteLaxMode})
}

// safeNext keeps a "next" address only when it is a path on this site.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") ||
		strings.ContainsAny(next, "\r\n\\") || strings.HasPrefix(next, "/login") || strings.HasPrefix(next, "/logout") ||
		len(next) > 500 {
		return ""
	}
	return next
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
