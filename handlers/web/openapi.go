package web

import (
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"couponsvc/models"
)

// OpenAPIJSON is the OpenAPI 3 document of the rows, indented: the JSON API
// (docs/result-codes.md), the operational endpoints and the pages, the request
// and answer schemas from the Go types the rows name.
func OpenAPIJSON(rows []Route) []byte {
	b, err := json.MarshalIndent(openAPIDocument(rows), "", "  ")
	if err != nil {
		panic("couponsvc: the OpenAPI document does not marshal: " + err.Error()) // a bug caught by any test
	}
	return b
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

func arrayOf(s map[string]any) map[string]any { return map[string]any{"type": "array", "items": s} }

func nullable(s map[string]any) map[string]any {
	out := map[string]any{"nullable": true}
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

// fieldSchemas say what a Go type cannot: the shape of a string, the range of
// a number, the values of an enumeration. A request field names one with its
// schema:"..." tag, a path parameter by its name.
var fieldSchemas = map[string]map[string]any{
	"order_id": {"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[A-Za-z0-9._:@-]*[A-Za-z0-9_:@-][A-Za-z0-9._:@-]*$",
		"description": "the shop's order id: 1-64 characters of A-Z a-z 0-9 . _ : @ -, not dots only (models.ValidateOrderID)"},
	"user_id": {"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[A-Za-z0-9._:@-]+$",
		"description": "the shop's user id"},
	"order_amount":  {"minimum": 1, "maximum": models.MaxMoneyCents},
	"template_kind": {"enum": []string{models.KindFixed, models.KindPercent}},
	"refund_policy": {"enum": []string{models.RefundRestore, models.RefundRecycle}},
	"template_status": {"enum": []string{models.TemplateActive, models.TemplatePaused, models.TemplateArchived},
		"description": "archived (by a change of status only) is final: no claims, and the shared code is free for another template"},
	"code_mode": {"enum": []string{models.CodeModeUnique, models.CodeModeShared},
		"description": "unique (default): a code per claimed coupon; shared: one shared_code every shopper types at checkout"},
	"shared_code": {"type": "string", "minLength": models.MinSharedCodeLen, "maxLength": models.MaxSharedCodeLen,
		"pattern": "^[A-Za-z0-9-]+$", "description": sharedCodeParam},
	"checkout_code":   {"type": "string", "description": couponCodeParam + "; or a shared code (" + sharedCodeParam + "), which needs user_id"},
	"campaign_status": {"enum": []string{models.CampaignActive, models.CampaignPaused}},
	"stacking":        {"enum": []string{models.StackingExclusive, models.StackingCombinable}},
	"token_role":      {"enum": []string{models.RoleAdmin, models.RoleCashier, models.RoleApp}},
	"user_role":       {"enum": []string{models.RoleShopper, models.RoleCashier, models.RoleAdmin}},
	"id":              {"type": "integer", "format": "int64", "minimum": 1},
	"currency": {"type": "string", "minLength": 3, "maxLength": 3, "pattern": "^[A-Z]{3}$",
		"description": "an ISO 4217 currency code such as USD, EUR or JPY"},
	"cart_lines":    {"minItems": 1, "maxItems": 500},
	"cart_id":       {"type": "string", "minLength": 1, "maxLength": 64, "description": "1-64 printable characters"},
	"product_id":    {"type": "string", "maxLength": 64, "description": "0-64 printable characters"},
	"category_ids":  {"maxItems": 20, "items": map[string]any{"type": "string", "minLength": 1, "maxLength": 64}},
	"line_quantity": {"minimum": 1, "maximum": 10_000},
	"unit_price":    {"minimum": 0, "maximum": models.MaxMoneyCents},
	"shipping":      {"minimum": 0, "maximum": models.MaxMoneyCents},
	"code":          {"type": "string", "description": couponCodeParam},
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
	if strings.ContainsAny(rt.Path, ":*") {
		add(400, ErrBody)
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
	return out
}

// openAPIPath turns gin's /templates/:id and /static/*file into OpenAPI's
// /templates/{id} and /static/{file}.
func openAPIPath(ginPath string) string {
	parts := strings.Split(ginPath, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, ":") || strings.HasPrefix(p, "*") {
			parts[i] = "{" + p[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}

// openAPIDocument builds the document from the rows of the route tables.
func openAPIDocument(rows []Route) map[string]any {
	paths := map[string]map[string]any{}
	add := func(method, path string, op map[string]any) {
		p := openAPIPath(path)
		if paths[p] == nil {
			paths[p] = map[string]any{}
		}
		paths[p][strings.ToLower(method)] = op
	}
	cs := newComponents()
	errorSchema := cs.named(reflect.TypeFor[ErrorBody](), false, false)
	for _, rt := range rows {
		if rt.Page {
			add(rt.Method, rt.Path, rt.pageOperation())
		} else {
			add(rt.Method, rt.Path, rt.operation(cs, errorSchema))
		}
	}
	errResponse := func(description string, retryAfter bool) map[string]any {
		r := map[string]any{"description": description,
			"content": map[string]any{"application/json": map[string]any{"schema": errorSchema}}}
		if retryAfter {
			r["headers"] = map[string]any{"Retry-After": map[string]any{"description": "seconds to wait before trying again",
				"schema": map[string]any{"type": "integer"}}}
		}
		return r
	}
	return map[string]any{
		"openapi": "3.0.3",
		"info": map[string]any{
			"title":   "couponsvc",
			"version": "1",
			"description": "Coupons: claim, redeem at checkout, refund, revoke. Every JSON answer is " +
				"{\"code\": N, \"result\": \"word\", \"error\": \"message\", ...payload}: code 0 done, 1 duplicate " +
				"(a replay answered with the first answer), other codes as in the error responses. " +
				"Money is integer cents; times are RFC 3339 UTC.",
		},
		"servers": []any{map[string]any{"url": "/"}},
		"tags": []any{
			map[string]any{"name": "claims", "description": "Shoppers claim coupons"},
			map[string]any{"name": "checkout", "description": "Cashiers redeem and refund coupons"},
			map[string]any{"name": "coupons", "description": "Look coupons up, revoke them"},
			map[string]any{"name": "campaigns", "description": "Campaigns and coupon templates"},
			map[string]any{"name": "admin", "description": "Tokens, users, reconciliation"},
			map[string]any{"name": "operations", "description": "Health, readiness, metrics, this document"},
			map[string]any{"name": "pages", "description": "Server-rendered HTML pages (forms with a CSRF token)"},
		},
		"paths": paths,
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
				"415": errResponse("invalid_request: the body must be application/json", false),
				"422": errResponse("below_minimum or idempotency_mismatch", false),
				"429": errResponse("busy or rate_limited: try again after Retry-After", true),
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
		"operationId": operationID(rt.Method, rt.Path),
	}
	description := rt.Description
	switch {
	case rt.Roles != nil:
		description = strings.TrimSpace("Role: " + strings.Join(rt.Roles, ", ") + ". " + description)
		o["security"] = []any{map[string]any{"bearer": []string{}}, map[string]any{"session": []string{}}}
		o["x-roles"] = rt.Roles
	case strings.HasPrefix(rt.Path, APIPrefix):
		o["security"] = []any{map[string]any{}, map[string]any{"bearer": []string{}}, map[string]any{"session": []string{}}}
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
		o["requestBody"] = map[string]any{"required": true, "content": content}
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
		// The answer's schema, with the result words of this route.
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
		responses[itoa(rt.Status)] = map[string]any{"description": strings.Join(rt.Results, " or "),
			"content": map[string]any{"application/json": map[string]any{"schema": schema(rt.Results)}}}
		if rt.Duplicate200 {
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
	o["responses"] = responses
	o["x-max-body-bytes"] = rt.BodyLimit()
	if len(lines) > 0 {
		o["x-error-results"] = lines
	}
	return o
}

// operation renders a page. Pages answer HTML, or a redirect after a
// successful post, and are not meant for programs.
func (pr Route) pageOperation() map[string]any {
	o := map[string]any{
		"tags":        []string{"pages"},
		"summary":     pr.Summary,
		"operationId": operationID(pr.Method, pr.Path),
	}
	if pr.Roles != nil {
		o["description"] = "Role: " + strings.Join(pr.Roles, ", ") + "."
		o["security"] = []any{map[string]any{"session": []string{}}}
		o["x-roles"] = pr.Roles
	}
	if params := pathParams(pr.Path); len(params) > 0 {
		o["parameters"] = params
	}
	html := map[string]any{"text/html": map[string]any{"schema": map[string]any{"type": "string"}}}
	responses := map[string]any{}
	switch {
	case pr.Raw != nil:
		responses[itoa(pr.Status)] = map[string]any{"description": pr.Summary,
			"content": map[string]any{pr.Raw.MediaType: map[string]any{"schema": pr.Raw.Schema}}}
	case pr.Asset:
		responses[itoa(pr.Status)] = map[string]any{"description": pr.Summary}
	default:
		responses["200"] = map[string]any{"description": "the page (a form with its errors next to the fields)", "content": html}
		if pr.Method == "POST" {
			responses["303"] = map[string]any{"description": "done: redirect to the next page"}
			responses["403"] = map[string]any{"description": "the CSRF token is missing or wrong, or the role is wrong",
				"content": html}
		}
		if pr.Roles != nil {
			responses["303"] = map[string]any{"description": "redirect (to the login page when not logged in, or the next page)"}
		}
	}
	o["responses"] = responses
	return o
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

// operationID makes a unique, readable id: "post_api_v1_templates_id_claim".
func operationID(method, path string) string {
	r := strings.NewReplacer("/", "_", ":", "", "*", "", ".", "_", "-", "_")
	id := strings.Trim(r.Replace(path), "_")
	if id == "" {
		id = "root"
	}
	return strings.ToLower(method) + "_" + id
}

func itoa(n int) string { return strconv.Itoa(n) }
