package pages

import (
	"fmt"
	"net/http"

	"couponsvc/handlers/web"

	"github.com/gin-gonic/gin"
)

// startGenerate queues a job making bearer codes, then shows the job.
func (p *Pages) startGenerate(c *gin.Context) {
	id, ok := p.pathID(c, "template")
	if !ok {
		return
	}
	f := generateForm{Count: c.PostForm("count"), Pattern: c.PostForm("pattern"), Errors: formErrors{}}
	count := formInt(f.Errors, "count", f.Count, true)
	if len(f.Errors) > 0 {
		p.renderJobs(c, http.StatusBadRequest, &f)
		return
	}
	j, err := p.codes.StartGenerate(c.Request.Context(), web.Principal(c).Name, id, count, f.Pattern)
	if err != nil {
		if !f.Errors.fromError(err, map[string]string{"count": "count", "pattern": "pattern"}) {
			p.fail(c, err)
			return
		}
		status, _ := web.StatusOf(err)
		p.renderJobs(c, status, &f)
		return
	}
	p.flash(c, true, fmt.Sprintf("Making %d codes: job %d is queued.", count, j.ID))
	redirect(c, fmt.Sprintf("/admin/jobs/%d", j.ID))
}

// jobResultURL is where a job's result CSV is downloaded (the API route,
// which takes the page session).
func jobResultURL(id int64) string { return fmt.Sprintf("/api/v1/jobs/%d/result.csv", id) }
