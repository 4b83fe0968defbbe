package handlers_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/handlers"
	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/codes"
	"github.com/couponsvc/couponsvc/services/events"
	"github.com/couponsvc/couponsvc/services/reports"
)

// kw is what a bound the server enforces must be in the document: schema
// keywords and their values, from the constants the validation uses.
type kw map[string]any

var (
	money        = kw{"minimum": 0, "maximum": models.MaxMoneyCents}
	amount       = kw{"minimum": 1, "maximum": models.MaxMoneyCents}
	currency     = kw{"minLength": 3, "maxLength": 3, "pattern": "^[A-Z]{3}$"}
	name         = kw{"minLength": 1, "maxLength": models.MaxNameRunes}
	reason       = kw{"minLength": 1, "maxLength": models.MaxReasonRunes}
	userID       = kw{"minLength": 1, "maxLength": models.MaxUserIDLen, "pattern": "^[A-Za-z0-9._:@-]+$"}
	orderID      = kw{"minLength": 1, "maxLength": models.MaxOrderIDLen, "pattern": "^[A-Za-z0-9._:@-]*[A-Za-z0-9_:@-][A-Za-z0-9._:@-]*$"}
	typedCode    = kw{"minLength": models.MinCodeLen, "maxLength": models.MaxTypedCodeLen, "pattern": fmt.Sprintf("^[- ]*([0-9A-Za-z][- ]*){%d,%d}$", models.MinCodeLen, models.MaxCodeLen)}
	cartLines    = kw{"minItems": 1, "maxItems": checkout.MaxCartLines}
	ordersCount  = kw{"minimum": 0, "maximum": checkout.MaxOrdersCount}
	customerTags = kw{"maxItems": checkout.MaxCustomerTags}
	customerTag  = kw{"minLength": 1, "maxLength": checkout.MaxTagLen, "pattern": web.PrintablePattern}
	cartID       = kw{"minLength": 1, "maxLength": checkout.MaxCartIDLen, "pattern": web.PrintablePattern}
	years        = kw{"pattern": web.YearPattern}
	targetList   = kw{"maxItems": models.MaxTargetEntries}
	targetEntry  = kw{"minLength": 1, "maxLength": models.MaxTargetEntryRune}
	codeList     = kw{"minItems": 1, "maxItems": checkout.DefaultMaxCouponsPerOrder}
	id           = kw{"minimum": 1}
	after        = kw{"minimum": 0, "maximum": int64(1) << 62, "format": "int64"}
	pageLimit    = kw{"minimum": 1, "maximum": 1000}
	key          = kw{"minLength": 1, "maxLength": web.MaxIdempotencyKeyLen, "pattern": "^[!-~]+$"}
	webhookURL   = kw{"minLength": 1, "maxLength": events.MaxURLBytes}
)

// init gives a template condition's target the bounds of the template's
// target: they are one type, and its rows are the target's under another
// prefix.
func init() {
	const from, to = "CreateTemplateRequest.target.", "CreateTemplateRequest.condition.target."
	for row, bounds := range requestBounds {
		if strings.HasPrefix(row, from) {
			requestBounds[to+strings.TrimPrefix(row, from)] = bounds
		}
	}
}

