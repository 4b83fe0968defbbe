package pages

import (
	"net/http"

	"github.com/couponsvc/couponsvc/handlers/web"

	"github.com/gin-gonic/gin"
)

type logoutPage struct{ basePage }

// showLogout asks to confirm: logging out is a POST, so that another site
// cannot log a user out with a link.
func (p *Pages) showLogout(c *gin.Context) {
	if web.Principal(c) == nil {
		redirect(c, "/login")
		return
	}
	p.render(c, http.StatusOK, "logout", &logoutPage{basePage{Title: "Log out"}})
}

// logout ends the session on the server (a copy of the cookie stops working
// too) and removes the cookies.
func (p *Pages) logout(c *gin.Context) {
	handleForm(p, c, formPost[noInput]{read: readNothing,
		act: func(noInput) (outcome, error) {
			sess := p.session(c)
			if sid, _ := sess.Values[sidKey].(string); sid != "" {
				if err := p.admin.Logout(c.Request.Context(), sid); err != nil {
					return outcome{}, err
				}
			}
			sess.Values = map[any]any{}
			sess.Options.MaxAge = -1
			p.saveSession(c, sess)
			p.dropCSRFCookie(c)
			return outcome{to: "/login?bye=1"}, nil
		},
	})
}

// dropCSRFCookie removes the CSRF cookie at login and logout, so that each
// session gets a token of its own on its next page.
func (p *Pages) dropCSRFCookie(c *gin.Context) {
	http.SetCookie(c.Writer, &http.Cookie{Name: csrfCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: isTLS(c.Request), SameSite: http.SameSiteLaxMode})
}
