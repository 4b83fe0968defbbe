package pages

import (
	"fmt"

	"couponsvc/handlers/web"
	"couponsvc/models"

	"github.com/gin-gonic/gin"
)

// revokeToken stops an API token from working, with an audit entry, and goes
// back to the token list.
func (p *Pages) revokeToken(c *gin.Context) {
	id, ok := p.pathID(c, "token")
	if !ok {
		return
	}
	tok, duplicate, err := p.admin.RevokeToken(c.Request.Context(), web.Principal(c).Name, id)
	if models.ErrorCode(err) == models.CodeNotFound {
		p.notFound(c, "token")
		return
	}
	if err != nil {
		p.fail(c, err)
		return
	}
	if duplicate {
		p.flash(c, true, fmt.Sprintf("The token %q was already revoked; nothing changed.", tok.Name))
	} else {
		p.flash(c, true, fmt.Sprintf("Revoked the token %q (%s): programs using it are refused from now on.", tok.Name, tok.Role))
	}
	redirect(c, "/admin/tokens")
}
