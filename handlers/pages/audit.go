package pages

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/admin"

	"github.com/gin-gonic/gin"
)

// auditPageSize is how many audit entries the audit page lists at once.
const auditPageSize = 50

// auditPage is the data of audit.html.
type auditPage struct {
	basePage
	Filter auditFilterForm
	Bar    filterBar
	Lines  []auditLine
	// Query is the filter as an address query; Pager links the pages.
	Query template.URL
	Pager pager
	// FilteredBy says the filter in words ("" without one).
	FilteredBy string
}

// auditFilterForm is the filter form of the audit page, as typed.
type auditFilterForm struct {
	Actor, Action, Target, From, To string
	Before                          int64
	Errors                          formErrors
}

var auditFilterFields = map[string]string{"actor": "actor", "action": "action", "target": "target",
	"since": "from", "until": "to"}

// showAudit lists the audit log as sentences, newest first, filtered by who,
// what, which object and which days, one page at a time.
func (p *Pages) showAudit(c *gin.Context) {
	f := auditFilterForm{Actor: strings.TrimSpace(c.Query("actor")), Action: c.Query("action"),
		Target: strings.TrimSpace(c.Query("target")), From: c.Query("from"), To: c.Query("to"), Errors: formErrors{}}
	f.Before, _ = strconv.ParseInt(c.Query("before"), 10, 64)
	page := &auditPage{basePage: basePage{Title: "Audit log", Nav: "audit"}, Filter: f}
	var older int64
	filter := admin.AuditFilter{Actor: f.Actor, Action: f.Action, Target: f.Target, Before: f.Before, Limit: auditPageSize}
	filter.Since = formDay(f.Errors, "from", f.From)
	if to := formDay(f.Errors, "to", f.To); !to.IsZero() {
		filter.Until = to.AddDate(0, 0, 1) // the whole day
	}
	status := http.StatusOK
	if len(f.Errors) == 0 {
		res, err := p.admin.SearchAudit(c.Request.Context(), filter)
		switch {
		case err == nil:
			page.Lines, older = p.auditLines(res.Entries, res.Codes), res.Older
		case f.Errors.fromError(err, auditFilterFields):
		default:
			p.fail(c, err)
			return
		}
	}
	if len(f.Errors) > 0 {
		status = http.StatusBadRequest
	}
	q := url.Values{}
	for k, v := range map[string]string{"actor": f.Actor, "action": f.Action, "target": f.Target, "from": f.From, "to": f.To} {
		if v != "" {
			q.Set(k, v)
		}
	}
	// Encoded here, so that the page writes it as is.
	page.Query = template.URL(q.Encode())
	page.Bar, page.Pager = f.bar(), newPager("/admin/audit", page.Query, f.Before, older)
	summary, err := p.auditSummary(c, f)
	if err != nil {
		p.fail(c, err)
		return
	}
	page.FilteredBy = strings.Join(summary, " · ")
	p.render(c, status, "audit", page)
}

// auditActionNames name the actions for people: the action filter's
// choices and the page's "filtered by" line say these, not the keys
// (docs/pages.md).
var auditActionNames = map[string]string{
	"campaign.create": "campaign created", "campaign.update": "campaign renamed", "campaign.pause": "campaign paused",
	"campaign.resume": "campaign resumed", "campaign.delete": "campaign deleted", "template.delete": "template deleted",
	"template.create": "template created", "template.update": "template changed",
	"template.pause": "template paused", "template.resume": "template resumed", "template.archive": "template archived",
	"campaign.budget": "campaign budget changed",
	"template.stock":  "stock added", "coupon.hold": "coupon held", "coupon.confirm": "hold confirmed",
	"coupon.release": "hold released", "coupon.hold_expire": "hold expired", "coupon.refund": "coupon refunded",
	"coupon.redeem": "coupon redeemed at the till",
	"coupon.revoke": "coupon revoked", "coupon.return_stock": "stock returned to the pool",
	"order.return": "partial return recorded", "reconcile.repair": "counters repaired", "token.create": "token created",
	"token.revoke": "token revoked", "user.create": "user created", "webhook.create": "webhook registered",
	"webhook.update": "webhook changed", "webhook.delete": "webhook deleted", "webhook.disable": "webhook disabled",
	"webhook.resend": "delivery sent again", "webhook.test": "test event sent",
}

