package api

import (
	"couponsvc/handlers/web"
	"couponsvc/services/checkout"
	"couponsvc/services/codes"
	"couponsvc/services/events"
)

// The request bounds the services enforce, named by the schema:"..." tags of
// the requests, from the same constants as the validation; lengths count
// characters, as maxLength does. Those a deployment configures are stated
// with their defaults here (the document made without a server, from which
// the client is generated) and with the configured values in the document a
// server serves (DocumentBounds).
var _ = web.AddFieldSchemas(map[string]map[string]any{
	"webhook_description": {"maxLength": events.MaxDescriptionChars},
	"webhook_secret":      {"maxLength": events.MaxSecretChars},
	"generate_count":      {"minimum": 1, "maximum": codes.MaxGenerateCount},
	"hold_ttl":            {"minimum": checkout.MinHoldTTL, "maximum": checkout.MaxHoldTTL},
	"coupon_codes":        {"minItems": 1, "maxItems": checkout.DefaultMaxCouponsPerOrder},
	"issue_user_ids":      {"minItems": 1, "maxItems": codes.MaxIssueUsers},
})

// DocumentBounds are the request bounds this server's services were
// configured with, set over the defaults in the document it serves: the
// cap on an order's coupons (never under the default) bounds coupon_codes (docs/checkout.md, "The cap
// on an order's coupons").
func (s *Server) DocumentBounds() map[string]map[string]any {
	return map[string]map[string]any{"coupon_codes": {"minItems": 1, "maxItems": s.checkout.MaxCouponCodes()}}
}
