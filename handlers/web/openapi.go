package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/couponsvc/couponsvc/models"
)

// OpenAPIJSON is the OpenAPI 3 document of the rows, indented: the JSON API
// (docs/result-codes.md), the operational endpoints and the pages, the request
// and answer schemas from the Go types the rows name. bounds, when given,
// set values of field schemas by name over those of fieldSchemas: the bounds
// a deployment configures (the cap on an order's coupons), so that the
// document a server serves states its own.
func OpenAPIJSON(rows []Route, bounds ...map[string]map[string]any) []byte {
	b, err := json.MarshalIndent(openAPIDocument(rows, bounds...), "", "  ")
	if err != nil {
		panic("couponsvc: the OpenAPI document does not marshal: " + err.Error()) // a bug caught by any test
	}
	return b
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

func arrayOf(s map[string]any) map[string]any { return map[string]any{"type": "array", "items": s} }

// nullable marks a schema as also null. OpenAPI 3.0 wants a type next to
// nullable, also where the schema is a $ref wrapped in allOf (an object).
func nullable(s map[string]any) map[string]any {
	out := map[string]any{"nullable": true}
	if _, typed := s["type"]; !typed {
		out["type"] = "object"
	}
	for k, v := range s {
		out[k] = v
	}
	return out
}

// object returns an object schema; required names the properties that must be
// present.
func object(props map[string]any, required ...string) map[string]any {
	o := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

// Common error answers of the JSON API.
const (
	ErrBody  = "invalid_request"
	ErrAuth  = "unauthorized"
	ErrForb  = "forbidden"
	ErrFound = "not_found"
	ErrDown  = "unavailable"
	// errTokens answers a bearer request from an address with too many
	// invalid tokens.
	ErrTokens = "rate_limited"
)

var couponCodeParam = "a coupon code: 13 characters of 23456789ABCDEFGHJKLMNPQRSTUVWXYZ with a check character; " +
	"lower case, spaces and dashes are accepted"

var sharedCodeParam = "a shared code: 4-32 letters, digits and dashes, compared without case, never shaped as a coupon code"

// typedCodePattern is the alphabet and length of a code as typed
// (models.ParseCouponCode): models.MinCodeLen to models.MaxCodeLen letters
// and digits, with spaces and dashes anywhere. The check character of a
// 13-character code is stated in words.
var typedCodePattern = fmt.Sprintf("^[- ]*([0-9A-Za-z][- ]*){%d,%d}$", models.MinCodeLen, models.MaxCodeLen)

// typedCode is the schema of a coupon code as typed, in a path or a body.
func typedCode(description string) map[string]any {
	return map[string]any{"type": "string", "minLength": models.MinCodeLen, "maxLength": models.MaxTypedCodeLen,
		"pattern": typedCodePattern, "description": description}
}

// PrintablePattern is unicode.IsPrint as a pattern: letters, marks, numbers,
// punctuation, symbols and the ASCII space (the ids of a cart).
const PrintablePattern = `^[\p{L}\p{M}\p{N}\p{P}\p{S} ]*$`

// trimmedPrintablePattern is PrintablePattern without a space at either end
// (a template's target entry).
const trimmedPrintablePattern = `^[\p{L}\p{M}\p{N}\p{P}\p{S}]([\p{L}\p{M}\p{N}\p{P}\p{S} ]*[\p{L}\p{M}\p{N}\p{P}\p{S}])?$`

// YearPattern matches the years models.MinYear to models.MaxYear at the
// start of a date or a time.
var YearPattern = "^" + yearAlternatives(models.MinYear, models.MaxYear) + "-"

// yearAlternatives is a regular expression of the four-digit years lo to hi:
// whole centuries and decades as ranges, the others one by one.
func yearAlternatives(lo, hi int) string {
	var alts []string
	for y := lo; y <= hi; {
		switch {
		case y%100 == 0 && y+99 <= hi:
			alts = append(alts, fmt.Sprintf("%02d[0-9]{2}", y/100))
			y += 100
		case y%10 == 0 && y+9 <= hi:
			alts = append(alts, fmt.Sprintf("%03d[0-9]", y/10))
			y += 10
		default:
			alts = append(alts, fmt.Sprintf("%04d", y))
			y++
		}
	}
	return "(" + strings.Join(alts, "|") + ")"
}

// yearsInWords says the years' rule of a date or time (models.CheckDate).
var yearsInWords = fmt.Sprintf("within the years %d to %d", models.MinYear, models.MaxYear)

// DateSchema is the schema of a date a request names (models.ParseDate).
func DateSchema() map[string]any {
	return map[string]any{"type": "string", "format": "date", "pattern": YearPattern}
}

// TimeSchema is the schema of a time a request names (models.ParseTime):
// its year, in UTC, in the years' range; an offset that moves it out of them
// is refused, which the pattern (of the year as written) cannot see.
func TimeSchema() map[string]any {
	return map[string]any{"type": "string", "format": "date-time", "pattern": YearPattern}
}

// TimeRule is what TimeSchema's pattern cannot say, in words.
var TimeRule = "RFC 3339, " + yearsInWords + " in UTC"

// fieldSchemas say what a Go type cannot: the shape of a string, the range of
// a number, the values of an enumeration. A request field names one with its
// schema:"..." tag, a path parameter by its name.
var fieldSchemas = map[string]map[string]any{
	"order_id": {"type": "string", "minLength": 1, "maxLength": models.MaxOrderIDLen, "pattern": "^[A-Za-z0-9._:@-]*[A-Za-z0-9_:@-][A-Za-z0-9._:@-]*$",
		"description": "the shop's order id: 1-64 characters of A-Z a-z 0-9 . _ : @ -, not dots only (models.ValidateOrderID)"},
	"user_id": {"type": "string", "minLength": 1, "maxLength": models.MaxUserIDLen, "pattern": "^[A-Za-z0-9._:@-]+$",
		"description": "the shop's user id"},
	"order_amount":  {"minimum": 1, "maximum": models.MaxMoneyCents},
	"template_kind": {"enum": models.TemplateKinds},
	"applies_to": {"enum": models.AppliesToValues,
		"description": "order (default; shipping for free_shipping): every discountable line; items: the lines target selects; shipping: the shipping (fixed, percent, tiered and free_shipping only)"},
	// 0 is a field the kind does not take; the kinds that take one need 1 or more.
	"money":            {"minimum": 0, "maximum": models.MaxMoneyCents},
	"percent_off":      {"minimum": 0, "maximum": models.MaxPercent},
	"percent_bp":       {"minimum": 0, "maximum": models.MaxBasisPoints},
	"min_quantity":     {"minimum": 0, "maximum": models.MaxMinQuantity},
	"set_quantity":     {"minimum": 0, "maximum": models.MaxSetQuantity},
	"get_percent":      {"minimum": 0, "maximum": models.MaxPercent},
	"tier_min":         {"minimum": 0, "maximum": models.MaxMoneyCents},
	"tier_percent":     {"minimum": 0, "maximum": models.MaxPercent},
	"max_applications": {"minimum": 0, "maximum": models.MaxApplicationsCap},
	"priority":         {"minimum": 0, "maximum": models.MaxPriority},
	"units_bound":      {"minimum": 0, "maximum": models.MaxUnitsBound},
	"unit_order":       {"enum": []string{models.UnitsCheapest, models.UnitsDearest}},
	"tiers":            {"minItems": 1, "maxItems": models.MaxTiers},
	"actions":          {"maxItems": models.MaxActions},
	"target_list": {"maxItems": models.MaxTargetEntries,
		"items": map[string]any{"type": "string", "minLength": 1, "maxLength": models.MaxTargetEntryRune, "pattern": trimmedPrintablePattern}},
	"refund_policy": {"enum": []string{models.RefundRestore, models.RefundRecycle}},
	"template_status": {"enum": []string{models.TemplateActive, models.TemplatePaused, models.TemplateArchived},
		"description": "archived (by a change of status only) is final: no claims, and the shared code is free for another template"},
	"code_mode": {"enum": []string{models.CodeModeUnique, models.CodeModeShared, models.CodeModeAutomatic},
		"description": "unique (default): a code per claimed coupon; shared: one shared_code every shopper types at checkout; automatic: no code, it applies to every cart it admits"},
	"shared_code": {"type": "string", "minLength": models.MinSharedCodeLen, "maxLength": models.MaxSharedCodeLen,
		"pattern": "^[A-Za-z0-9-]+$", "description": sharedCodeParam},
	"checkout_code":   typedCode(couponCodeParam + "; or a shared code (" + sharedCodeParam + "), which needs user_id"),
	"campaign_status": {"enum": []string{models.CampaignActive, models.CampaignPaused}},
	"revoke_public_reason": {"enum": models.RevokePublicReasonKeys(),
		"description": "what the shopper's wallet says about the revoke (default other): issued_in_error, fraud_suspected, offer_withdrawn, replaced or other; the reason field is the admin's note, which the shopper never sees"},
	"stacking":    {"enum": []string{models.StackingExclusive, models.StackingCombinable}},
	"token_role":  {"enum": []string{models.RoleAdmin, models.RoleCashier, models.RoleApp}},
	"user_role":   {"enum": []string{models.RoleShopper, models.RoleCashier, models.RoleAdmin}},
	"id":          {"type": "integer", "format": "int64", "minimum": 1},
	"delivery_id": {"type": "integer", "format": "int64", "minimum": 1, "description": "a delivery's id (delivery_id of its attempts)"},
	"currency": {"type": "string", "minLength": 3, "maxLength": 3, "pattern": "^[A-Z]{3}$",
		"description": "an ISO 4217 currency code such as USD, EUR or JPY"},
	"unit_price": {"minimum": 0, "maximum": models.MaxMoneyCents},
	"shipping":   {"minimum": 0, "maximum": models.MaxMoneyCents},
	"code":       typedCode(couponCodeParam),
	// The bounds below are the ones the services enforce, from their constants;
	// lengths count characters (runes), as maxLength does. Those of the
	// services web does not import are added by the API (AddFieldSchemas).
	"name":                 {"minLength": 1, "maxLength": models.MaxNameRunes},
	"template_description": {"maxLength": models.MaxDescriptionRune},
	"eligibility":          {"maxLength": models.MaxEligibilityRunes},
	"reason":               {"minLength": 1, "maxLength": models.MaxReasonRunes},
	"total_stock":          {"minimum": 1, "maximum": models.MaxTotalStock},
	"per_user_limit":       {"minimum": 1, "maximum": models.MaxPerUserLimit},
	"valid_days":           {"minimum": 1, "maximum": models.MaxValidDays},
	"budget":               {"minimum": 0, "maximum": models.MaxBudgetCents},
	"per_customer_limit":   {"minimum": 0, "maximum": models.MaxPerCustomerLimit},
	"stock_delta":          {"minimum": 1, "maximum": models.MaxTotalStock},
	// bcrypt reads 72 bytes at most: the upper bound counts bytes, which
	// maxLength (characters) cannot say; 8 characters are at least 8 bytes.
	"password":      {"minLength": 8},
	"code_pattern":  {"pattern": "^[-# 0-9A-Za-z]*$"},
	"event_types":   {"items": map[string]any{"type": "string", "enum": models.EventTypes}},
	"event_type":    {"enum": models.EventTypes},
	"coupon_status": {"enum": []string{models.CouponIssued, models.CouponHeld, models.CouponUsed, models.CouponRevoked, models.CouponExpired}},
}

// FieldSchema is the field schema of that name (the items of a list, say).
func FieldSchema(name string) map[string]any {
	s, ok := fieldSchemas[name]
	if !ok {
		panic("couponsvc: no field schema " + name) // a bug caught by any test
	}
	return s
}

// AddFieldSchemas adds field schemas whose values come from packages web may
// not import (docs/architecture.md): the bounds a service enforces. It runs
// at package initialisation, before any document is made.
func AddFieldSchemas(schemas map[string]map[string]any) bool {
	for name, s := range schemas {
		if _, taken := fieldSchemas[name]; taken {
			panic("couponsvc: two field schemas named " + name) // a bug caught by any test
		}
		fieldSchemas[name] = s
	}
	return true
}

// routeErrors returns the result words of the errors a route answers, by
// status: its own and those every route of its kind answers.
func routeErrors(rt Route) map[int][]string {
	out := map[int][]string{}
	add := func(status int, words ...string) {
		for _, w := range words {
			if !slices.Contains(out[status], w) {
				out[status] = append(out[status], w)
			}
		}
	}
	if strings.HasPrefix(rt.Path, APIPrefix) {
		add(401, ErrAuth)   // bad credentials, whoever may call
		add(429, ErrTokens) // an address with too many invalid tokens
		add(503, ErrDown)
	}
	if rt.Roles != nil {
		add(403, ErrForb)
	}
	if strings.ContainsAny(rt.Path, ":*") || len(rt.Query) > 0 {
		add(400, ErrBody) // a malformed path or query parameter, named
	}
	if rt.Request != nil || rt.RawRequest != nil {
		add(400, ErrBody)
		add(413, ErrBody)
		add(415, ErrBody)
	}
	statuses := make([]int, 0, len(rt.Errors))
	for status := range rt.Errors {
		statuses = append(statuses, status)
	}
	sort.Ints(statuses)
	for _, status := range statuses {
		add(status, rt.Errors[status]...)
	}
	if rt.Idempotent() {
		add(400, ErrBody) // a malformed Idempotency-Key
		add(409, models.CodeInProgress.Word())
		add(422, models.CodeIdempotencyMismatch.Word())
	}
	return out
}

// OpenAPIPath turns gin's /templates/:id and /static/*file into OpenAPI's
// /templates/{id} and /static/{file}: the document's paths, which the
// answer checker (handlers/openapicheck) looks routes up by.
func OpenAPIPath(ginPath string) string {
	parts := strings.Split(ginPath, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, ":") || strings.HasPrefix(p, "*") {
			parts[i] = "{" + p[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}

// openAPIDocument builds the document from the rows of the route tables.
// Pages are for people, not programs: their rows are left out.
func openAPIDocument(rows []Route, bounds ...map[string]map[string]any) map[string]any {
	paths := map[string]map[string]any{}
	add := func(method, path string, op map[string]any) {
		p := OpenAPIPath(path)
		if paths[p] == nil {
			paths[p] = map[string]any{}
		}
		paths[p][strings.ToLower(method)] = op
	}
	cs := newComponents()
	for _, b := range bounds {
		for name, s := range b {
			if _, ok := fieldSchemas[name]; !ok {
				panic("couponsvc: a bound for no field schema " + name) // a bug caught by any test
			}
			cs.bounds[name] = s
		}
	}
	errorSchema := cs.named(reflect.TypeFor[ErrorBody](), false, false)
	for _, rt := range rows {
		if !rt.Page && !rt.Asset {
			add(rt.Method, rt.Path, rt.operation(cs, errorSchema))
		}
	}
	errResponse := func(description string, retryAfter bool) map[string]any {
		headers := map[string]any{"X-Request-ID": requestIDHeader}
		if retryAfter {
			headers["Retry-After"] = map[string]any{"description": "seconds to wait before trying again",
				"schema": map[string]any{"type": "integer"}}
		}
		return map[string]any{"description": description, "headers": headers,
			"content": map[string]any{"application/json": map[string]any{"schema": errorSchema}}}
	}
	return map[string]any{
		"openapi": "3.0.3",
		"info": map[string]any{
			"title":   "couponsvc",
			"version": "1",
			"description": "Coupons: claim, redeem at checkout, refund, revoke. Every JSON answer is " +
				"{\"code\": N, \"result\": \"word\", \"error\": \"message\", ...payload}: code 0 done, 1 duplicate " +
				"(a replay answered with the first answer); a replay of an Idempotency-Key's first answer keeps its code and result and adds \"duplicate\": true, other codes as in the error responses. " +
				"Money is integer cents; times are RFC 3339 UTC.",
		},
		"servers": []any{map[string]any{"url": "/"}},
		"tags": []any{
			map[string]any{"name": "claims", "description": "Shoppers claim coupons"},
			map[string]any{"name": "checkout", "description": "Cashiers redeem and refund coupons"},
			map[string]any{"name": "coupons", "description": "Look coupons up, revoke them"},
			map[string]any{"name": "campaigns", "description": "Campaigns and coupon templates"},
			map[string]any{"name": "admin", "description": "Tokens, users, reconciliation"},
			map[string]any{"name": "events", "description": "The event feed and webhook endpoints"},
			map[string]any{"name": "jobs", "description": "Background jobs: bulk issues, code batches, exports"},
			map[string]any{"name": "reports", "description": "Figures by campaign, template and day"},
			map[string]any{"name": "operations", "description": "Health, readiness, metrics, this document"},
		},
		"paths":      paths,
		"x-webhooks": eventWebhooks(cs),
		"components": map[string]any{
			"schemas": cs.schemas,
			"securitySchemes": map[string]any{
				"bearer":  map[string]any{"type": "http", "scheme": "bearer", "description": "an API token (role admin, cashier or app)"},
				"session": map[string]any{"type": "apiKey", "in": "cookie", "name": SessionCookie, "description": "the session of a logged-in user"},
			},
			"responses": map[string]any{
				"400": errResponse("invalid_request: a field is missing, malformed or out of range (the field is named)", false),
				"401": errResponse("unauthorized: no or bad credentials", false),
				"403": errResponse("forbidden: wrong role, or not your coupon", false),
				"404": errResponse("not_found", false),
				"409": errResponse("a business refusal (see the operation)", false),
				"413": errResponse("invalid_request: the body is larger than 64 KiB", false),
				"405": errResponse("invalid_request: the path does not take this method", false),
				"415": errResponse("invalid_request: the body must be application/json", false),
				"422": errResponse("below_minimum or idempotency_mismatch", false),
				"429": errResponse("busy or rate_limited: try again after Retry-After", true),
				"500": errResponse("a fault of couponsvc (logged with the request id)", false),
				"503": errResponse("unavailable: the database or Redis cannot be reached", true),
			},
		},
	}
}

// operation renders a route of the API; the schemas of its request and
// answer types go to cs.
func (rt Route) operation(cs *components, errorSchema map[string]any) map[string]any {
	o := map[string]any{
		"tags":        []string{rt.Tag},
		"summary":     rt.Summary,
		"operationId": rt.operationID(),
	}
	description := rt.Description
	switch {
	case rt.Roles != nil:
		description = strings.TrimSpace("Role: " + strings.Join(rt.Roles, ", ") + ". " + description)
		o["security"] = []any{map[string]any{"bearer": []string{}}, map[string]any{"session": []string{}}}
		o["x-roles"] = rt.Roles
	case strings.HasPrefix(rt.Path, APIPrefix):
		o["security"] = []any{map[string]any{}, map[string]any{"bearer": []string{}}, map[string]any{"session": []string{}}}
	default:
		o["security"] = []any{} // public: no credentials
	}
	if description != "" {
		o["description"] = description
	}
	params := pathParams(rt.Path)
	for _, q := range rt.Query {
		params = append(params, q.parameter("query"))
	}
	for _, h := range rt.Header {
		params = append(params, h.parameter("header"))
	}
	if rt.Idempotent() {
		params = append(params, Param{Name: IdempotencyKeyHeader,
			Description: "makes the request safe to retry: a retry with the same key and request (method, path, body) gets the first answer " +
				"(a success as 200 with its fields and result word and duplicate: true), for 24 hours, from any instance; the same key with another request is refused 422 idempotency_mismatch",
			Schema: IdempotencyKeySchema()}.parameter("header"))
	}
	if len(params) > 0 {
		o["parameters"] = params
	}
	content := map[string]any{}
	if rt.Request != nil {
		content["application/json"] = map[string]any{"schema": cs.named(rt.Request, true, false)}
	}
	if rt.RawRequest != nil {
		content[rt.RawRequest.MediaType] = map[string]any{"schema": rt.RawRequest.Schema}
	}
	if len(content) > 0 {
		o["requestBody"] = map[string]any{"required": !rt.OptionalBody, "content": content}
	}
	responses := map[string]any{}
	switch {
	case rt.Raw != nil:
		responses[itoa(rt.Status)] = map[string]any{"description": rt.Summary,
			"content": map[string]any{rt.Raw.MediaType: map[string]any{"schema": rt.Raw.Schema}}}
	case rt.Results == nil:
		responses[itoa(rt.Status)] = map[string]any{"description": rt.Summary}
	default:
		if rt.Answer == nil {
			panic("couponsvc: " + rt.Method + " " + rt.Path + " answers JSON: its row must name its Answer type") // a bug caught by any test
		}
		answer := cs.named(rt.Answer, false, true)
		// The answer's schema, with the result words of this route; a replay
		// of an Idempotency-Key is marked by the envelope's duplicate.
		schema := func(results []string) map[string]any {
			codes := []int{0}
			if slices.Contains(results, "duplicate") {
				codes = []int{0, 1}
				if len(results) == 1 {
					codes = []int{1}
				}
			}
			return map[string]any{"allOf": []any{answer, map[string]any{"type": "object", "properties": map[string]any{
				"code":   map[string]any{"type": "integer", "enum": codes},
				"result": map[string]any{"type": "string", "enum": results, "description": "one of: " + strings.Join(results, ", ")},
			}}}}
		}
		results := rt.Results
		responses[itoa(rt.Status)] = map[string]any{"description": strings.Join(results, " or "),
			"content": map[string]any{"application/json": map[string]any{"schema": schema(results)}}}
		switch {
		case rt.Idempotent() && rt.Status != http.StatusOK:
			replayed, description := rt.Results, "a replay of the Idempotency-Key's first answer (duplicate: true)"
			if rt.Duplicate200 {
				replayed = append(slices.Clone(replayed), "duplicate")
				description += ", or duplicate: a replay answered with the first result"
			}
			responses["200"] = map[string]any{"description": description,
				"content": map[string]any{"application/json": map[string]any{"schema": schema(replayed)}}}
		case rt.Duplicate200:
			responses["200"] = map[string]any{"description": "duplicate: a replay, answered with the first result",
				"content": map[string]any{"application/json": map[string]any{"schema": schema([]string{"duplicate"})}}}
		}
	}
	errs := routeErrors(rt)
	statuses := make([]int, 0, len(errs))
	for status := range errs {
		statuses = append(statuses, status)
	}
	sort.Ints(statuses)
	var lines []string
	for _, status := range statuses {
		responses[itoa(status)] = map[string]any{"$ref": "#/components/responses/" + itoa(status)}
		lines = append(lines, itoa(status)+": "+strings.Join(errs[status], ", "))
	}
	if rt.TakesNoBody() {
		responses["413"] = map[string]any{"description": "invalid_request: this request takes no body; one over 1 KiB is refused",
			"content": map[string]any{"application/json": map[string]any{"schema": errorSchema}}}
	}
	for status, r := range responses {
		if r, ok := r.(map[string]any); ok && r["$ref"] == nil {
			headers, _ := r["headers"].(map[string]any)
			if headers == nil {
				headers = map[string]any{}
			}
			headers["X-Request-ID"] = requestIDHeader
			r["headers"] = headers
			responses[status] = r
		}
	}
	for _, status := range []int{405, 500} {
		responses[itoa(status)] = map[string]any{"$ref": "#/components/responses/" + itoa(status)}
	}
	o["responses"] = responses
	o["x-max-body-bytes"] = rt.BodyLimit()
	if rt.DryRun {
		o["x-dry-run"] = true // changes nothing: a client may retry it freely
	}
	if len(lines) > 0 {
		o["x-error-results"] = lines
	}
	return o
}

// IdempotencyKeySchema is the schema of every Idempotency-Key header: 1 to
// MaxIdempotencyKeyLen printable ASCII characters, no spaces.
func IdempotencyKeySchema() map[string]any {
	return map[string]any{"type": "string", "minLength": 1, "maxLength": MaxIdempotencyKeyLen, "pattern": "^[!-~]+$"}
}

// pathParams declares the parameters of a path; their schemas are in
// fieldSchemas by name.
func pathParams(path string) []any {
	var params []any
	for _, seg := range strings.Split(path, "/") {
		if !strings.HasPrefix(seg, ":") && !strings.HasPrefix(seg, "*") {
			continue
		}
		name := seg[1:]
		schema := map[string]any{"type": "string"}
		if s, ok := fieldSchemas[name]; ok {
			schema = s
		}
		params = append(params, map[string]any{"name": name, "in": "path", "required": true, "schema": schema})
	}
	return params
}

func (p Param) parameter(in string) map[string]any {
	return map[string]any{"name": p.Name, "in": in, "required": p.Required, "description": p.Description, "schema": p.Schema}
}

// requestIDHeader is the header every answer carries: the request's id, the
// caller's X-Request-ID when it sent a valid one, else a new one; the logs
// carry it too.
var requestIDHeader = map[string]any{"description": "the request's id (the caller's X-Request-ID, or a new one); the logs carry it",
	"schema": map[string]any{"type": "string"}}

// operationID is the row's OperationID, else the name of its handler method
// ("createTemplate"); a handler that is a closure gets one made of the
// method and path ("get_api_v1_templates_id").
func (rt Route) operationID() string {
	if rt.OperationID != "" {
		return rt.OperationID
	}
	if rt.Handler != nil {
		name := runtime.FuncForPC(reflect.ValueOf(rt.Handler).Pointer()).Name()
		name = strings.TrimSuffix(name[strings.LastIndexByte(name, '.')+1:], "-fm")
		if name != "" && !strings.HasPrefix(name, "func") && !strings.ContainsAny(name, "0123456789") {
			return name
		}
	}
	r := strings.NewReplacer("/", "_", ":", "", "*", "", ".", "_", "-", "_")
	id := strings.Trim(r.Replace(rt.Path), "_")
	if id == "" {
		id = "root"
	}
	return strings.ToLower(rt.Method) + "_" + id
}

func itoa(n int) string { return strconv.Itoa(n) }
