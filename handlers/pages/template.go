package pages

import (
	"html/template"
	"net/http"
	"strconv"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/reports"

	"github.com/gin-gonic/gin"
)

// Template states on the admin pages.
const (
	stateOpen   = "Open"
	statePaused = "Paused"
	// stateCampaignPaused: the template is active, its campaign paused.
	stateCampaignPaused = "Campaign paused"
	stateSoldOut        = "Sold out"
	stateNotYet         = "Not open yet"
	stateEnded          = "Ended"
	stateArchived       = "Archived"
)

// templateState says in a word whether a template takes claims now, by the
// rule the claims follow: its own and its campaign's status (camp may be nil
// when unknown).
func templateState(v core.TemplateView, camp *models.Campaign, now time.Time) string {
	reason, _ := v.ClaimRefusal(now)
	switch {
	case reason == models.RefusedPaused:
		return statePaused
	case camp != nil && camp.Status == models.CampaignPaused:
		return stateCampaignPaused
	case reason == models.RefusedArchived:
		return stateArchived
	case reason == models.RefusedNotYet:
		return stateNotYet
	case reason != "": // closed, or past the coupons' validity
		return stateEnded
	case v.Remaining != nil && *v.Remaining <= 0:
		return stateSoldOut
	}
	return stateOpen
}

// templatePage is the data of template.html.
type templatePage struct {
	basePage
	Template core.TemplateView
	Campaign *models.Campaign
	State    string
	Stats    *reports.TemplateStats
	// At is when the figures were read: they are shown as sums that add
	// up, so they are not refreshed one by one while the page is open.
	At    time.Time
	Chart chart
	Hours int
	Edit  editForm
	Stock stockForm
	// History is a page of the template's audit entries, newest first;
	// Before is the id it starts before (0: the newest), Pager links the
	// pages.
	History []auditLine
	Before  int64
	Pager   pager
	// Jobs are the template's latest jobs, with their progress.
	Jobs []models.Job
	// Deletable: it never issued a coupon nor had a code job, so the page
	// offers Delete (docs/flows.md#delete).
	Deletable bool
}

// historyPage is how many audit entries a template's page shows at once.
const historyPage = 50

// editForm holds what an admin may change on a template, as typed.
type editForm struct {
	Name, Description, ClaimStartsAt, ClaimEndsAt string
	CodeMode, SharedCode, Stacking                string
	// Eligibility is the rule of who may use the coupons, as typed
	// (docs/eligibility.md): shown filled with the template's, empty
	// admitting everyone.
	Eligibility string
	// HasEligibility: the form sent its eligibility field (a form without
	// it leaves the rule as it is).
	HasEligibility bool
	Errors         formErrors
}

// stockForm is the add-stock form, as typed.
type stockForm struct {
	Delta, Reason string
	// Token names this filling of the form (createOnce).
	Token  string
	Errors formErrors
}

// showTemplate shows one template: its figures, its chart of claims and
// redemptions per hour, its edit and stock forms and its history.
func (p *Pages) showTemplate(c *gin.Context) {
	p.renderTemplate(c, http.StatusOK, nil, nil)
}

// renderTemplate shows a template's page; edit and stock, when given, are
// forms sent back with their errors.
func (p *Pages) renderTemplate(c *gin.Context, status int, edit *editForm, stock *stockForm) {
	id, ok := p.pathID(c, "template")
	if !ok {
		return
	}
	ctx := c.Request.Context()
	hours := 24
	if h, err := strconv.Atoi(c.Query("hours")); err == nil && h >= 1 && h <= reports.MaxStatsHours {
		hours = h
	}
	view, err := p.core.ViewTemplate(ctx, id)
	if err != nil {
		p.fail(c, err)
		return
	}
	stats, err := p.reports.TemplateStats(ctx, id, hours)
	if err != nil {
		p.fail(c, err)
		return
	}
	camp, err := p.core.GetCampaign(ctx, view.CampaignID)
	if err != nil {
		p.fail(c, err)
		return
	}
	before, _ := strconv.ParseInt(c.Query("before"), 10, 64)
	history, err := p.admin.ListTemplateAudit(ctx, id, historyPage, before)
	if err != nil {
		p.fail(c, err)
		return
	}
	jobs, err := p.codes.ListJobs(ctx, id, 5)
	if err != nil {
		p.fail(c, err)
		return
	}
	issued, err := p.admin.TemplateIssued(ctx, id)
	if err != nil {
		p.fail(c, err)
		return
	}
	page := &templatePage{Deletable: !issued, basePage: basePage{Title: view.Name, Nav: "admin"}, Template: *view, At: p.now(), Jobs: jobs,
		Campaign: camp, State: templateState(*view, camp, p.now()), Stats: stats, Chart: newChart(stats.Hours, p.loc), Hours: hours,
		History: p.auditLines(history.Entries, history.Codes), Before: max(before, 0),
		Pager: newPager("", template.URL("hours="+strconv.Itoa(hours)), max(before, 0), history.Older)}
	if edit != nil {
		page.Edit = *edit
	} else {
		page.Edit = editForm{Name: view.Name, Description: view.Description, CodeMode: view.CodeMode, SharedCode: view.SharedCode,
			Stacking: view.Stacking, Eligibility: view.Eligibility,
			ClaimStartsAt: p.formValue(view.ClaimStartsAt), Errors: formErrors{}}
		if view.ClaimEndsAt != nil {
			page.Edit.ClaimEndsAt = p.formValue(*view.ClaimEndsAt)
		}
	}
	if stock != nil {
		page.Stock = *stock
	} else {
		page.Stock = stockForm{Token: newFormToken(), Errors: formErrors{}}
	}
	p.render(c, status, "template", page)
}