// requestBounds are the bounds the handlers and services enforce on every
// request property ("Schema.property", "Schema.property[]" for its items)
// and parameter ("METHOD /path in:name", or "* in:name" for every
// operation), which the document must carry as keywords. A property or
// parameter of a string, integer or array schema without a row here fails
// the test: say what bounds it.
var requestBounds = map[string]kw{
	"CreateTemplateRequest.eligibility":                   {"maxLength": models.MaxEligibilityRunes},
	"UpdateTemplateRequest.eligibility":                   {"maxLength": models.MaxEligibilityRunes},
	"HoldRequest.customer.orders_count":                   ordersCount,
	"HoldRequest.customer.tags":                           customerTags,
	"HoldRequest.customer.tags[]":                         customerTag,
	"RedeemRequest.customer.orders_count":                 ordersCount,
	"RedeemRequest.customer.tags":                         customerTags,
	"RedeemRequest.customer.tags[]":                       customerTag,
	"UsableRequest.customer.orders_count":                 ordersCount,
	"UsableRequest.customer.tags":                         customerTags,
	"UsableRequest.customer.tags[]":                       customerTag,
	"ValidateRequest.customer.orders_count":               ordersCount,
	"ValidateRequest.customer.tags":                       customerTags,
	"ValidateRequest.customer.tags[]":                     customerTag,
	"AddStockRequest.delta":                               {"minimum": 1, "maximum": models.MaxTotalStock},
	"AddStockRequest.reason":                              reason,
	"CartLine.category_ids":                               {"maxItems": checkout.MaxLineCategories},
	"CartLine.category_ids[]":                             cartID,
	"CartLine.line_id":                                    cartID,
	"CartLine.product_id":                                 {"maxLength": checkout.MaxCartIDLen, "pattern": web.PrintablePattern},
	"CartLine.quantity":                                   {"minimum": 1, "maximum": checkout.MaxLineQuantity},
	"CartLine.sku":                                        cartID,
	"CartLine.unit_price_cents":                           money,
	"CartLine.compare_at_price_cents":                     money,
	"ClaimRequest.user_id":                                userID,
	"ConfirmRequest.currency":                             currency,
	"ConfirmRequest.lines":                                cartLines,
	"ConfirmRequest.order_amount_cents":                   amount,
	"ConfirmRequest.shipping_cents":                       money,
	"CreateCampaignRequest.budget_cents":                  {"minimum": 0, "maximum": models.MaxBudgetCents},
	"UpdateCampaignRequest.budget_cents":                  {"minimum": 0, "maximum": models.MaxBudgetCents},
	"CreateCampaignRequest.per_customer_limit":            {"minimum": 0, "maximum": models.MaxPerCustomerLimit},
	"UpdateCampaignRequest.per_customer_limit":            {"minimum": 0, "maximum": models.MaxPerCustomerLimit},
	"CreateCampaignRequest.currency":                      currency,
	"CreateCampaignRequest.name":                          name,
	"ActionRequest.buy_quantity":                          {"minimum": 0, "maximum": models.MaxSetQuantity},
	"ActionRequest.face_value_cents":                      money,
	"ActionRequest.get_percent":                           {"minimum": 0, "maximum": 100},
	"ActionRequest.get_percent_bp":                        {"minimum": 0, "maximum": 10000},
	"ActionRequest.get_quantity":                          {"minimum": 0, "maximum": models.MaxSetQuantity},
	"ActionRequest.max_applications":                      {"minimum": 0, "maximum": models.MaxApplicationsCap},
	"ActionRequest.max_discount_cents":                    money,
	"ActionRequest.max_units_per_line":                    {"minimum": 0, "maximum": 1000000},
	"ActionRequest.max_units_per_order":                   {"minimum": 0, "maximum": 1000000},
	"ActionRequest.percent_off":                           {"minimum": 0, "maximum": 100},
	"ActionRequest.percent_off_bp":                        {"minimum": 0, "maximum": 10000},
	"ActionRequest.target.category_ids":                   targetList,
	"ActionRequest.target.category_ids[]":                 targetEntry,
	"ActionRequest.target.exclude_category_ids":           targetList,
	"ActionRequest.target.exclude_category_ids[]":         targetEntry,
	"ActionRequest.target.exclude_product_ids":            targetList,
	"ActionRequest.target.exclude_product_ids[]":          targetEntry,
	"ActionRequest.target.exclude_skus":                   targetList,
	"ActionRequest.target.exclude_skus[]":                 targetEntry,
	"ActionRequest.target.product_ids":                    targetList,
	"ActionRequest.target.product_ids[]":                  targetEntry,
	"ActionRequest.target.skus":                           targetList,
	"ActionRequest.target.skus[]":                         targetEntry,
	"ActionRequest.tiers":                                 {"minItems": 1, "maxItems": models.MaxTiers},
	"CreateTemplateRequest.actions":                       {"maxItems": models.MaxActions},
	"CreateTemplateRequest.buy_quantity":                  {"minimum": 0, "maximum": models.MaxSetQuantity},
	"CreateTemplateRequest.campaign_id":                   id,
	"CreateTemplateRequest.claim_ends_at":                 years,
	"CreateTemplateRequest.claim_starts_at":               years,
	"CreateTemplateRequest.currency":                      currency,
	"CreateTemplateRequest.description":                   {"maxLength": models.MaxDescriptionRune},
	"CreateTemplateRequest.face_value_cents":              money,
	"CreateTemplateRequest.get_percent":                   {"minimum": 0, "maximum": 100},
	"CreateTemplateRequest.get_percent_bp":                {"minimum": 0, "maximum": 10000},
	"CreateTemplateRequest.get_quantity":                  {"minimum": 0, "maximum": models.MaxSetQuantity},
	"CreateTemplateRequest.max_applications":              {"minimum": 0, "maximum": models.MaxApplicationsCap},
	"CreateTemplateRequest.max_discount_cents":            money,
	"CreateTemplateRequest.min_order_cents":               money,
	"CreateTemplateRequest.min_quantity":                  {"minimum": 0, "maximum": models.MaxMinQuantity},
	"CreateTemplateRequest.name":                          name,
	"CreateTemplateRequest.per_user_limit":                {"minimum": 1, "maximum": models.MaxPerUserLimit},
	"CreateTemplateRequest.percent_off":                   {"minimum": 0, "maximum": 100},
	"CreateTemplateRequest.percent_off_bp":                {"minimum": 0, "maximum": 10000},
	"CreateTemplateRequest.max_units_per_line":            {"minimum": 0, "maximum": 1000000},
	"CreateTemplateRequest.max_units_per_order":           {"minimum": 0, "maximum": 1000000},
	"CreateTemplateRequest.priority":                      {"minimum": 0, "maximum": models.MaxPriority},
	"CreateTemplateRequest.shared_code":                   {"minLength": models.MinSharedCodeLen, "maxLength": models.MaxSharedCodeLen, "pattern": "^[A-Za-z0-9-]+$"},
	"CreateTemplateRequest.condition.min_amount_cents":    money,
	"CreateTemplateRequest.condition.min_quantity":        {"minimum": 0, "maximum": models.MaxMinQuantity},
	"CreateTemplateRequest.target.category_ids":           targetList,
	"CreateTemplateRequest.target.category_ids[]":         targetEntry,
	"CreateTemplateRequest.target.exclude_category_ids":   targetList,
	"CreateTemplateRequest.target.exclude_category_ids[]": targetEntry,
	"CreateTemplateRequest.target.exclude_product_ids":    targetList,
	"CreateTemplateRequest.target.exclude_product_ids[]":  targetEntry,
	"CreateTemplateRequest.target.exclude_skus":           targetList,
	"CreateTemplateRequest.target.exclude_skus[]":         targetEntry,
	"CreateTemplateRequest.target.product_ids":            targetList,
	"CreateTemplateRequest.target.product_ids[]":          targetEntry,
	"CreateTemplateRequest.target.skus":                   targetList,
	"CreateTemplateRequest.target.skus[]":                 targetEntry,
	"CreateTemplateRequest.tiers":                         {"minItems": 1, "maxItems": models.MaxTiers},
	"CreateTemplateRequest.total_stock":                   {"minimum": 1, "maximum": models.MaxTotalStock},
	"CreateTemplateRequest.valid_days":                    {"minimum": 1, "maximum": models.MaxValidDays},
	"CreateTemplateRequest.valid_from":                    years,
	"CreateTemplateRequest.valid_until":                   years,
	"CreateTokenRequest.name":                             name,
	"CreateUserRequest.password":                          {"minLength": 8},
	"CreateUserRequest.username":                          userID,
	"CreateWebhookRequest.description":                    {"maxLength": events.MaxDescriptionChars},
	"CreateWebhookRequest.event_types":                    {},
	"CreateWebhookRequest.secret":                         {"maxLength": events.MaxSecretChars},
	"CreateWebhookRequest.url":                            webhookURL,
	"GenerateRequest.count":                               {"minimum": 1, "maximum": codes.MaxGenerateCount},
	"GenerateRequest.pattern":                             {"pattern": "^[-# 0-9A-Za-z]*$"},
	"HoldRequest.coupon_codes":                            codeList,
	"HoldRequest.coupon_codes[]":                          typedCode,
	"HoldRequest.currency":                                currency,
	"HoldRequest.lines":                                   cartLines,
	"HoldRequest.order_amount_cents":                      amount,
	"HoldRequest.order_id":                                orderID,
	"HoldRequest.shipping_cents":                          money,
	"HoldRequest.ttl_seconds":                             {"minimum": checkout.MinHoldTTL, "maximum": checkout.MaxHoldTTL},
	"HoldRequest.user_id":                                 userID,
	"IssueRequest.user_ids":                               {"minItems": 1, "maxItems": codes.MaxIssueUsers},
	"IssueRequest.user_ids[]":                             userID,
	"ReconcileRequest.template_id":                        id,
	"RedeemRequest.coupon_code":                           typedCode,
	"RedeemRequest.currency":                              currency,
	"RedeemRequest.lines":                                 cartLines,
	"RedeemRequest.order_amount_cents":                    amount,
	"RedeemRequest.order_id":                              orderID,
	"RedeemRequest.shipping_cents":                        money,
	"RedeemRequest.user_id":                               userID,
	"RefundRequest.coupon_code":                           typedCode,
	"RefundRequest.lines":                                 cartLines,
	"RefundRequest.order_id":                              orderID,
	"RefundRequest.return_id":                             orderID,
	"RefundRequest.returned_amount_cents":                 amount,
	"ReturnLineRequest.line_id":                           cartID,
	"ReturnLineRequest.quantity":                          {"minimum": 1, "maximum": checkout.MaxLineQuantity},
	"RevokeRequest.reason":                                reason,
	"TierRequest.min_cents":                               money,
	"TierRequest.min_quantity":                            {"minimum": 0, "maximum": models.MaxMinQuantity},
	"TierRequest.off_cents":                               money,
	"TierRequest.percent_off":                             {"minimum": 0, "maximum": 100},
	"TierRequest.percent_off_bp":                          {"minimum": 0, "maximum": 10000},
	"UpdateCampaignRequest.currency":                      currency,
	"UpdateCampaignRequest.name":                          name,
	"UpdateTemplateRequest.claim_ends_at":                 years,
	"UpdateTemplateRequest.claim_starts_at":               years,
	"UpdateTemplateRequest.description":                   {"maxLength": models.MaxDescriptionRune},
	"UpdateTemplateRequest.name":                          name,
	"UpdateTemplateRequest.shared_code":                   {"minLength": models.MinSharedCodeLen, "maxLength": models.MaxSharedCodeLen, "pattern": "^[A-Za-z0-9-]+$"},
	"UpdateWebhookRequest.description":                    {"maxLength": events.MaxDescriptionChars},
	"UpdateWebhookRequest.event_types":                    {},
	"UpdateWebhookRequest.secret":                         {"maxLength": events.MaxSecretChars},
	"UpdateWebhookRequest.url":                            webhookURL,
	"UsableRequest.currency":                              currency,
	"UsableRequest.lines":                                 cartLines,
	"UsableRequest.order_amount_cents":                    amount,
	"UsableRequest.shipping_cents":                        money,
	"ValidateRequest.coupon_codes":                        codeList,
	"ValidateRequest.coupon_codes[]":                      typedCode,
	"ValidateRequest.currency":                            currency,
	"ValidateRequest.lines":                               cartLines,
	"ValidateRequest.order_amount_cents":                  amount,
	"ValidateRequest.order_id":                            orderID,
	"ValidateRequest.shipping_cents":                      money,
	"ValidateRequest.user_id":                             userID,

	"* header:Idempotency-Key":                     key,
	"* path:id":                                    id,
	"* path:delivery_id":                           id,
	"* path:code":                                  typedCode,
	"* path:order_id":                              orderID,
	"* path:user_id":                               userID,
	"* query:after":                                after,
	"* query:limit":                                pageLimit,
	"GET /api/v1/events query:limit":               {"minimum": 1, "maximum": events.MaxFeedLimit},
	"GET /api/v1/events query:from":                {},
	"GET /api/v1/templates/{id}/stats query:hours": {"minimum": 1, "maximum": reports.MaxStatsHours},
	"GET /api/v1/templates/{id}/coupons.csv query:from":                   years,
	"GET /api/v1/templates/{id}/coupons.csv query:to":                     years,
	"GET /api/v1/users/{user_id}/coupons/usable query:order_amount_cents": amount,
	"GET /api/v1/reports/redemptions.csv query:from":                      years,
	"GET /api/v1/reports/redemptions.csv query:to":                        years,
	"GET /api/v1/reports/redemptions.csv query:group_by":                  {},
	"* query:from":        years,
	"* query:to":          years,
	"* query:campaign_id": id,
	"* query:template_id": id,
	"* query:currency":    currency,
}

