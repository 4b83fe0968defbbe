package pages

import (
	"fmt"
	"net/http"
	"strings"

	"couponsvc/handlers/web"
	"couponsvc/models"
	"couponsvc/services"

	"github.com/gin-gonic/gin"
)

// setTemplateStatus pauses or resumes a template, then goes back to the page
// the button was on.
func (p *Pages) setTemplateStatus(c *gin.Context) {
	id, ok := p.pathID(c, "template")
	if !ok {
		return
	}
	status := c.PostForm("status")
	if status != models.TemplateActive && status != models.TemplatePaused {
		p.renderError(c, http.StatusBadRequest, "That did not work", "Choose to pause or to resume the template.")
		return
	}
	back := firstNonEmpty(safeNext(c.PostForm("return")), fmt.Sprintf("/admin/templates/%d", id))
	out, err := p.svc.UpdateTemplate(c.Request.Context(), web.Principal(c).Name, id, services.TemplatePatch{Status: &status})
	if err != nil {
		var e *models.Error
		if asError(err, &e) && e.Code == models.CodeInvalidRequest {
			// Such as resuming a template whose coupons would be born expired.
			what := "Not paused: "
			if status == models.TemplateActive {
				what = "Not resumed: "
			}
			p.flash(c, false, what+sentence(strings.ReplaceAll(e.Field, "_", " ")+" "+e.Message))
			redirect(c, back)
			return
		}
		p.fail(c, err)
		return
	}
	msg := fmt.Sprintf("Paused “%s”: the shop no longer offers it.", out.Name)
	if status == models.TemplateActive {
		msg = fmt.Sprintf("Resumed “%s”: shoppers can claim it again.", out.Name)
	}
	p.flash(c, true, msg)
	redirect(c, back)
}
