package pages

import (
	"net/http"

	"couponsvc/handlers/web"
	"couponsvc/models"
	"couponsvc/services"

	"github.com/gin-gonic/gin"
)

// Offer states on the shop page.
const (
	offerOpen    = "open"
	offerSoldOut = "sold_out"
)

// shopPage is the data of shop.html.
type shopPage struct {
	basePage
	Campaigns []shopCampaign
	// CanClaim is true for a shopper; others see the offers without buttons.
	CanClaim bool
}

type shopCampaign struct {
	Name   string
	Offers []shopOffer
}

type shopOffer struct {
	services.TemplateView
	State string
	// Held is how many live coupons of it the shopper holds.
	Held int64
}

// showShop lists the coupons on offer, as the API's list does: open ones
// with a claim button, sold out ones marked as such. What takes no claims now
// (paused, not yet open, closed, past its validity) is not shown.
func (p *Pages) showShop(c *gin.Context) {
	ctx := c.Request.Context()
	views, err := p.svc.ListTemplates(ctx, true)
	if err != nil {
		p.fail(c, err)
		return
	}
	camps, err := p.svc.ListCampaigns(ctx)
	if err != nil {
		p.fail(c, err)
		return
	}
	pr := web.Principal(c)
	page := &shopPage{basePage: basePage{Title: "Coupons on offer", Nav: "shop", Poll: "shop"},
		CanClaim: pr != nil && pr.Role == models.RoleShopper}
	held := map[int64]int64{}
	if page.CanClaim {
		coupons, err := p.svc.ListUserCoupons(ctx, pr.UserID)
		if err != nil {
			p.fail(c, err)
			return
		}
		for _, cp := range coupons {
			if cp.UserOrdinal != nil {
				held[cp.TemplateID]++
			}
		}
	}
	names := map[int64]string{}
	for _, cm := range camps {
		names[cm.ID] = cm.Name
	}
	index := map[int64]int{}
	for _, v := range views {
		o := shopOffer{TemplateView: v, State: offerOpen, Held: held[v.ID]}
		if v.Remaining != nil && *v.Remaining <= 0 {
			o.State = offerSoldOut
		}
		i, ok := index[v.CampaignID]
		if !ok {
			i = len(page.Campaigns)
			index[v.CampaignID] = i
			page.Campaigns = append(page.Campaigns, shopCampaign{Name: names[v.CampaignID]})
		}
		page.Campaigns[i].Offers = append(page.Campaigns[i].Offers, o)
	}
	p.render(c, http.StatusOK, "shop", page)
}
