package pages

import (
	"net/http"

	"github.com/couponsvc/couponsvc/models"

	"github.com/gin-gonic/gin"
)

// webhookForm is the create form of a webhook endpoint, as typed.
type webhookForm struct {
	URL, Description string
	Types            map[string]bool
	// Token names this filling of the form (createOnce).
	Token  string
	Errors formErrors
}

// webhooksPage is the data of webhooks.html. Created is the endpoint a
// create went to (the list's "made" parameter); Secret is its signing
// secret, set on the first showing only: it is never shown again.
type webhooksPage struct {
	basePage
	Endpoints  []models.WebhookEndpoint
	EventTypes []string
	Form       webhookForm
	Created    *models.WebhookEndpoint
	Secret     string
}

// showWebhooks lists the webhook endpoints with a delete button each, and
// the form that registers one.
func (p *Pages) showWebhooks(c *gin.Context) {
	p.renderWebhooks(c, http.StatusOK, webhookForm{Types: map[string]bool{}, Token: newFormToken(), Errors: formErrors{}})
}

// renderWebhooks shows the list with the form f; an endpoint just
// registered (the "made" parameter) is named at the top, with its signing
// secret the first time.
func (p *Pages) renderWebhooks(c *gin.Context, status int, f webhookForm) {
	eps, err := p.events.ListWebhooks(c.Request.Context())
	if err != nil {
		p.fail(c, err)
		return
	}
	page := &webhooksPage{basePage: basePage{Title: "Webhooks", Nav: "webhooks"}, Endpoints: eps, EventTypes: models.EventTypes, Form: f}
	if made := madeID(c); made > 0 {
		for i := range eps {
			if eps[i].ID == made {
				page.Created, page.Secret = &eps[i], p.takeSecret(c, "webhook", made)
			}
		}
	}
	p.render(c, status, "webhooks", page)
}
