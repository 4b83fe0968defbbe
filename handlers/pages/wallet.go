package pages

import (
	"net/http"

	"couponsvc/handlers/web"
	"couponsvc/models"

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
}

// showWallet shows the logged-in shopper's own coupons, grouped by state. The
// shopper is taken from the session only: there is no id in the address to
// change.
func (p *Pages) showWallet(c *gin.Context) {
	ctx := c.Request.Context()
	pr := web.Principal(c)
	coupons, err := p.svc.ListUserCoupons(ctx, pr.UserID)
	if err != nil {
		p.fail(c, err)
		return
	}
	views, err := p.svc.ListTemplates(ctx, false)
	if err != nil {
		p.fail(c, err)
		return
	}
	tmpl := map[int64]models.Template{}
	for _, v := range views {
		tmpl[v.ID] = v.Template
	}
	groups := []walletGroup{
		{Title: "Ready to use", Status: models.CouponIssued},
		{Title: "Reserved for an order", Status: models.CouponHeld},
		{Title: "Used", Status: models.CouponUsed},
		{Title: "Expired", Status: models.CouponExpired},
		{Title: "Revoked", Status: models.CouponRevoked},
	}
	now := p.now()
	for _, cp := range coupons {
		for i := range groups {
			if groups[i].Status == cp.Status {
				groups[i].Coupons = append(groups[i].Coupons, walletCoupon{CouponView: cp, Template: tmpl[cp.TemplateID],
					NotYet: cp.Status == models.CouponIssued && now.Before(cp.ValidFrom)})
			}
		}
	}
	page := &walletPage{basePage: basePage{Title: "My wallet", Nav: "wallet"}, Count: len(coupons)}
	for _, g := range groups {
		if len(g.Coupons) > 0 {
			page.Groups = append(page.Groups, g)
		}
	}
	p.render(c, http.StatusOK, "wallet", page)
}
