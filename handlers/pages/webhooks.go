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
	Errors           formErrors
}

// webhooksPage is the data of webhooks.html. Secret is set once, on the
// answer to a create: it is never shown again.
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
	p.renderWebhooks(c, http.StatusOK, webhookForm{Types: map[string]bool{}, Errors: formErrors{}}, nil, "")
}

func (p *Pages) renderWebhooks(c *gin.Context, status int, f webhookForm, created *models.WebhookEndpoint, secret string) {
	eps, err := p.events.ListWebhooks(c.Request.Context())
	if err != nil {
		p.fail(c, err)
		return
	}
	p.render(c, status, "webhooks", &webhooksPage{basePage: basePage{Title: "Webhooks", Nav: "webhooks"},
		Endpoints: eps, EventTypes: models.EventTypes, Form: f, Created: created, Secret: secret})
}
