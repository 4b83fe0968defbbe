package pages

import (
	"fmt"
	"strings"

	"github.com/couponsvc/couponsvc/handlers/web"

	"github.com/gin-gonic/gin"
)

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
