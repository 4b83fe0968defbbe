package pages

import (
	"net/http"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"

	"github.com/gin-gonic/gin"
)

// formPost is one form post of the pages, in the shape every one shares:
// read the form, act when it reads right, then flash what was done and
// redirect (303, so that a reload does not post again); or answer the form
// again with every mistake beside its field. T is what read makes of the
// form for act.
type formPost[T any] struct {
	// errs are the form's mistakes by field, as show writes them.
	errs formErrors
	// read reads and checks the form, each mistake it sees going to errs.
	read func() T
	// recheck, when set, runs when read found mistakes: the service's own
	// check of the rest, so that one answer names every mistake.
	recheck func(in T) error
	// act does what the form asks. It answers the page itself when the
	// outcome has no address to go to.
	act func(in T) (outcome, error)
	// refused puts an error of act (or recheck) beside its field in errs and
	// reports true, or reports false for a fault, which gets the error page.
	// Nil: every error of act is a fault.
	refused func(in T, err error) bool
	// status is the answer's status for a refusal; nil: web.StatusOf.
	status func(err error) int
	// show answers the form again with errs.
	show func(status int)
}

// outcome is what a form post did: the message for the next page, and the
// address of that page ("" when act answered itself).
type outcome struct {
	ok, failed string // flashed as done, or as not done
	to         string
}

// done is the outcome of a post that did what it says in msg, followed by
// the page at to.
func done(msg, to string) outcome { return outcome{ok: msg, to: to} }

// handleForm runs a form post (see formPost).
func handleForm[T any](p *Pages, c *gin.Context, f formPost[T]) {
	in := f.read()
	if len(f.errs) > 0 {
		if f.recheck != nil && f.refused != nil {
			if err := f.recheck(in); err != nil {
				f.refused(in, err)
			}
		}
		f.show(http.StatusBadRequest)
		return
	}
	out, err := f.act(in)
	if err != nil {
		if f.refused == nil || !f.refused(in, err) {
			p.fail(c, err)
			return
		}
		status, _ := web.StatusOf(err)
		if f.status != nil {
			status = f.status(err)
		}
		f.show(status)
		return
	}
	if out.ok != "" {
		p.flash(c, true, out.ok)
	}
	if out.failed != "" {
		p.flash(c, false, out.failed)
	}
	if out.to != "" {
		redirect(c, out.to)
	}
}

// noInput is the T of a post whose form has nothing to read but its button.
type noInput struct{}

// readNothing is the read of a post with nothing to read.
func readNothing() noInput { return noInput{} }

// notFoundOnly is the refused of a button whose object may be gone: a
// not-found error is answered by show (the not-found page), any other is a
// fault.
func notFoundOnly(_ noInput, err error) bool { return models.ErrorCode(err) == models.CodeNotFound }
