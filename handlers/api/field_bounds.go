package api

import (
	"couponsvc/handlers/web"
	"couponsvc/services/checkout"
	"couponsvc/services/codes"
	"couponsvc/services/events"
)

// The request bounds the services enforce, named by the schema:"..." tags of
// the requests, from the same constants as the validation; lengths count
// characters, as maxLength does.
var _ = web.AddFieldSchemas(map[string]map[string]any{
	"webhook_description": {"maxLength": events.MaxDescriptionChars},
	"webhook_secret":      {"maxLength": events.MaxSecretChars},
	"generate_count":      {"minimum": 1, "maximum": codes.MaxGenerateCount},
	"hold_ttl":            {"minimum": checkout.MinHoldTTL, "maximum": checkout.MaxHoldTTL},
	"coupon_codes":        {"minItems": 1, "maxItems": checkout.DefaultMaxCouponsPerOrder},
	"issue_user_ids":      {"minItems": 1, "maxItems": codes.MaxIssueUsers},
})
