package pages

import (
	"fmt"
	"strings"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/services/codes"

	"github.com/gin-gonic/gin"
)

// startIssue queues a job giving a coupon to each user typed in the form
// (one user id a line, or a CSV with a user_id column), then shows the job.
func (p *Pages) startIssue(c *gin.Context) {
	id, ok := p.pathID(c, "template")
	if !ok {
		return
	}
	f := issueForm{UserIDs: c.PostForm("user_ids"), Token: postedOrNewToken(c), Errors: formErrors{}}
	handleForm(p, c, formPost[noInput]{errs: f.Errors, read: readNothing,
		act: func(noInput) (outcome, error) {
			// The list is read by the service's rule, its mistakes said as
			// the service's are, before the form's token is taken: so this
			// page does not use handleCreateOnTemplate.
			users, err := codes.ParseUserList(strings.NewReader(f.UserIDs))
			if err != nil {
				return outcome{}, err
			}
			return p.createOnce(c, formToken(c), func() (outcome, error) {
				j, err := p.codes.StartIssue(c.Request.Context(), web.Principal(c).Name, id, users)
				if err != nil {
					return outcome{}, err
				}
				return jobQueued(j, fmt.Sprintf("Issuing to %d users", len(users))), nil
			})
		},
		refused: func(_ noInput, err error) bool {
			return f.Errors.fromError(err, map[string]string{"file": "user_ids", "user_ids": "user_ids"})
		},
		show: func(status int) { p.renderJobs(c, status, &f) },
	})
}
