package pages

import (
	"net/http"

	"couponsvc/models"

	"github.com/gin-gonic/gin"
)

// webhookPage is the data of webhook.html.
type webhookPage struct {
	basePage
	Endpoint *models.WebhookEndpoint
	Attempts []models.WebhookAttempt
}

// showWebhook shows an endpoint and its delivery log (time, event, status,
// answer code, duration), newest first, with a resend button each.
func (p *Pages) showWebhook(c *gin.Context) {
	id, ok := p.pathID(c, "webhook")
	if !ok {
		return
	}
	ep, err := p.events.GetWebhook(c.Request.Context(), id)
	if models.ErrorCode(err) == models.CodeNotFound {
		p.notFound(c, "webhook")
		return
	}
	if err != nil {
		p.fail(c, err)
		return
	}
	log, err := p.events.ListWebhookAttempts(c.Request.Context(), id, 200)
	if err != nil {
		p.fail(c, err)
		return
	}
	p.render(c, http.StatusOK, "webhook", &webhookPage{basePage: basePage{Title: "Webhook " + ep.URL, Nav: "webhooks"},
		Endpoint: ep, Attempts: log})
}
