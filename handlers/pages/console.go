package pages

import (
	"net/http"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/reports"

	"github.com/gin-gonic/gin"
)

// adminPage is the data of admin.html: every campaign with its budget and its
// templates with their figures, all read at At. The figures are shown as sums
// that add up, so the page's script refreshes them all at once, from a fresh
// copy of the page (app.js, liveRegions), never one by one.
type adminPage struct {
	basePage
	Campaigns []adminCampaign
	Totals    reports.TemplateFigures
	Templates int
	At        time.Time
}

type adminCampaign struct {
	models.Campaign
	Figures   reports.CampaignFigures
	Templates []adminTemplate
}

type adminTemplate struct {
	core.TemplateView
	Figures reports.TemplateFigures
	State   string
}

// showConsole shows the console's overview.
func (p *Pages) showConsole(c *gin.Context) {
	ctx := c.Request.Context()
	camps, err := p.core.ListCampaigns(ctx)
	if err != nil {
		p.fail(c, err)
		return
	}
	views, err := p.core.ListTemplates(ctx, false)
	if err != nil {
		p.fail(c, err)
		return
	}
	figs, err := p.reports.ListTemplateFigures(ctx)
	if err != nil {
		p.fail(c, err)
		return
	}
	campFigs, err := p.reports.ListCampaignFigures(ctx)
	if err != nil {
		p.fail(c, err)
		return
	}
	page := &adminPage{basePage: basePage{Title: "Console", Nav: "admin"}, Templates: len(views), At: p.now()}
	index := map[int64]int{}
	// Newest campaign first, as the templates come.
	for i := len(camps) - 1; i >= 0; i-- {
		index[camps[i].ID] = len(page.Campaigns)
		page.Campaigns = append(page.Campaigns, adminCampaign{Campaign: camps[i], Figures: campFigs[camps[i].ID]})
	}
	now := p.now()
	for _, v := range views {
		f := figs[v.ID]
		i, ok := index[v.CampaignID]
		var camp *models.Campaign
		if ok {
			camp = &page.Campaigns[i].Campaign
		}
		t := adminTemplate{TemplateView: v, Figures: f, State: templateState(v, camp, now)}
		page.Totals.Add(f)
		if ok {
			page.Campaigns[i].Templates = append(page.Campaigns[i].Templates, t)
		}
	}
	p.render(c, http.StatusOK, "admin", page)
}
