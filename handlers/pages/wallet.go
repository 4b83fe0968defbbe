package pages

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"

	"github.com/gin-gonic/gin"
)

// walletPage is the data of wallet.html.
type walletPage struct {
	basePage
	Groups []walletGroup
	Count  int
}

type walletGroup struct {
	Title   string
	Status  string
	Coupons []walletCoupon
}

type walletCoupon struct {
	models.CouponView
	Template models.Template
	// NotYet is set for an issued coupon whose validity has not started.
	NotYet bool
	// Expires says in words how long an issued coupon is still valid
	// ("expires in 3 days").
	Expires string
	// Reason is what the shopper is told about a revoke: the public reason
	// the admin chose, never the admin's note.
	Reason string
	// NameIsValue is set when the template's name says the value: it is
	// then the coupon's value line (see restatesValue).
	NameIsValue bool
}

// showWallet shows the logged-in shopper's own coupons, grouped by state and
// each group sorted by expiry, soonest first: a compact list of value,
// expiry and code, whose QR code opens full screen on a tap (see
// docs/pages.md). The shopper is taken from the session only: there is no id
// in the address to change.
func (p *Pages) showWallet(c *gin.Context) {
	ctx := c.Request.Context()
	pr := web.Principal(c)
	coupons, err := p.core.ListUserCoupons(ctx, pr.UserID)
	if err != nil {
		p.fail(c, err)
		return
	}
	tmpl, err := p.templatesByID(ctx)
	if err != nil {
		p.fail(c, err)
		return
	}
	var revoked []int64
	for _, cp := range coupons {
		if cp.Status == models.CouponRevoked {
			revoked = append(revoked, cp.ID)
		}
	}
	reasons, err := p.claimer.PublicRevokeReasons(ctx, revoked)
	if err != nil {
		p.fail(c, err)
		return
	}
	groups := []walletGroup{
		{Title: statusWord(models.CouponIssued), Status: models.CouponIssued},
		{Title: statusWord(models.CouponHeld), Status: models.CouponHeld},
		{Title: statusWord(models.CouponUsed), Status: models.CouponUsed},
		{Title: statusWord(models.CouponExpired), Status: models.CouponExpired},
		{Title: statusWord(models.CouponRevoked), Status: models.CouponRevoked},
	}
	now := p.now()
	for _, cp := range coupons {
		for i := range groups {
			if groups[i].Status == cp.Status {
				wc := walletCoupon{CouponView: cp, Template: tmpl[cp.TemplateID],
					NotYet: cp.Status == models.CouponIssued && now.Before(cp.ValidFrom), Reason: reasons[cp.ID]}
				wc.NameIsValue = p.restatesValue(wc.Template)
				if cp.Status == models.CouponIssued {
					wc.Expires = expiresIn(now, cp.ValidUntil, p.loc)
				}
				groups[i].Coupons = append(groups[i].Coupons, wc)
			}
		}
	}
	page := &walletPage{basePage: basePage{Title: "My wallet", Nav: "wallet"}, Count: len(coupons)}
	for _, g := range groups {
		if len(g.Coupons) > 0 {
			slices.SortStableFunc(g.Coupons, func(a, b walletCoupon) int {
				return cmp.Or(a.ValidUntil.Compare(b.ValidUntil), cmp.Compare(a.Code, b.Code))
			})
			page.Groups = append(page.Groups, g)
		}
	}
	p.render(c, http.StatusOK, "wallet", page)
}

// expiresIn says how long until a coupon expires, counted in calendar days
// of the deployment's zone (docs/time.md), the way a coupon "valid N days"
// is valid to the end of its Nth day: "expires in 3 days", "expires
// tomorrow", and on its last day the hours or minutes left.
func expiresIn(now, until time.Time, loc *time.Location) string {
	d := until.Sub(now)
	if d <= 0 {
		return "expired"
	}
	days := calendarDays(now.In(loc), until.Add(-time.Nanosecond).In(loc))
	switch {
	case days >= 2:
		return fmt.Sprintf("expires in %d days", days)
	case days == 1:
		return "expires tomorrow"
	case d >= 2*time.Hour:
		return fmt.Sprintf("expires in %d hours", int(d/time.Hour))
	case d >= 2*time.Minute:
		return fmt.Sprintf("expires in %d minutes", int(d/time.Minute))
	}
	return "expires in a minute"
}

// calendarDays counts the days from a's date to b's, each in its own zone.
func calendarDays(a, b time.Time) int {
	da := time.Date(a.Year(), a.Month(), a.Day(), 0, 0, 0, 0, time.UTC)
	db := time.Date(b.Year(), b.Month(), b.Day(), 0, 0, 0, 0, time.UTC)
	return int(db.Sub(da) / (24 * time.Hour))
}

// templatesByID reads every template (offered or not: a wallet keeps the
// coupons of templates no longer offered), keyed by id.
func (p *Pages) templatesByID(ctx context.Context) (map[int64]models.Template, error) {
	views, err := p.core.ListTemplates(ctx, false)
	out := make(map[int64]models.Template, len(views))
	for _, v := range views {
		out[v.ID] = v.Template
	}
	return out, err
}
