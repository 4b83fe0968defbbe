package pages

import (
	"fmt"
	"strings"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/services/events"

	"github.com/gin-gonic/gin"
)

var webhookFields = map[string]string{"url": "url", "event_types": "types", "description": "description"}

// createWebhook registers an endpoint and goes to the list, which shows its
// signing secret this once (keepSecret). The form's token makes a second
// send register nothing more.
func (p *Pages) createWebhook(c *gin.Context) {
	f := webhookForm{URL: strings.TrimSpace(c.PostForm("url")), Description: c.PostForm("description"),
		Types: map[string]bool{}, Token: postedOrNewToken(c), Errors: formErrors{}}
	handleForm(p, c, formPost[[]string]{errs: f.Errors,
		read: func() []string {
			types := c.PostFormArray("event_types")
			for _, t := range types {
				f.Types[t] = true
			}
			if f.URL == "" {
				f.Errors.add("url", "Enter the address to send the events to, such as https://example.com/hooks/coupons.")
			}
			return types
		},
		// The service's check of the other fields too, so that one answer
		// names every mistake (docs/result-codes.md, "fields").
		recheck: func(types []string) error {
			return p.events.CheckWebhook(c.Request.Context(), events.WebhookInput{
				URL: &f.URL, EventTypes: types, Description: &f.Description})
		},
		act: func(types []string) (outcome, error) {
			return p.createOnce(c, formToken(c), func() (outcome, error) {
				out, err := p.events.CreateWebhook(c.Request.Context(), web.Principal(c).Name, events.WebhookInput{
					URL: &f.URL, EventTypes: types, Description: &f.Description})
				if err != nil {
					return outcome{}, err
				}
				p.keepSecret(c, "webhook", out.Endpoint.ID, out.Secret)
				return outcome{to: fmt.Sprintf("/admin/webhooks?made=%d#webhook-created", out.Endpoint.ID)}, nil
			})
		},
		refused: func(_ []string, err error) bool { return f.Errors.fromError(err, webhookFields) },
		show:    func(status int) { p.renderWebhooks(c, status, f) },
	})
}
