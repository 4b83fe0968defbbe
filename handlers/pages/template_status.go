package pages

import (
	"fmt"
	"strings"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/admin"

	"github.com/gin-gonic/gin"
)

// setTemplateStatus pauses, resumes or archives a template (archived is
// final, see docs/shared-codes.md), then goes back to the page the button
// was on.
func (p *Pages) setTemplateStatus(c *gin.Context) {
	id, ok := p.pathID(c, "template")
	if !ok {
		return
	}
	errs := formErrors{}
	handleForm(p, c, formPost[string]{errs: errs,
		read: func() string {
			status := c.PostForm("status")
			if status != models.TemplateActive && status != models.TemplatePaused && status != models.TemplateArchived {
				errs.add("", "Choose to pause, resume or archive the template.")
			}
			return status
		},
		act: func(status string) (outcome, error) {
			back := firstNonEmpty(safeNext(c.PostForm("return")), fmt.Sprintf("/admin/templates/%d", id))
			out, err := p.admin.UpdateTemplate(c.Request.Context(), web.Principal(c).Name, id, admin.TemplatePatch{Status: &status})
			if err != nil {
				var e *models.Error
				if asError(err, &e) && e.Code == models.CodeInvalidRequest {
					// Such as resuming a template whose coupons would be born expired.
					what := map[string]string{models.TemplateActive: "Not resumed: ", models.TemplatePaused: "Not paused: ",
						models.TemplateArchived: "Not archived: "}[status]
					return outcome{failed: what + sentence(strings.ReplaceAll(e.Field, "_", " ")+" "+e.Message), to: back}, nil
				}
				return outcome{}, err
			}
			msg := fmt.Sprintf("Paused “%s”: the shop no longer offers it.", out.Name)
			switch status {
			case models.TemplateActive:
				msg = fmt.Sprintf("Resumed “%s”: shoppers can claim it again.", out.Name)
			case models.TemplateArchived:
				msg = fmt.Sprintf("Archived “%s”: it takes no claims again, and its shared code is free.", out.Name)
			}
			return done(msg, back), nil
		},
		// A button, not a form to correct: the mistake gets a page of its own.
		show: func(status int) { p.renderError(c, status, "That did not work", errs[""]) },
	})
}