// auditActionName names an action, or a kind of them ("coupon.": "every
// coupon action"), in words.
func auditActionName(a string) string {
	if kind, ok := strings.CutSuffix(a, "."); ok {
		return "every " + kind + " action"
	}
	if n, ok := auditActionNames[a]; ok {
		return n
	}
	return strings.ReplaceAll(strings.ReplaceAll(a, ".", " "), "_", " ")
}

// auditSummary says the filter in words: "Actor: alice · Action: coupon
// revoked · Template: Summer (#12)"; templates and campaigns by name.
func (p *Pages) auditSummary(c *gin.Context, f auditFilterForm) ([]string, error) {
	var out []string
	if f.Actor != "" {
		out = append(out, "Actor: "+f.Actor)
	}
	if f.Action != "" {
		out = append(out, "Action: "+auditActionName(f.Action))
	}
	if f.Target != "" {
		kind, id, _ := strings.Cut(f.Target, ":")
		n, numErr := strconv.ParseInt(id, 10, 64)
		var name string
		switch {
		case kind == "template" && numErr == nil:
			t, err := p.core.GetTemplate(c.Request.Context(), n)
			if err != nil && !models.IsCode(err, models.CodeNotFound) {
				return nil, err
			}
			if t != nil {
				name = t.Name + " "
			}
			out = append(out, fmt.Sprintf("Template: %s(#%d)", name, n))
		case kind == "campaign" && numErr == nil:
			cp, err := p.core.GetCampaign(c.Request.Context(), n)
			if err != nil && !models.IsCode(err, models.CodeNotFound) {
				return nil, err
			}
			if cp != nil {
				name = cp.Name + " "
			}
			out = append(out, fmt.Sprintf("Campaign: %s(#%d)", name, n))
		case !strings.Contains(f.Target, ":"):
			out = append(out, "Coupon: "+f.Target)
		default:
			out = append(out, "Object: "+auditObject(f.Target, nil).Text)
		}
	}
	if f.From != "" {
		out = append(out, "From: "+f.From)
	}
	if f.To != "" {
		out = append(out, "To: "+f.To)
	}
	return out, nil
}

// bar is the audit page's filter bar.
func (f auditFilterForm) bar() filterBar {
	actions := []filterOption{{"", "anything"}}
	for _, a := range auditActions() {
		actions = append(actions, filterOption{a, auditActionName(a)})
	}
	return filterBar{Action: "/admin/audit", Clear: true, Submit: "Filter", Errors: f.Errors, Fields: []filterField{
		{Name: "actor", ID: "f-actor", Label: "Who", Type: "text", Value: f.Actor, Placeholder: "anyone"},
		{Name: "action", ID: "f-action", Label: "What", Type: "select", Value: f.Action, Options: actions},
		{Name: "target", ID: "f-target", Label: "Object", Hint: "coupon code or template:5", Type: "text", Value: f.Target,
			Verbatim: true},
		{Name: "from", ID: "f-from", Label: "From (UTC)", Type: "date", Value: f.From},
		{Name: "to", ID: "f-to", Label: "To (UTC)", Type: "date", Value: f.To},
	}}
}

// formDay reads a date field (YYYY-MM-DD, UTC); blank is the zero time.
func formDay(errs formErrors, field, value string) time.Time {
	value = strings.TrimSpace(value)
	if value == "" {
		return time.Time{}
	}
	d, err := time.ParseInLocation("2006-01-02", value, time.UTC)
	switch {
	case err != nil:
		errs.add(field, "Enter a day, such as 2026-03-01.")
	case models.CheckDate(field, d) != nil:
		errs.add(field, dateRangeMsg)
	}
	return d
}

// auditActions are the choices of the action filter: each kind of object
// ("coupon." for all of them), then each action.
func auditActions() []string {
	kinds := map[string]bool{}
	var out []string
	for a := range auditVerbs {
		out = append(out, a)
		kind, _, _ := strings.Cut(a, ".")
		kinds[kind+"."] = true
	}
	for k := range kinds {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
