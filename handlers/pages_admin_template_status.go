package handlers

import (
	"fmt"
	"net/http"
	"strconv"

	"couponsvc/models"
	"couponsvc/services"

	"github.com/gin-gonic/gin"
)

// setTemplateStatus pauses or resumes a template, then goes back to the page
// the button was on.
func (p *pages) setTemplateStatus(c *gin.Context) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		p.renderError(c, http.StatusNotFound, "Not found", "There is no template at this address.")
		return
	}
	status := c.PostForm("status")
	if status != models.TemplateActive && status != models.TemplatePaused {
		p.renderError(c, http.StatusBadRequest, "That did not work", "Choose to pause or to resume the template.")
		return
	}
	out, err := p.svc.UpdateTemplate(c.Request.Context(), principal(c).Name, id, services.TemplatePatch{Status: &status})
	if err != nil {
		p.fail(c, err)
		return
	}
	msg := fmt.Sprintf("Paused “%s”: the shop shows it as not open.", out.Name)
	if status == models.TemplateActive {
		msg = fmt.Sprintf("Resumed “%s”: shoppers can claim it again.", out.Name)
	}
	p.flash(c, true, msg)
	redirect(c, firstNonEmpty(safeNext(c.PostForm("return")), fmt.Sprintf("/admin/templates/%d", id)))
}
