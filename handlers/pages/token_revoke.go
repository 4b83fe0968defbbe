package pages

import (
	"fmt"

	"github.com/couponsvc/couponsvc/handlers/web"

	"github.com/gin-gonic/gin"
)

// revokeToken stops an API token from working, with an audit entry, and goes
// back to the token list.
func (p *Pages) revokeToken(c *gin.Context) {
	id, ok := p.pathID(c, "token")
	if !ok {
		return
	}
	handleForm(p, c, formPost[noInput]{read: readNothing,
		act: func(noInput) (outcome, error) {
			tok, duplicate, err := p.admin.RevokeToken(c.Request.Context(), web.Principal(c).Name, id)
			if err != nil {
				return outcome{}, err
			}
			if duplicate {
				return done(fmt.Sprintf("The token %q was already revoked; nothing changed.", tok.Name), "/admin/tokens"), nil
			}
			return done(fmt.Sprintf("Revoked the token %q (%s): programs using it are refused from now on.", tok.Name, tok.Role),
				"/admin/tokens"), nil
		},
		refused: notFoundOnly,
		show:    func(int) { p.notFound(c, "token") },
	})
}
