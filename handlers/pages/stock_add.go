package pages

import (
	"fmt"
	"strings"

	"github.com/couponsvc/couponsvc/handlers/web"

	"github.com/gin-gonic/gin"
)

// stockFields maps the service's field names to the stock form's.
var stockFields = map[string]string{"delta": "delta", "reason": "reason"}

// addStock adds stock to a template, with the reason kept in the audit log.
func (p *Pages) addStock(c *gin.Context) {
	f := stockForm{Delta: c.PostForm("delta"), Reason: c.PostForm("reason"), Token: postedOrNewToken(c), Errors: formErrors{}}
	handleCreateOnTemplate(p, c, formPost[int64]{errs: f.Errors,
		read: func() int64 {
			delta := formInt(f.Errors, "delta", f.Delta, true)
			if _, bad := f.Errors["delta"]; !bad && delta < 1 {
				f.Errors.add("delta", "Enter how many coupons to add, 1 or more.")
			}
			if strings.TrimSpace(f.Reason) == "" {
				f.Errors.add("reason", "Say why, for the audit log.")
			}
			return delta
		},
		refused: func(_ int64, err error) bool { return f.Errors.fromError(err, stockFields) },
		show:    func(status int) { p.renderTemplate(c, status, nil, &f) },
	}, func(id, delta int64) (outcome, error) {
		out, err := p.admin.AddStock(c.Request.Context(), web.Principal(c).Name, id, delta, f.Reason)
		if err != nil {
			return outcome{}, err
		}
		return done(fmt.Sprintf("Added %d to “%s”: the stock is now %d.", delta, out.Name, out.TotalStock),
			fmt.Sprintf("/admin/templates/%d", id)), nil
	})
}
