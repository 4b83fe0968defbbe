package api

import (
	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/codes"
	"github.com/couponsvc/couponsvc/services/events"
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
	"coupon_codes":        {"minItems": 1, "maxItems": checkout.DefaultMaxCouponsPerOrder, "items": web.FieldSchema("checkout_code")},
	"issue_user_ids":      {"minItems": 1, "maxItems": codes.MaxIssueUsers, "items": web.FieldSchema("user_id")},
	"cart_lines":          {"minItems": 1, "maxItems": checkout.MaxCartLines},
	"cart_id":             {"type": "string", "minLength": 1, "maxLength": checkout.MaxCartIDLen, "pattern": web.PrintablePattern, "description": "1-64 printable characters"},
	"product_id":          {"type": "string", "maxLength": checkout.MaxCartIDLen, "pattern": web.PrintablePattern, "description": "0-64 printable characters"},
	"category_ids": {"maxItems": checkout.MaxLineCategories,
		"items": map[string]any{"type": "string", "minLength": 1, "maxLength": checkout.MaxCartIDLen, "pattern": web.PrintablePattern}},
	"line_quantity": {"minimum": 1, "maximum": checkout.MaxLineQuantity},
	"channel":       {"enum": models.Channels},
	"orders_count":  {"minimum": 0, "maximum": checkout.MaxOrdersCount},
	"customer_tags": {"maxItems": checkout.MaxCustomerTags,
		"items": map[string]any{"type": "string", "minLength": 1, "maxLength": checkout.MaxTagLen, "pattern": web.PrintablePattern}},
	"webhook_url": {"minLength": 1, "maxLength": events.MaxURLBytes, "pattern": webhookURLPattern,
		"description": "an absolute http or https URL of printable ASCII, without user info or fragment"},
})

// webhookURLPattern is an absolute http or https URL of printable ASCII
// (so that maxLength, in characters, is the bound in bytes): a host without
// user info (no @ before the path) and no fragment (no #). That the host is
// public is checked when it resolves, as the description says.
const webhookURLPattern = `^[Hh][Tt][Tt][Pp][Ss]?://[!-"$-.0->A-~]+([/?][!-"$-~]*)?$`

// DocumentBounds are the request bounds this server's services were
// configured with, set over the defaults in the document it serves: the
// cap on an order's coupons (never under the default) bounds coupon_codes (docs/checkout.md, "The cap
// on an order's coupons").
func (s *Server) DocumentBounds() map[string]map[string]any {
	return map[string]map[string]any{"coupon_codes": {"minItems": 1, "maxItems": s.checkout.MaxCouponCodes()}}
}
