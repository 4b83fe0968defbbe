package pages

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/couponsvc/couponsvc/models"

	"github.com/gin-gonic/gin"
)

// webhookPage is the data of webhook.html.
type webhookPage struct {
	basePage
	Endpoint *models.WebhookEndpoint
	Attempts []webhookAttempt
}

// webhookAttempt is a line of the delivery log with the payload it sent,
// indented for reading ("" when the event was pruned).
type webhookAttempt struct {
	models.WebhookAttempt
	Payload string
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
	log, _, err := p.events.ListWebhookAttempts(c.Request.Context(), id, 0, 200)
	if err != nil {
		p.fail(c, err)
		return
	}
	ids := make([]int64, len(log))
	for i, a := range log {
		ids[i] = a.EventID
	}
	payloads, err := p.events.EventPayloads(c.Request.Context(), ids)
	if err != nil {
		p.fail(c, err)
		return
	}
	attempts := make([]webhookAttempt, len(log))
	for i, a := range log {
		attempts[i] = webhookAttempt{WebhookAttempt: a}
		if data, ok := payloads[a.EventID]; ok {
			var out bytes.Buffer
			if json.Indent(&out, data, "", "  ") == nil {
				attempts[i].Payload = out.String()
			}
		}
	}
	p.render(c, http.StatusOK, "webhook", &webhookPage{basePage: basePage{Title: "Webhook " + ep.URL, Nav: "webhooks"},
		Endpoint: ep, Attempts: attempts})
}
