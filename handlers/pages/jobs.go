package pages

import (
	"net/http"
	"strings"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/codes"

	"github.com/gin-gonic/gin"
)

// jobsPage is the data of jobs.html: a template's codes and distribution,
// with the forms that start jobs and its recent jobs.
type jobsPage struct {
	basePage
	Template *models.Template
	Jobs     []models.Job
	Generate generateForm
	Import   importForm
	Issue    issueForm
}

// generateForm, importForm and issueForm are the forms of a template's
// codes page, as typed; each Token names one filling of its form
// (createOnce), so that a form sent twice queues one job.
type generateForm struct {
	Count, Pattern string
	Token          string
	Errors         formErrors
}

type importForm struct {
	Token  string
	Errors formErrors
}

type issueForm struct {
	UserIDs string
	Token   string
	Errors  formErrors
}

// jobPage is the data of job.html.
type jobPage struct {
	basePage
	Job      *models.Job
	Template *models.Template
	Result   string // the result CSV's address
	// Refused are an import's first refused rows, in words; MoreRefused
	// counts the others (listed only in the result's download).
	Refused     []refusedRow
	MoreRefused int64
	// Succeeded counts the rows done and not refused (imported, made or
	// issued); ToGo the rows not done yet.
	Succeeded, ToGo int64
}

// shownRefusals bounds the refused rows of an import its job page lists.
const shownRefusals = 50

// refusedRow is a refused row of an import as its job page lists it.
type refusedRow struct {
	Line         int64
	Code, Reason string
}

// importReasons say why an import refused a row, for people; the words
// are those of the result's download (docs/jobs.md, "Import").
var importReasons = map[string]string{
	codes.ReasonBadCharacters:   "not a code: it needs 4 to 64 letters and digits (dashes and spaces aside), and must not read as a mistyped random code",
	codes.ReasonBadUserID:       "the user id is not valid",
	codes.ReasonDuplicateInFile: "an earlier line of the file has the same code",
	codes.ReasonAlreadyExists:   "a coupon with this code exists already",
	codes.ReasonOverStock:       "no stock was left for it",
	"budget_exhausted":          "the campaign’s budget was spent",
	"user_limit_reached":        "the customer holds as many coupons of this template as allowed",
	"campaign_limit":            "the customer holds as many coupons of this campaign as its per-customer cap allows",
	"not_claimable":             "the template could not be claimed (paused, archived or outside its claim window)",
}

// importReason says a refusal's word in words (a word not known with its
// underscores as spaces).
func importReason(word string) string {
	if s, ok := importReasons[word]; ok {
		return s
	}
	return strings.ReplaceAll(word, "_", " ")
}

// showTemplateJobs shows a template's bulk codes, import, export and issue
// forms, and its recent jobs with their progress.
func (p *Pages) showTemplateJobs(c *gin.Context) {
	p.renderJobs(c, http.StatusOK, nil)
}

// renderJobs shows jobs.html; form, when given, is a form sent back with
// its errors (a *generateForm, *importForm or *issueForm).
func (p *Pages) renderJobs(c *gin.Context, status int, form any) {
	id, ok := p.pathID(c, "template")
	if !ok {
		return
	}
	ctx := c.Request.Context()
	t, err := p.core.GetTemplate(ctx, id)
	if err != nil {
		p.fail(c, err)
		return
	}
	jobs, err := p.codes.ListJobs(ctx, id, 20)
	if err != nil {
		p.fail(c, err)
		return
	}
	page := &jobsPage{basePage: basePage{Title: "Codes · " + t.Name, Nav: "admin"}, Template: t, Jobs: jobs,
		Generate: generateForm{Token: newFormToken(), Errors: formErrors{}}, Import: importForm{Token: newFormToken(), Errors: formErrors{}},
		Issue: issueForm{Token: newFormToken(), Errors: formErrors{}}}
	switch f := form.(type) {
	case *generateForm:
		page.Generate = *f
	case *importForm:
		page.Import = *f
	case *issueForm:
		page.Issue = *f
	}
	p.render(c, status, "jobs", page)
}

// showJob shows one job: its state, a progress bar that app.js keeps
// current, and its result's download.
func (p *Pages) showJob(c *gin.Context) {
	id, ok := p.pathID(c, "job")
	if !ok {
		return
	}
	ctx := c.Request.Context()
	j, err := p.codes.GetJob(ctx, id)
	if err != nil {
		p.fail(c, err)
		return
	}
	t, err := p.core.GetTemplate(ctx, j.TemplateID)
	if err != nil {
		p.fail(c, err)
		return
	}
	refused, err := p.codes.ImportRefusals(ctx, j, shownRefusals)
	if err != nil {
		p.fail(c, err)
		return
	}
	page := &jobPage{basePage: basePage{Title: "Job " + codes.JobResultName(j), Nav: "admin"},
		Job: j, Template: t, Result: jobResultURL(j.ID), MoreRefused: max(0, j.Errors-int64(len(refused))),
		Succeeded: max(0, j.Done-j.Errors), ToGo: max(0, j.Total-j.Done)}
	for _, r := range refused {
		page.Refused = append(page.Refused, refusedRow{Line: r.Line, Code: r.Code, Reason: importReason(r.Reason)})
	}
	p.render(c, http.StatusOK, "job", page)
}
