package pages

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/admin"
	"github.com/couponsvc/couponsvc/services/core"

	"github.com/gin-gonic/gin"
)

// couponsPage is the data of coupons.html: the coupons that match the
// filters, one page at a time; a coupon looked up by its code with its
// history; and the revoke form.
type couponsPage struct {
	basePage
	Filter    couponFilterForm
	Bar       filterBar
	Pager     pager
	List      admin.CouponPage
	Templates []core.TemplateView
	Found     *admin.CouponHistory
	Audit     []auditLine
	Revoke    revokeForm
}

// TemplateName names a template of the list by its name, or by its number
// when it is not among the page's templates.
func (pg *couponsPage) TemplateName(id int64) string {
	for _, t := range pg.Templates {
		if t.ID == id {
			return t.Name
		}
	}
	return fmt.Sprintf("#%d", id)
}

// couponFilterForm is the filter form of the coupon list, as typed.
type couponFilterForm struct {
	Template, User, Status, Code string
	Before                       int64
	Errors                       formErrors
}

// query is the filter as an address query, for the pager: encoded here,
// so that the page writes it as is.
func (f couponFilterForm) query() template.URL {
	q := url.Values{}
	for _, kv := range [][2]string{{"template", f.Template}, {"user", f.User}, {"status", f.Status}, {"code", f.Code}} {
		if kv[1] != "" {
			q.Set(kv[0], kv[1])
		}
	}
	return template.URL(q.Encode())
}

// bar is the coupon list's filter bar, offering the templates ts.
func (f couponFilterForm) bar(ts []core.TemplateView) filterBar {
	templates := []filterOption{{"", "any"}}
	for _, t := range ts {
		templates = append(templates, filterOption{strconv.FormatInt(t.ID, 10), fmt.Sprintf("%s (#%d)", t.Name, t.ID)})
	}
	statuses := []filterOption{{"", "any"}}
	for _, s := range []string{models.CouponIssued, models.CouponExpired, models.CouponHeld, models.CouponUsed, models.CouponRevoked} {
		statuses = append(statuses, filterOption{s, statusWord(s)})
	}
	return filterBar{Action: "/admin/coupons", Clear: true, Submit: "Find", Errors: f.Errors, Fields: []filterField{
		{Name: "template", ID: "f-template", Label: "Template", Type: "select", Value: f.Template, Options: templates},
		{Name: "user", ID: "f-user", Label: "Holder", Type: "text", Value: f.User, Placeholder: "anyone", Verbatim: true},
		{Name: "status", ID: "f-status", Label: "Status", Type: "select", Value: f.Status, Options: statuses},
		{Name: "code", ID: "lookup", Label: "Code", Type: "text", Value: f.Code, Code: true},
	}}
}

// revokeForm is the revoke form, as typed.
type revokeForm struct {
	Code, Reason string
	// PublicReason is the key of the reason the shopper is told
	// (models.RevokePublicReasons); Reason is the admin's internal note.
	PublicReason string
	ReturnStock  bool
	Errors       formErrors
}

// PublicReasons are the public reasons the form offers.
func (revokeForm) PublicReasons() []models.RevokePublicReason { return models.RevokePublicReasons }

var revokeFields = map[string]string{"code": "code", "coupon_code": "code", "reason": "reason", "public_reason": "public_reason"}

var couponFilterFields = map[string]string{"template_id": "template", "user_id": "user", "status": "status", "code": "code"}

// couponPageSize is how many coupons the list shows at once.
const couponPageSize = 50

// showCoupons lists coupons by template, holder, status or code; a code
// given shows that coupon with its history and the revoke form filled in.
func (p *Pages) showCoupons(c *gin.Context) {
	page := &couponsPage{basePage: basePage{Title: "Coupons", Nav: "coupons"}, Revoke: revokeForm{Errors: formErrors{}}}
	if !p.fillCoupons(c, page) {
		return
	}
	status := http.StatusOK
	if len(page.Filter.Errors) > 0 {
		status = http.StatusBadRequest
	}
	p.render(c, status, "coupons", page)
}

// fillCoupons reads the filters of the address and fills the list and the
// coupon found; it answers the error page and reports false on a fault.
func (p *Pages) fillCoupons(c *gin.Context, page *couponsPage) bool {
	ctx := c.Request.Context()
	f := couponFilterForm{Template: strings.TrimSpace(c.Query("template")), User: strings.TrimSpace(c.Query("user")),
		Status: c.Query("status"), Code: strings.TrimSpace(c.Query("code")), Errors: formErrors{}}
	f.Before, _ = strconv.ParseInt(c.Query("before"), 10, 64)
	page.Filter = f
	ts, err := p.core.ListTemplates(ctx, false)
	if err != nil {
		p.fail(c, err)
		return false
	}
	page.Templates = ts
	filter := admin.CouponFilter{UserID: f.User, Status: f.Status, Code: f.Code, Before: f.Before, Limit: couponPageSize}
	if f.Template != "" {
		filter.TemplateID = formInt(f.Errors, "template", f.Template, false)
	}
	list, err := p.admin.ListCoupons(ctx, filter)
	if err != nil {
		if !f.Errors.fromError(err, couponFilterFields) {
			p.fail(c, err)
			return false
		}
	}
	page.List = list
	page.Bar, page.Pager = f.bar(ts), newPager("/admin/coupons", f.query(), f.Before, list.Older)
	if f.Code != "" && len(f.Errors) == 0 {
		h, err := p.admin.GetCouponHistory(ctx, f.Code)
		switch {
		case err == nil:
			page.Found = h
			if page.Revoke.Code == "" {
				page.Revoke.Code = h.Coupon.Code
			}
			page.Audit = p.auditLines(h.Audit, map[int64]string{h.Coupon.ID: h.Coupon.Code})
		case models.IsCode(err, models.CodeNotFound):
			f.Errors.add("code", "No coupon has this code.")
		default:
			p.fail(c, err)
			return false
		}
	}
	return true
}
