package pages

import (
	"fmt"
	"net/http"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/reconcile"

	"github.com/gin-gonic/gin"
)

// reconcilePage is the data of reconcile.html.
type reconcilePage struct {
	basePage
	Ran     bool
	Rows    []reconcileRow
	Drifted int64
	// Budgets are the campaigns' budget lines; BudgetsDrifted counts those
	// that drifted.
	Budgets        []budgetRow
	BudgetsDrifted int64
	// Last says when a check and the background repair pass last ran;
	// LastUnknown that Redis could not tell.
	Last        reconcile.ReconcileRuns
	LastUnknown bool
}

type reconcileRow struct {
	reconcile.TemplateDrift
	Name     string
	Expected int64
	IsDrift  bool
}

// budgetRow is a campaign's budget line of the report.
type budgetRow struct {
	reconcile.CampaignBudgetDrift
	Name    string
	IsDrift bool
}

// campaignNames maps campaign ids to names.
func (p *Pages) campaignNames(c *gin.Context) (map[int64]string, error) {
	camps, err := p.core.ListCampaigns(c.Request.Context())
	return namesByID(camps, func(cp models.Campaign) (int64, string) { return cp.ID, cp.Name }), err
}

// reconcileNamed compares Redis with the database (and repairs what drifted
// with repair), and names the templates and campaigns of the report.
func (p *Pages) reconcileNamed(c *gin.Context, repair bool) (*reconcile.ReconcileReport,
	map[int64]string, map[int64]string, error) {
	var templates, campaigns map[int64]string
	report, err := p.reconciler.Reconcile(c.Request.Context(), reconcile.ReconcileRequest{Repair: repair, Actor: web.Principal(c).Name})
	if err == nil {
		templates, err = p.templateNames(c)
	}
	if err == nil {
		campaigns, err = p.campaignNames(c)
	}
	return report, templates, campaigns, err
}

// maxRepairLines bounds the lines of the repair summary kept for the next
// page (it travels in the session cookie).
const maxRepairLines = 8

// showReconcile explains reconciliation and, with ?run=1, compares Redis with
// the database for every template (a read: nothing is repaired) and shows the
// report.
func (p *Pages) showReconcile(c *gin.Context) {
	page := &reconcilePage{basePage: basePage{Title: "Reconcile", Nav: "reconcile"}}
	if c.Query("run") == "1" {
		report, names, camps, err := p.reconcileNamed(c, false)
		if err != nil {
			p.fail(c, err)
			return
		}
		page.Ran = true
		page.Drifted = int64(report.Drifted())
		page.BudgetsDrifted = int64(report.BudgetsDrifted())
		for _, d := range report.Templates {
			page.Rows = append(page.Rows, reconcileRow{TemplateDrift: d, Name: names[d.TemplateID],
				Expected: d.ExpectedRemaining(), IsDrift: d.Drifted()})
		}
		for _, d := range report.Campaigns {
			page.Budgets = append(page.Budgets, budgetRow{CampaignBudgetDrift: d, Name: camps[d.CampaignID], IsDrift: d.Drifted()})
		}
	}
	last, err := p.reconciler.LastReconcile(c.Request.Context())
	// The page explains and offers the check even when Redis cannot say.
	page.Last, page.LastUnknown = last, err != nil
	p.render(c, http.StatusOK, "reconcile", page)
}

// runReconcile compares and repairs: the counters of each campaign that drifted
// are rebuilt from the database, with an audit entry per template. The page
// that follows shows what was repaired and a fresh comparison.
func (p *Pages) runReconcile(c *gin.Context) {
	handleForm(p, c, formPost[noInput]{read: readNothing,
		act: func(noInput) (outcome, error) {
			report, names, camps, err := p.reconcileNamed(c, true)
			if err != nil {
				return outcome{}, err
			}
			p.flashRepairs(c, report, names, camps)
			return outcome{to: "/admin/reconcile?run=1"}, nil
		},
	})
}

// flashRepairs keeps a line for the next page per template and campaign
// repaired, at most maxRepairLines of them, or says that nothing drifted.
func (p *Pages) flashRepairs(c *gin.Context, report *reconcile.ReconcileReport, names, camps map[int64]string) {
	repaired := 0
	for _, d := range report.Templates {
		if !d.Repaired {
			continue
		}
		repaired++
		if repaired <= maxRepairLines {
			msg := fmt.Sprintf("Repaired “%s”: the fast counter had %d left where the coupons on record leave %d", names[d.TemplateID],
				deref(d.RedisRemaining), d.ExpectedRemaining())
			if d.UsersDrifted > 0 {
				msg += fmt.Sprintf(", and %d %s off", d.UsersDrifted, plural(int64(d.UsersDrifted), "shopper's count was", "shoppers' counts were"))
			}
			p.flash(c, true, msg+". Its stock was counted again from the coupons on record.")
		}
	}
	budgets := 0
	for _, d := range report.Campaigns {
		if !d.Repaired {
			continue
		}
		budgets++
		if repaired+budgets <= maxRepairLines {
			p.flash(c, true, fmt.Sprintf("Repaired the budget of “%s”: the fast counter had %s left where the coupons on record leave %s. It was counted again from the coupons on record.",
				camps[d.CampaignID], p.money.format(deref(d.RedisBudgetRemaining)), p.money.format(d.ExpectedRemaining)))
		}
	}
	switch {
	case repaired+budgets > maxRepairLines:
		p.flash(c, true, fmt.Sprintf("… and %d more repaired (see the audit log).", repaired+budgets-maxRepairLines))
	case repaired+budgets == 0:
		p.flash(c, true, fmt.Sprintf("Checked %d templates and %d campaign budgets: the fast counter agrees with the coupons on record, nothing to repair.",
			len(report.Templates), len(report.Campaigns)))
	}
}

func deref(n *int64) int64 {
	if n == nil {
		return 0
	}
	return *n
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
