package pages

import (
	"fmt"
	"strings"

	"couponsvc/handlers/web"
	"couponsvc/models"
	"couponsvc/services/codes"

	"github.com/gin-gonic/gin"
)

// startIssue queues a job giving a coupon to each user typed in the form
// (one user id a line, or a CSV with a user_id column), then shows the job.
func (p *Pages) startIssue(c *gin.Context) {
	id, ok := p.pathID(c, "template")
	if !ok {
		return
	}
	f := issueForm{UserIDs: c.PostForm("user_ids"), Errors: formErrors{}}
	users, err := codes.ParseUserList(strings.NewReader(f.UserIDs))
	if err == nil {
		var j *models.Job
		if j, err = p.codes.StartIssue(c.Request.Context(), web.Principal(c).Name, id, users); err == nil {
			p.flash(c, true, fmt.Sprintf("Issuing to %d users: job %d is queued.", len(users), j.ID))
			redirect(c, fmt.Sprintf("/admin/jobs/%d", j.ID))
			return
		}
	}
	if !f.Errors.fromError(err, map[string]string{"file": "user_ids", "user_ids": "user_ids"}) {
		p.fail(c, err)
		return
	}
	status, _ := web.StatusOf(err)
	p.renderJobs(c, status, &f)
}
