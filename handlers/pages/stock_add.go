package pages

import (
	"couponsvc/handlers/web"

	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// stockFields maps the service's field names to the stock form's.
var stockFields = map[string]string{"delta": "delta", "reason": "reason"}

// addStock adds stock to a template, with the reason kept in the audit log.
func (p *Pages) addStock(c *gin.Context) {
	id, ok := p.pathID(c, "template")
	if !ok {
		return
	}
	f := stockForm{Delta: c.PostForm("delta"), Reason: c.PostForm("reason"), Errors: formErrors{}}
	delta := formInt(f.Errors, "delta", f.Delta, true)
	if _, bad := f.Errors["delta"]; !bad && delta < 1 {
		f.Errors.add("delta", "Enter how many coupons to add, 1 or more.")
	}
	if strings.TrimSpace(f.Reason) == "" {
		f.Errors.add("reason", "Say why, for the audit log.")
	}
	if len(f.Errors) > 0 {
		p.renderTemplate(c, http.StatusBadRequest, nil, &f)
		return
	}
	out, err := p.admin.AddStock(c.Request.Context(), web.Principal(c).Name, id, delta, f.Reason)
	if err != nil {
		if !f.Errors.fromError(err, stockFields) {
			p.fail(c, err)
			return
		}
		status, _ := web.StatusOf(err)
		p.renderTemplate(c, status, nil, &f)
		return
	}
	p.flash(c, true, fmt.Sprintf("Added %d to “%s”: the stock is now %d.", delta, out.Name, out.TotalStock))
	redirect(c, fmt.Sprintf("/admin/templates/%d", id))
}
