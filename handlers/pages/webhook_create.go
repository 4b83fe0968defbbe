package pages

import (
	"net/http"
	"strings"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/services/events"

	"github.com/gin-gonic/gin"
)

var webhookFields = map[string]string{"url": "url", "event_types": "types", "description": "description"}

// createWebhook registers an endpoint and shows its secret, this once (so
// it answers the page rather than redirecting).
func (p *Pages) createWebhook(c *gin.Context) {
	f := webhookForm{URL: strings.TrimSpace(c.PostForm("url")), Description: c.PostForm("description"),
		Types: map[string]bool{}, Errors: formErrors{}}
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
			out, err := p.events.CreateWebhook(c.Request.Context(), web.Principal(c).Name, events.WebhookInput{
				URL: &f.URL, EventTypes: types, Description: &f.Description})
			if err != nil {
				return outcome{}, err
			}
			// The secret is shown this once: the answer is the page, not a redirect.
			p.renderWebhooks(c, http.StatusCreated, webhookForm{Types: map[string]bool{}, Errors: formErrors{}}, &out.Endpoint, out.Secret)
			return outcome{}, nil
		},
		refused: func(_ []string, err error) bool { return f.Errors.fromError(err, webhookFields) },
		show:    func(status int) { p.renderWebhooks(c, status, f, nil, "") },
	})
}
