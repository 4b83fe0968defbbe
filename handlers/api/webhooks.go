package api

import (
	"net/http"
	"strconv"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/events"

	"github.com/gin-gonic/gin"
)

type createWebhookRequest struct {
	URL         *string  `json:"url" binding:"required" schema:"webhook_url" doc:"http or https; loopback, private and link-local addresses are refused unless COUPON_WEBHOOK_ALLOW_PRIVATE=1"`
	Secret      *string  `json:"secret" schema:"webhook_secret" doc:"at most 200 characters, at least 16 of them not whitespace, none at either end; made when left out (shown once in the answer)"`
	EventTypes  []string `json:"event_types" schema:"event_types" doc:"the event types to send (docs/events.md); empty or left out: every type"`
	Description *string  `json:"description" schema:"webhook_description" doc:"at most 200 characters on one line"`
}

type updateWebhookRequest struct {
	URL         *string   `json:"url" schema:"webhook_url" doc:"http or https; refused on a private address as at registration"`
	Secret      *string   `json:"secret" schema:"webhook_secret" doc:"at most 200 characters, at least 16 of them not whitespace, none at either end"`
	EventTypes  *[]string `json:"event_types" schema:"event_types" doc:"the event types to send; empty: every type"`
	Description *string   `json:"description" schema:"webhook_description" doc:"at most 200 characters on one line"`
	Enabled     *bool     `json:"enabled" doc:"true enables a disabled endpoint again (its failure time cleared)"`
}

// createWebhook registers a webhook endpoint; its secret is in this answer
// only.
func (s *Server) createWebhook(c *gin.Context) {
	var req createWebhookRequest
	if !web.BindJSON(c, &req) {
		return
	}
	out, err := s.events.CreateWebhook(c.Request.Context(), web.Principal(c).Name, events.WebhookInput{
		URL: req.URL, Secret: req.Secret, EventTypes: req.EventTypes, Description: req.Description})
	if err != nil {
		web.RespondError(c, err)
		return
	}
	web.Respond(c, http.StatusCreated, "ok", webhookCreatedAnswer{CreatedWebhook: *out})
}

// listWebhooks lists the endpoints without their secrets.
func (s *Server) listWebhooks(c *gin.Context) {
	after, limit, ok := pageQuery(c)
	if !ok {
		return
	}
	eps, err := s.events.ListWebhooks(c.Request.Context())
	page, next := pageOf(eps, func(x *models.WebhookEndpoint) int64 { return x.ID }, after, limit)
	web.Answer(c, err, http.StatusOK, "ok", endpointsAnswer{Endpoints: page, Next: Next{next}})
}

// getWebhook shows one endpoint.
func (s *Server) getWebhook(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	ep, err := s.events.GetWebhook(c.Request.Context(), id)
	web.Answer(c, err, http.StatusOK, "ok", endpointAnswer{Endpoint: valueOf(ep)})
}

// updateWebhook changes an endpoint; fields left out stay.
func (s *Server) updateWebhook(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	var req updateWebhookRequest
	if !web.BindJSON(c, &req) {
		return
	}
	in := events.WebhookInput{URL: req.URL, Secret: req.Secret, Description: req.Description, Enabled: req.Enabled}
	if req.EventTypes != nil {
		in.EventTypes = append([]string{}, *req.EventTypes...)
	}
	ep, err := s.events.UpdateWebhook(c.Request.Context(), web.Principal(c).Name, id, in)
	web.Answer(c, err, http.StatusOK, "ok", endpointAnswer{Endpoint: valueOf(ep)})
}

// deleteWebhook removes an endpoint with its deliveries and their log.
func (s *Server) deleteWebhook(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	err := s.events.DeleteWebhook(c.Request.Context(), web.Principal(c).Name, id)
	web.Answer(c, err, http.StatusOK, "ok", web.NoPayload{})
}

// listWebhookAttempts answers a page of an endpoint's delivery log, newest
// first (docs/paging.md).
func (s *Server) listWebhookAttempts(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	after, limit, ok := pageQuery(c)
	if !ok {
		return
	}
	log, next, err := s.events.ListWebhookAttempts(c.Request.Context(), id, after, limit)
	web.Answer(c, err, http.StatusOK, "ok", attemptsAnswer{Attempts: log, Next: Next{next}})
}

// resendDelivery sends a delivery again, with the same event id.
func (s *Server) resendDelivery(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	did, ok := web.PathID(c, "delivery_id")
	if !ok {
		return
	}
	d, err := s.events.ResendDelivery(c.Request.Context(), web.Principal(c).Name, id, did)
	web.Answer(c, err, http.StatusOK, "ok", deliveryAnswer{Delivery: valueOf(d)})
}

// listEvents answers a page of the pull feed.
func (s *Server) listEvents(c *gin.Context) {
	after, ok := queryInt(c, "after", 0, 0, maxAfter)
	if !ok {
		return
	}
	limit, ok := queryInt(c, "limit", 100, 1, events.MaxFeedLimit)
	if !ok {
		return
	}
	switch from := c.Query("from"); {
	case from == "latest" && c.Query("after") != "":
		web.RespondError(c, models.Invalid("from", "cannot go with after: from=latest starts the feed at its newest id"))
		return
	case from == "latest":
		latest, err := s.events.LatestEventID(c.Request.Context())
		web.Answer(c, err, http.StatusOK, "ok", eventsAnswer{EventPage: events.EventPage{Events: []models.Event{}, Next: latest}})
		return
	case from != "":
		web.RespondError(c, models.Invalid("from", "must be latest"))
		return
	}
	page, err := s.events.ListEvents(c.Request.Context(), int64(after), limit)
	if err != nil {
		web.RespondError(c, err)
		return
	}
	web.Respond(c, http.StatusOK, "ok", eventsAnswer{EventPage: *page})
}

// queryInt reads an optional whole-number query parameter within [lo, hi],
// answering 400 naming it when it is not one.
func queryInt(c *gin.Context, name string, def, lo, hi int) (int, bool) {
	v := c.Query(name)
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		web.RespondError(c, models.Invalid(name, "must be a whole number from %d to %d", lo, hi))
		return 0, false
	}
	return n, true
}