// statedInWords are the bounds no keyword can carry, which the description
// must state: the text it must contain.
var statedInWords = map[string]string{
	// bcrypt reads 72 bytes at most; maxLength counts characters.
	"CreateUserRequest.password": "8 to 72 bytes",
	// A time's year is checked in UTC: an offset may move it out.
	"CreateTemplateRequest.claim_starts_at": "in UTC",
	"CreateWebhookRequest.secret":           "at least 16 of them not whitespace",
	"CreateWebhookRequest.url":              "private",
}

// TestOpenAPIRequestBoundsCarried walks every request property and parameter
// of the document (the route table's request types and parameters) and fails
// when one that a handler or service bounds does not carry the bound as a
// schema keyword with the value of the constant the validation uses, or when
// one of a bounded type has no row in requestBounds.
func TestOpenAPIRequestBoundsCarried(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(handlers.OpenAPIDocument(), &doc); err != nil {
		t.Fatal(err)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	places := map[string]map[string]any{}
	seen := map[string]bool{}
	var walk func(at string, s map[string]any)
	walk = func(at string, s map[string]any) {
		if ref, ok := s["$ref"].(string); ok {
			name := strings.TrimPrefix(ref, "#/components/schemas/")
			if !seen[name] {
				seen[name] = true
				walk(name, schemas[name].(map[string]any))
			}
			return
		}
		for _, sub := range anyList(s["allOf"]) {
			walk(at, sub.(map[string]any))
		}
		props, _ := s["properties"].(map[string]any)
		for k, v := range props {
			places[at+"."+k] = v.(map[string]any)
			walk(at+"."+k, v.(map[string]any))
		}
		if items, ok := s["items"].(map[string]any); ok {
			if _, isRef := items["$ref"]; !isRef {
				places[at+"[]"] = items
			}
			walk(at+"[]", items)
		}
	}
	wildcards := map[string]string{}
	for path, ops := range doc["paths"].(map[string]any) {
		for method, op := range ops.(map[string]any) {
			op := op.(map[string]any)
			for _, p := range anyList(op["parameters"]) {
				p := p.(map[string]any)
				at := fmt.Sprintf("%s %s %s:%s", strings.ToUpper(method), path, p["in"], p["name"])
				places[at] = p["schema"].(map[string]any)
				wildcards[at] = fmt.Sprintf("* %s:%s", p["in"], p["name"])
			}
			if rb, ok := op["requestBody"].(map[string]any); ok {
				if js, ok := rb["content"].(map[string]any)["application/json"].(map[string]any); ok {
					walk("", js["schema"].(map[string]any))
				}
			}
		}
	}
	names := make([]string, 0, len(places))
	for at := range places {
		names = append(names, at)
	}
	sort.Strings(names)
	used := map[string]bool{}
	checked := 0
	for _, at := range names {
		s := places[at]
		want, ok := requestBounds[at]
		rowName := at
		if !ok {
			rowName = wildcards[at]
			want, ok = requestBounds[rowName]
		}
		bounded := s["type"] == "string" || s["type"] == "integer" || s["type"] == "array"
		if !ok {
			if bounded && s["enum"] == nil {
				t.Errorf("%s (%v): no row in requestBounds: what bounds it on the server?", at, s["type"])
			}
			continue
		}
		used[rowName] = true
		for k, v := range want {
			checked++
			if got, exp := jsonText(s[k]), jsonText(v); got != exp {
				t.Errorf("%s: %s is %s, want %s (the constant the server checks)", at, k, got, exp)
			}
		}
	}
	for row := range requestBounds {
		if !used[row] {
			t.Errorf("requestBounds row %q names no property or parameter of the document", row)
		}
	}
	for at, text := range statedInWords {
		if d, _ := places[at]["description"].(string); !strings.Contains(d, text) {
			t.Errorf("%s: the description %q does not state %q", at, d, text)
		}
	}
	if checked < 250 {
		t.Fatalf("checked %d keywords, want at least 250: the walk misses places", checked)
	}
}

// TestOpenAPIRequestPatterns holds the patterns to the rules they state:
// years, codes, group_by without repeats, a cart's printable ids.
func TestOpenAPIRequestPatterns(t *testing.T) {
	groupBy := ""
	var doc map[string]any
	if err := json.Unmarshal(handlers.OpenAPIDocument(), &doc); err != nil {
		t.Fatal(err)
	}
	op := doc["paths"].(map[string]any)["/api/v1/reports/redemptions.csv"].(map[string]any)["get"].(map[string]any)
	for _, p := range anyList(op["parameters"]) {
		if p := p.(map[string]any); p["name"] == "group_by" {
			groupBy = p["schema"].(map[string]any)["pattern"].(string)
		}
	}
	for _, tc := range []struct {
		pattern string
		ok, bad []string
	}{
		{web.YearPattern,
			[]string{fmt.Sprintf("%d-01-01", models.MinYear), "2026-03-01T10:00:00Z", fmt.Sprintf("%d-12-31T23:59:59Z", models.MaxYear)},
			[]string{fmt.Sprintf("%d-12-31", models.MinYear-1), fmt.Sprintf("%d-01-01", models.MaxYear+1), "0001-01-01", "10000-01-01"}},
		{groupBy,
			[]string{"day", "template", "cashier", "cashier,day", "template,cashier,day", "day,template,cashier"},
			[]string{"day,day", "day,template,day", "", "week", "day,", "day, template"}},
		{typedCode["pattern"].(string),
			[]string{models.NewCouponCode(), "abcd-efgh-jkmn-p", "SPRING-2026", "ABCD"},
			[]string{"ABC", "ÉTÉ-2026-AB", "AB_CD", strings.Repeat("A", models.MaxCodeLen+1)}},
		{web.PrintablePattern, []string{"line 1", "Küche/€", ""}, []string{"a\tb", "a\u200eb", "a\u00a0b"}},
	} {
		re := regexp.MustCompile(tc.pattern)
		for _, s := range tc.ok {
			if !re.MatchString(s) {
				t.Errorf("%s refuses %q, which the server takes", tc.pattern, s)
			}
		}
		for _, s := range tc.bad {
			if re.MatchString(s) {
				t.Errorf("%s takes %q, which the server refuses", tc.pattern, s)
			}
		}
	}
}

func anyList(v any) []any {
	l, _ := v.([]any)
	return l
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	var x any
	_ = json.Unmarshal(b, &x)
	b, _ = json.Marshal(x)
	return string(b)
}
