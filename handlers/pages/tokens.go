package pages

import (
	"net/http"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/admin"

	"github.com/gin-gonic/gin"
)

// tokenForm is the create form of an API token, as typed.
type tokenForm struct {
	Name, Role string
	// Token names this filling of the form (createOnce).
	Token  string
	Errors formErrors
}

// tokensPage is the data of tokens.html. Created is the token a create
// went to (the list's "made" parameter); Secret is its secret, set on the
// first showing only: it is never shown again.
type tokensPage struct {
	basePage
	Tokens  []admin.TokenView
	Form    tokenForm
	Roles   []tokenRole
	Created *admin.TokenView
	Secret  string
}

// tokenRole is a role a token may have, with what it lets a program do.
type tokenRole struct{ Value, Label string }

// tokenRoles are the roles a token may have, as the form offers them.
var tokenRoles = []tokenRole{
	{models.RoleApp, "The shop's backend: claims and checkouts for its users (app)"},
	{models.RoleCashier, "A till's program: checkouts (cashier)"},
	{models.RoleAdmin, "Everything, the console's work included (admin)"},
}

// showTokens lists the API tokens, revoked ones included, with a revoke
// button for each live one, and the form that makes one.
func (p *Pages) showTokens(c *gin.Context) {
	p.renderTokens(c, http.StatusOK, tokenForm{Role: models.RoleApp, Token: newFormToken(), Errors: formErrors{}})
}

// renderTokens shows the list with the form f; a token just made (the
// "made" parameter) is named at the top, with its secret the first time.
func (p *Pages) renderTokens(c *gin.Context, status int, f tokenForm) {
	tokens, err := p.admin.ListTokens(c.Request.Context())
	if err != nil {
		p.fail(c, err)
		return
	}
	page := &tokensPage{basePage: basePage{Title: "API tokens", Nav: "tokens"}, Tokens: tokens, Form: f, Roles: tokenRoles}
	if made := madeID(c); made > 0 {
		for i := range tokens {
			if tokens[i].ID == made {
				page.Created, page.Secret = &tokens[i], p.takeSecret(c, "token", made)
			}
		}
	}
	p.render(c, status, "tokens", page)
}
