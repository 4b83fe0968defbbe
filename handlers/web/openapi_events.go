package web

import (
	"reflect"

	"github.com/couponsvc/couponsvc/models"
)

// eventData is the data type of each event type (docs/events.md).
func eventData(eventType string) reflect.Type {
	switch eventType {
	case models.EventCouponClaimed, models.EventCouponRedeemed, models.EventCouponRefunded, models.EventCouponRevoked,
		models.EventCouponHeld, models.EventCouponReleased, models.EventCouponHoldExpired:
		return reflect.TypeFor[models.CouponEvent]()
	case models.EventTemplateSoldOut, models.EventTemplatePaused, models.EventTemplateResumed, models.EventTemplateArchived:
		return reflect.TypeFor[models.TemplateEvent]()
	case models.EventCampaignBudgetExhausted:
		return reflect.TypeFor[models.BudgetEvent]()
	case models.EventOrderReturned:
		return reflect.TypeFor[models.OrderReturnEvent]()
	case models.EventWebhookTest:
		return reflect.TypeFor[models.WebhookTestEvent]()
	}
	panic("couponsvc: event type " + eventType + " has no data type in handlers/web/openapi_events.go") // a bug caught by any test
}

// eventWebhooks describes what a webhook endpoint receives: for each event
// type, a POST of the event (models.Event) whose data is that type's named
// schema. The document is OpenAPI 3.0 (the version code generators read),
// which has no webhooks object: the same shape as 3.1's stands under
// x-webhooks, and the data schemas are components, so a generated client
// has a type for each.
func eventWebhooks(cs *components) map[string]any {
	envelope := cs.named(reflect.TypeFor[models.Event](), false, false)
	hooks := map[string]any{}
	for _, typ := range models.EventTypes {
		data := cs.named(eventData(typ), false, false)
		schema := map[string]any{"allOf": []any{envelope, map[string]any{"type": "object", "properties": map[string]any{
			"type": map[string]any{"type": "string", "enum": []string{typ}},
			"data": data,
		}}}}
		hooks[typ] = map[string]any{"post": map[string]any{
			"summary":     "A " + typ + " event",
			"operationId": "on" + eventOperationName(typ),
			"security":    []any{}, // the signature header proves the sender
			"parameters": []any{Param{Name: "Couponsvc-Signature", Required: true,
				Description: "t=<unix seconds>,v1=<hex HMAC-SHA256(secret, \"<t>.<body>\")> (github.com/couponsvc/couponsvc/client/webhook verifies it)",
				Schema:      map[string]any{"type": "string"}}.parameter("header")},
			"requestBody": map[string]any{"required": true,
				"content": map[string]any{"application/json": map[string]any{"schema": schema}}},
			"responses": map[string]any{"2XX": map[string]any{"description": "received: any 2xx within 10 s; anything else is retried"}},
		}}
	}
	return hooks
}

// eventOperationName turns "coupon.hold_expired" into "CouponHoldExpired".
func eventOperationName(typ string) string {
	out := []rune{}
	up := true
	for _, r := range typ {
		if r == '.' || r == '_' {
			up = true
			continue
		}
		if up && r >= 'a' && r <= 'z' {
			r -= 'a' - 'A'
		}
		up = false
		out = append(out, r)
	}
	return string(out)
}
