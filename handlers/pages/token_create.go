package pages

import (
	"net/http"
	"strings"

	"github.com/couponsvc/couponsvc/handlers/web"

	"github.com/gin-gonic/gin"
)

var tokenFields = map[string]string{"name": "name", "role": "role"}

// createToken makes an API token and shows its secret, this once (so it
// answers the page rather than redirecting), with a copy button.
func (p *Pages) createToken(c *gin.Context) {
	f := tokenForm{Name: strings.TrimSpace(c.PostForm("name")), Role: c.PostForm("role"), Errors: formErrors{}}
	handleForm(p, c, formPost[tokenForm]{errs: f.Errors,
		read: func() tokenForm {
			if f.Name == "" {
				f.Errors.add("name", "Enter a name that says which program uses the token.")
			}
			return f
		},
		act: func(f tokenForm) (outcome, error) {
			secret, tok, err := p.admin.CreateToken(c.Request.Context(), web.Principal(c).Name, f.Role, f.Name)
			if err != nil {
				return outcome{}, err
			}
			// The secret is shown this once: the answer is the page, not a redirect.
			p.renderTokens(c, http.StatusCreated, tokenForm{Role: f.Role, Errors: formErrors{}}, tok, secret)
			return outcome{}, nil
		},
		refused: func(_ tokenForm, err error) bool { return f.Errors.fromError(err, tokenFields) },
		show:    func(status int) { p.renderTokens(c, status, f, nil, "") },
	})
}
