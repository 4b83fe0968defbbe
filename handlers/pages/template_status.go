package pages

import (
	"context"
	"strings"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/admin"

	"github.com/gin-gonic/gin"
)

// setTemplateStatus pauses, resumes or archives a template (archived is
// final, see docs/shared-codes.md), then goes back to the page the button
// was on.
func (p *Pages) setTemplateStatus(c *gin.Context) {
	p.setStatus(c, statusButton{what: "template",
		statuses: []string{models.TemplateActive, models.TemplatePaused, models.TemplateArchived},
		choose:   "Choose to pause, resume or archive the template.",
		back:     "/admin/templates/%d",
		set: func(ctx context.Context, actor string, id int64, status string) (string, error) {
			out, err := p.admin.UpdateTemplate(ctx, actor, id, admin.TemplatePatch{Status: &status})
			if err != nil {
				return "", err
			}
			return out.Name, nil
		},
		// Such as resuming a template whose coupons would be born expired.
		refused: func(status string, err error) (string, bool) {
			var e *models.Error
			if !asError(err, &e) || e.Code != models.CodeInvalidRequest {
				return "", false
			}
			what := map[string]string{models.TemplateActive: "Not resumed: ", models.TemplatePaused: "Not paused: ",
				models.TemplateArchived: "Not archived: "}[status]
			return what + sentence(strings.ReplaceAll(e.Field, "_", " ")+" "+e.Message), true
		},
		done: map[string]string{
			models.TemplatePaused:   "Paused “%s”: the shop no longer offers it.",
			models.TemplateActive:   "Resumed “%s”: shoppers can claim it again.",
			models.TemplateArchived: "Archived “%s”: it takes no claims again, and its shared code is free.",
		},
	})
}
