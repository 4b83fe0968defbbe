package pages

import (
	"fmt"
	"net/http"
	"strings"

	"couponsvc/handlers/web"
	"couponsvc/models"
	"couponsvc/services/admin"

	"github.com/gin-gonic/gin"
)

// editFields are the fields of the edit form; an error on another (such as
// valid_until, which it cannot change) is shown above the form.
var editFields = map[string]string{"name": "name", "description": "description",
	"claim_starts_at": "claim_starts_at", "claim_ends_at": "claim_ends_at",
	"code_mode": "code_mode", "shared_code": "shared_code"}

// saveTemplate saves the name, description, claim window and code mode of a
// template (an archived one keeps its claim window and code: the form of
// an archived template sends neither).
func (p *Pages) saveTemplate(c *gin.Context) {
	id, ok := p.pathID(c, "template")
	if !ok {
		return
	}
	f := editForm{Name: c.PostForm("name"), Description: c.PostForm("description"),
		ClaimStartsAt: c.PostForm("claim_starts_at"), ClaimEndsAt: c.PostForm("claim_ends_at"),
		CodeMode: c.PostForm("code_mode"), SharedCode: strings.TrimSpace(c.PostForm("shared_code")), Errors: formErrors{}}
	name, desc := f.Name, strings.TrimSpace(f.Description)
	patch := admin.TemplatePatch{Name: &name, Description: &desc}
	if f.CodeMode != "" {
		mode, code := f.CodeMode, f.SharedCode
		patch.CodeMode = &mode
		if mode == models.CodeModeShared {
			patch.SharedCode = &code
		}
	}
	if strings.TrimSpace(f.ClaimStartsAt) == "" {
		f.Errors.add("claim_starts_at", "Enter when claims open.")
	}
	patch.ClaimStartsAt = p.formTime(f.Errors, "claim_starts_at", f.ClaimStartsAt)
	patch.ClaimEndsAt = p.formTime(f.Errors, "claim_ends_at", f.ClaimEndsAt)
	patch.ClearClaimEndsAt = strings.TrimSpace(f.ClaimEndsAt) == ""
	if len(f.Errors) > 0 {
		// Name every mistake in this one answer, not only the dates'.
		templateErrors(f.Errors, models.CheckTemplateText(name, desc), editFields)
		p.renderTemplate(c, http.StatusBadRequest, &f, nil)
		return
	}
	out, err := p.admin.UpdateTemplate(c.Request.Context(), web.Principal(c).Name, id, patch)
	if err != nil {
		if !templateErrors(f.Errors, err, editFields) {
			p.fail(c, err)
			return
		}
		status, _ := web.StatusOf(err)
		p.renderTemplate(c, status, &f, nil)
		return
	}
	p.flash(c, true, fmt.Sprintf("Saved “%s”.", out.Name))
	redirect(c, fmt.Sprintf("/admin/templates/%d", id))
}
