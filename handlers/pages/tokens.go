package pages

import (
	"net/http"

	"couponsvc/services/admin"

	"github.com/gin-gonic/gin"
)

// tokensPage is the data of tokens.html.
type tokensPage struct {
	basePage
	Tokens []admin.TokenView
}

// showTokens lists the API tokens, revoked ones included, with a revoke
// button for each live one.
func (p *Pages) showTokens(c *gin.Context) {
	tokens, err := p.admin.ListTokens(c.Request.Context())
	if err != nil {
		p.fail(c, err)
		return
	}
	p.render(c, http.StatusOK, "tokens", &tokensPage{basePage: basePage{Title: "API tokens", Nav: "tokens"}, Tokens: tokens})
}
