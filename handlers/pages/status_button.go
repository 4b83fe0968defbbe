package pages

import (
	"context"
	"fmt"
	"slices"

	"github.com/couponsvc/couponsvc/handlers/web"

	"github.com/gin-gonic/gin"
)

// statusButton is a button of the admin pages that sets the status of a
// campaign or a template (pause, resume, archive) and goes back to the page
// it was on: what is one kind of object's, setStatus does the rest.
type statusButton struct {
	// what names the object in the path (p.pathID).
	what string
	// statuses are those the button may set; choose is the mistake shown
	// for any other.
	statuses []string
	choose   string
	// back is the object's page, a format of its id: where the button goes
	// back to unless the form names a return page.
	back string
	// set changes the status and returns the object's name.
	set func(ctx context.Context, actor string, id int64, status string) (string, error)
	// refused, when not nil, turns a refusal of set into the message of a
	// failed outcome (ok true); another error is the page's error.
	refused func(status string, err error) (string, bool)
	// done is the message of each status set, a format of the name.
	done map[string]string
}

// setStatus is the handler of a status button.
func (p *Pages) setStatus(c *gin.Context, b statusButton) {
	id, ok := p.pathID(c, b.what)
	if !ok {
		return
	}
	errs := formErrors{}
	handleForm(p, c, formPost[string]{errs: errs,
		read: func() string {
			status := c.PostForm("status")
			if !slices.Contains(b.statuses, status) {
				errs.add("", b.choose)
			}
			return status
		},
		act: func(status string) (outcome, error) {
			back := firstNonEmpty(safeNext(c.PostForm("return")), fmt.Sprintf(b.back, id))
			name, err := b.set(c.Request.Context(), web.Principal(c).Name, id, status)
			if err != nil {
				if b.refused != nil {
					if msg, ok := b.refused(status, err); ok {
						return outcome{failed: msg, to: back}, nil
					}
				}
				return outcome{}, err
			}
			return done(fmt.Sprintf(b.done[status], name), back), nil
		},
		// A button, not a form to correct: the mistake gets a page of its own.
		show: func(status int) { p.renderError(c, status, "That did not work", errs[""]) },
	})
}
