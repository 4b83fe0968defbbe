package pages

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"

	"github.com/gin-gonic/gin"
)

// campaignForm is the create form of a campaign, as typed.
type campaignForm struct {
	Name, Budget, Currency string
	// Token names this filling of the form: sent twice, it creates one
	// campaign (createOnce).
	Token  string
	Errors formErrors
}

// newCampaignPage is the data of campaign_new.html.
type newCampaignPage struct {
	basePage
	Form campaignForm
	// Currency is the deployment's, a campaign's when the form leaves it empty.
	Currency string
}

var campaignFields = map[string]string{"name": "name", "budget_cents": "budget", "currency": "currency"}

// campaignErrors puts a service's error beside each field of a campaign
// form, in the form's words; a field with a message already keeps it. It
// reports whether err was one the form can show.
func campaignErrors(errs formErrors, err error) bool {
	fresh := formErrors{}
	if !fresh.fromError(err, campaignFields) {
		return false
	}
	if _, bad := fresh["budget"]; bad {
		fresh["budget"] = "Enter the budget, or leave it empty for no budget."
		if models.IsCode(err, models.CodeBudgetExhausted) {
			fresh["budget"] = "Below what this campaign's coupons have already taken: enter a larger budget, or leave it empty for no budget."
		}
	}
	for field, msg := range fresh {
		errs.add(field, msg)
	}
	return true
}

// showNewCampaign shows an empty campaign form.
func (p *Pages) showNewCampaign(c *gin.Context) {
	p.render(c, http.StatusOK, "campaign_new", &newCampaignPage{basePage: basePage{Title: "New campaign", Nav: "admin"},
		Form: campaignForm{Token: newFormToken(), Errors: formErrors{}}, Currency: p.money.code})
}

// createCampaign creates a campaign and goes on to its first template.
func (p *Pages) createCampaign(c *gin.Context) {
	f := campaignForm{Name: c.PostForm("name"), Budget: c.PostForm("budget"),
		Currency: strings.ToUpper(strings.TrimSpace(c.PostForm("currency"))), Token: formToken(c), Errors: formErrors{}}
	if f.Token == "" {
		f.Token = newFormToken()
	}
	digits := models.CurrencyDigits(f.Currency)
	if f.Currency == "" {
		digits = p.money.digits
	}
	handleForm(p, c, formPost[models.Campaign]{errs: f.Errors,
		read: func() models.Campaign {
			return models.Campaign{Name: f.Name, Currency: f.Currency,
				BudgetCents: formMoneyDigits(f.Errors, "budget", f.Budget, false, digits)}
		},
		// Name every mistake in this one answer, not only the budget's.
		recheck: func(camp models.Campaign) error { return camp.Validate() },
		act: func(camp models.Campaign) (outcome, error) {
			return p.createOnce(c, formToken(c), func() (outcome, error) {
				out, err := p.admin.CreateCampaign(c.Request.Context(), web.Principal(c).Name, camp)
				if err != nil {
					return outcome{}, err
				}
				return done(fmt.Sprintf("Created the campaign “%s”. Now add its first coupon template.", out.Name),
					fmt.Sprintf("/admin/templates/new?campaign=%d", out.ID)), nil
			})
		},
		refused: func(_ models.Campaign, err error) bool { return campaignErrors(f.Errors, err) },
		show: func(status int) {
			p.render(c, status, "campaign_new", &newCampaignPage{basePage: basePage{Title: "New campaign", Nav: "admin"}, Form: f,
				Currency: p.money.code})
		},
	})
}
