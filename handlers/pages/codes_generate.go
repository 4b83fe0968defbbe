package pages

import (
	"fmt"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/codes"

	"github.com/gin-gonic/gin"
)

// startGenerate queues a job making bearer codes, then shows the job.
func (p *Pages) startGenerate(c *gin.Context) {
	f := generateForm{Count: c.PostForm("count"), Pattern: c.PostForm("pattern"), Token: postedOrNewToken(c), Errors: formErrors{}}
	handleCreateOnTemplate(p, c, formPost[int64]{errs: f.Errors,
		// Every mistake of the form in one answer: the count's and the
		// pattern's (docs/result-codes.md, "fields").
		read: func() int64 {
			count := formInt(f.Errors, "count", f.Count, true)
			if f.Errors["count"] == "" && (count < 1 || count > codes.MaxGenerateCount) {
				f.Errors.add("count", fmt.Sprintf("Enter a number from 1 to %d.", codes.MaxGenerateCount))
			}
			if _, err := models.ParsePattern("pattern", f.Pattern); err != nil {
				f.Errors.fromError(err, map[string]string{"pattern": "pattern"})
			}
			return count
		},
		refused: func(_ int64, err error) bool {
			return f.Errors.fromError(err, map[string]string{"count": "count", "pattern": "pattern"})
		},
		show: func(status int) { p.renderJobs(c, status, &f) },
	}, func(id, count int64) (outcome, error) {
		j, err := p.codes.StartGenerate(c.Request.Context(), web.Principal(c).Name, id, count, f.Pattern)
		if err != nil {
			return outcome{}, err
		}
		return jobQueued(j, fmt.Sprintf("Making %d codes", count)), nil
	})
}

// jobQueued is the outcome of a form that queued job j: the job's page,
// saying what the job does ("Making 10 codes: job 7 is queued.").
func jobQueued(j *models.Job, doing string) outcome {
	return done(fmt.Sprintf("%s: job %d is queued.", doing, j.ID), fmt.Sprintf("/admin/jobs/%d", j.ID))
}

// jobResultURL is where a job's result CSV is downloaded (the API route,
// which takes the page session).
func jobResultURL(id int64) string { return fmt.Sprintf("/api/v1/jobs/%d/result.csv", id) }
