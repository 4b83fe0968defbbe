package handlers

import (
	"fmt"
	"net/http"

	"couponsvc/services"

	"github.com/gin-gonic/gin"
)

// reconcilePage is the data of reconcile.html.
type reconcilePage struct {
	basePage
	Ran     bool
	Rows    []reconcileRow
	Drifted int64
}

type reconcileRow struct {
	services.TemplateDrift
	Name     string
	Expected int64
	IsDrift  bool
}

// maxRepairLines bounds the lines of the repair summary kept for the next
// page (it travels in the session cookie).
const maxRepairLines = 8

// showReconcile explains reconciliation and, with ?run=1, compares Redis with
// the database for every template (a read: nothing is repaired) and shows the
// report.
func (p *pages) showReconcile(c *gin.Context) {
	page := &reconcilePage{basePage: basePage{Title: "Reconcile", Nav: "reconcile"}}
	if c.Query("run") == "1" {
		report, err := p.svc.Reconcile(c.Request.Context(), services.ReconcileRequest{Actor: principal(c).Name})
		if err != nil {
			p.fail(c, err)
			return
		}
		names, err := p.templateNames(c)
		if err != nil {
			p.fail(c, err)
			return
		}
		page.Ran = true
		page.Drifted = int64(report.Drifted())
		for _, d := range report.Templates {
			page.Rows = append(page.Rows, reconcileRow{TemplateDrift: d, Name: names[d.TemplateID],
				Expected: d.TotalStock - d.DBLive - d.InFlight, IsDrift: d.Drifted()})
		}
	}
	p.render(c, http.StatusOK, "reconcile", page)
}

// reconcile compares and repairs: the counters of each campaign that drifted
// are rebuilt from the database, with an audit entry per template. The page
// that follows shows what was repaired and a fresh comparison.
func (p *pages) reconcile(c *gin.Context) {
	report, err := p.svc.Reconcile(c.Request.Context(), services.ReconcileRequest{Repair: true, Actor: principal(c).Name})
	if err != nil {
		p.fail(c, err)
		return
	}
	names, err := p.templateNames(c)
	if err != nil {
		p.fail(c, err)
		return
	}
	repaired := 0
	for _, d := range report.Templates {
		if !d.Repaired {
			continue
		}
		repaired++
		if repaired <= maxRepairLines {
			msg := fmt.Sprintf("Repaired “%s”: Redis had %d left where the database allows %d", names[d.TemplateID],
				deref(d.RedisRemaining), d.TotalStock-d.DBLive-d.InFlight)
			if d.UsersDrifted > 0 {
				msg += fmt.Sprintf(", and %d %s off", d.UsersDrifted, plural(int64(d.UsersDrifted), "shopper's count was", "shoppers' counts were"))
			}
			p.flash(c, true, msg+". Its counters were rebuilt from the database.")
		}
	}
	switch {
	case repaired > maxRepairLines:
		p.flash(c, true, fmt.Sprintf("… and %d more templates repaired (see the audit log).", repaired-maxRepairLines))
	case repaired == 0:
		p.flash(c, true, fmt.Sprintf("Checked %d templates: Redis agrees with the database, nothing to repair.", len(report.Templates)))
	}
	redirect(c, "/admin/reconcile?run=1")
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
