package pages

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/core"

	"github.com/gin-gonic/gin"
)

// Offer states on the shop page.
const (
	offerOpen     = "open"
	offerSoldOut  = "sold_out"
	offerUpcoming = "upcoming"
)

// shopPage is the data of shop.html.
type shopPage struct {
	basePage
	Campaigns []shopCampaign
	// Upcoming are the offers whose claims open later, soonest first: shown
	// last, saying when they open.
	Upcoming []shopOffer
	// CanClaim is true for a shopper; others see the offers without buttons.
	CanClaim bool
}

type shopCampaign struct {
	Name   string
	Offers []shopOffer
}

type shopOffer struct {
	core.TemplateView
	State string
	// Held is how many coupons of it count against the shopper's limit
	// (claimed, whatever became of them).
	Held int64
	// Usable is how many of them the shopper can use now or later: the
	// card's "You have N" (not the used, expired, revoked or held ones).
	Usable int64
	// NameIsValue is set when the name says the value: it is then the
	// card's value line (see restatesValue).
	NameIsValue bool
	// CanClaim and LoggedIn are the page's: whether the card has a claim
	// button, or a link to log in.
	CanClaim, LoggedIn bool
}

// AtLimit reports whether the shopper holds as many as they may.
func (o shopOffer) AtLimit() bool { return o.Held >= o.PerUserLimit }

// Shared reports whether the offer is a shared code: it is typed at
// checkout, where its coupon is claimed for the shopper, so its card shows
// the code and a link to the checkout instead of a claim button
// (docs/pages.md, "Shop"; docs/shared-codes.md).
func (o shopOffer) Shared() bool { return o.CodeMode == models.CodeModeShared }

// Automatic reports whether the offer is automatic: every cart it admits
// takes it at checkout, so its card has no claim button
// (docs/automatic-offers.md).
func (o shopOffer) Automatic() bool { return o.CodeMode == models.CodeModeAutomatic }

// showShop lists the coupons on offer, as the API's list does: open ones
// with a claim button, then sold out ones marked as such, by campaign; and
// last the ones whose claims open later, with the time they open. What takes
// no claims now and will not open by itself (paused, closed, past its
// validity) is not shown. See docs/pages.md.
func (p *Pages) showShop(c *gin.Context) {
	ctx := c.Request.Context()
	views, err := p.core.ListTemplates(ctx, true)
	if err != nil {
		p.fail(c, err)
		return
	}
	upcoming, err := p.checkout.ListUpcomingOffers(ctx)
	if err != nil {
		p.fail(c, err)
		return
	}
	camps, err := p.core.ListCampaigns(ctx)
	if err != nil {
		p.fail(c, err)
		return
	}
	pr := web.Principal(c)
	page := &shopPage{basePage: basePage{Title: "Coupons on offer", Nav: "shop", Poll: "shop"},
		CanClaim: pr != nil && pr.Role == models.RoleShopper}
	held, usable := map[int64]int64{}, map[int64]int64{}
	if page.CanClaim {
		coupons, err := p.core.ListUserCoupons(ctx, pr.UserID)
		if err != nil {
			p.fail(c, err)
			return
		}
		for _, cp := range coupons {
			if cp.UserOrdinal != nil {
				held[cp.TemplateID]++
			}
			if cp.Status == models.CouponIssued {
				usable[cp.TemplateID]++
			}
		}
	}
	names := map[int64]string{}
	for _, cm := range camps {
		names[cm.ID] = cm.Name
	}
	index := map[int64]int{}
	for _, v := range views {
		o := shopOffer{TemplateView: v, State: offerOpen, Held: held[v.ID], Usable: usable[v.ID], NameIsValue: p.restatesValue(v.Template),
			CanClaim: page.CanClaim, LoggedIn: pr != nil}
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
	for _, cm := range page.Campaigns {
		// Sold out ones after the open ones; the order is otherwise kept.
		slices.SortStableFunc(cm.Offers, func(a, b shopOffer) int {
			return cmp.Compare(boolRank(a.State != offerOpen), boolRank(b.State != offerOpen))
		})
	}
	for _, v := range upcoming {
		page.Upcoming = append(page.Upcoming, shopOffer{TemplateView: v, State: offerUpcoming, Held: held[v.ID], Usable: usable[v.ID],
			NameIsValue: p.restatesValue(v.Template), CanClaim: page.CanClaim, LoggedIn: pr != nil})
	}
	p.render(c, http.StatusOK, "shop", page)
}

// boolRank orders false before true.
func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// restatesValue reports whether a template's name already says its value
// ("$5 off your order" for $5.00 off; "15% off, up to $20" for 15% off up to
// $20.00), so that a card states the value once: such a name is the card's
// value line, and any other name goes under the value in words.
func (p *Pages) restatesValue(t models.Template) bool {
	if (t.AppliesTo != "" && t.AppliesTo != models.AppliesToOrder) || (t.Kind != models.KindFixed && t.Kind != models.KindPercent) {
		// Only the sentence of models.DescribeTemplate says what such a
		// coupon covers: a name is never trusted to.
		return false
	}
	if t.Kind == models.KindPercent {
		return strings.Contains(t.Name, fmt.Sprintf("%d%%", t.PercentOff)) && p.namesAmount(t.Name, t.MaxDiscountCents)
	}
	return p.namesAmount(t.Name, t.FaceValueCents)
}

// namesAmount reports whether name holds the amount: "$5.00", or "$5" for a
// whole amount.
func (p *Pages) namesAmount(name string, cents int64) bool {
	full := p.money.format(cents)
	return strings.Contains(name, full) || (cents%100 == 0 && containsFigure(name, strings.TrimSuffix(full, ".00")))
}

// containsFigure reports whether s holds fig not followed by another digit
// or a decimal point ("$5" is in "$5 off", not in "$50 off" or "$5.50 off").
func containsFigure(s, fig string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], fig)
		if j < 0 {
			return false
		}
		end := i + j + len(fig)
		if end == len(s) || !strings.ContainsRune("0123456789.,", rune(s[end])) {
			return true
		}
		i = end
	}
}
