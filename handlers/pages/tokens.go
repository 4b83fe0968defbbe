package pages

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/couponsvc/couponsvc/handlers/web"
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

// tokenFields maps the service's field names to the create form's.
var tokenFields = map[string]string{"name": "name", "role": "role"}

// createToken makes an API token and goes to the list, which shows its
// secret this once with a copy button (keepSecret). The form's token makes
// a second send (a reload, Back then Make) make nothing more.
func (p *Pages) createToken(c *gin.Context) {
	f := tokenForm{Name: strings.TrimSpace(c.PostForm("name")), Role: c.PostForm("role"), Token: postedOrNewToken(c), Errors: formErrors{}}
	handleForm(p, c, formPost[tokenForm]{errs: f.Errors,
		read: func() tokenForm {
			if f.Name == "" {
				f.Errors.add("name", "Enter a name that says which program uses the token.")
			}
			return f
		},
		act: func(f tokenForm) (outcome, error) {
			return p.createOnce(c, formToken(c), func() (outcome, error) {
				secret, tok, err := p.admin.CreateToken(c.Request.Context(), web.Principal(c).Name, f.Role, f.Name)
				if err != nil {
					return outcome{}, err
				}
				p.keepSecret(c, "token", tok.ID, secret)
				return outcome{to: fmt.Sprintf("/admin/tokens?made=%d#token-created", tok.ID)}, nil
			})
		},
		refused: func(_ tokenForm, err error) bool { return f.Errors.fromError(err, tokenFields) },
		show:    func(status int) { p.renderTokens(c, status, f) },
	})
}
