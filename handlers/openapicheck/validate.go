// Package openapicheck checks JSON answers and requests against the OpenAPI
// document of the router (web.OpenAPIJSON): a validator of the part of JSON
// Schema the document uses, and a recorder that the handler tests install on
// their routers (handlers.Options.Middleware) to check every JSON answer they
// produce, to hold every request refused 400 to the document (CheckRequest),
// and to tell which routes no test checked.
package openapicheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/handlers/web"
)

// Doc is an OpenAPI document, decoded.
type Doc struct {
	root map[string]any
}

// Parse decodes a document.
func Parse(doc []byte) (*Doc, error) {
	d := &Doc{}
	if err := json.Unmarshal(doc, &d.root); err != nil {
		return nil, fmt.Errorf("the OpenAPI document is not JSON: %w", err)
	}
	return d, nil
}

// Keywords are the schema keywords Validate knows; a document that uses
// another would be checked only in part (UnknownKeywords finds them).
var Keywords = []string{"$ref", "allOf", "nullable", "type", "properties", "required", "additionalProperties",
	"items", "minItems", "maxItems", "enum", "format", "minimum", "maximum", "minLength", "maxLength", "pattern", "description", "deprecated"}

// UnknownKeywords lists the keywords of the document's schemas (components
// and the operations' bodies and answers) that Validate does not know.
func (d *Doc) UnknownKeywords() []string {
	known := map[string]bool{}
	for _, k := range Keywords {
		known[k] = true
	}
	found := map[string]bool{}
	var walk func(s map[string]any)
	walk = func(s map[string]any) {
		for k, v := range s {
			if !known[k] {
				found[k] = true
			}
			switch k {
			case "properties":
				for _, p := range v.(map[string]any) {
					walk(p.(map[string]any))
				}
			case "items":
				walk(v.(map[string]any))
			case "additionalProperties":
				if sub, ok := v.(map[string]any); ok {
					walk(sub)
				}
			case "allOf":
				for _, sub := range v.([]any) {
					walk(sub.(map[string]any))
				}
			}
		}
	}
	for _, s := range d.lookup("#/components/schemas") {
		walk(s.(map[string]any))
	}
	for _, ops := range d.lookup("#/paths") {
		for _, op := range ops.(map[string]any) {
			op := op.(map[string]any)
			var contents []any
			if rb, ok := op["requestBody"].(map[string]any); ok {
				contents = append(contents, rb["content"])
			}
			for _, r := range op["responses"].(map[string]any) {
				contents = append(contents, d.resolve(r.(map[string]any))["content"])
			}
			for _, c := range contents {
				c, _ := c.(map[string]any)
				for _, m := range c {
					walk(m.(map[string]any)["schema"].(map[string]any))
				}
			}
		}
	}
	var out []string
	for k := range found {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// lookup returns the object a local reference (#/a/b) names, or nil.
func (d *Doc) lookup(ref string) map[string]any { return ResolveRef(d.root, ref) }

// ResolveRef returns the object a local reference (#/a/b) names in the
// document root, or nil.
func ResolveRef(root map[string]any, ref string) map[string]any {
	cur := root
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		next, ok := cur[part].(map[string]any)
		if !ok {
			return nil
		}
		cur = next
	}
	return cur
}

// resolve follows $ref.
func (d *Doc) resolve(s map[string]any) map[string]any {
	for range 10 {
		r, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		if s = d.lookup(r); s == nil {
			return map[string]any{"$unresolved": r}
		}
	}
	return s
}

// AnswerSchema returns the schema of the JSON answer of an operation (a
// route: its method and gin path) with that status, or an error saying why
// there is none.
func (d *Doc) AnswerSchema(method, ginPath string, status int) (map[string]any, error) {
	ops, _ := d.lookup("#/paths")[web.OpenAPIPath(ginPath)].(map[string]any)
	op, _ := ops[strings.ToLower(method)].(map[string]any)
	if op == nil {
		return nil, fmt.Errorf("%s %s is not in the document", method, ginPath)
	}
	resp, _ := op["responses"].(map[string]any)[strconv.Itoa(status)].(map[string]any)
	if resp == nil {
		return nil, fmt.Errorf("%s %s: the document has no answer %d", method, ginPath, status)
	}
	resp = d.resolve(resp)
	content, _ := resp["content"].(map[string]any)
	js, _ := content["application/json"].(map[string]any)
	if js == nil {
		return nil, fmt.Errorf("%s %s: the answer %d is not JSON in the document", method, ginPath, status)
	}
	return js["schema"].(map[string]any), nil
}

// CheckAnswer validates a JSON answer body against the document's schema
// of its route and status, and returns the violations.
func (d *Doc) CheckAnswer(method, ginPath string, status int, body []byte) []string {
	schema, err := d.AnswerSchema(method, ginPath, status)
	if err != nil {
		return []string{err.Error()}
	}
	dec := jsonDecoder(body)
	var v any
	if err := dec.Decode(&v); err != nil {
		return []string{fmt.Sprintf("the body is not JSON: %v: %q", err, body)}
	}
	if dec.More() {
		return []string{fmt.Sprintf("the body is more than one JSON value: %q", body)}
	}
	return d.Validate(schema, v)
}

// jsonDecoder decodes numbers as json.Number, for Validate.
func jsonDecoder(b []byte) *json.Decoder {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec
}

// Validate checks a value decoded with json.Decoder.UseNumber (numbers are
// json.Number) against a schema of the document; each violation names
// where it is ("body.coupon.status").
func (d *Doc) Validate(schema map[string]any, v any) []string {
	return d.validate(schema, v, "body")
}

func (d *Doc) validate(schema map[string]any, v any, at string) []string {
	schema = d.resolve(schema)
	if r, ok := schema["$unresolved"]; ok {
		return []string{fmt.Sprintf("%s: the schema's $ref %v does not resolve", at, r)}
	}
	if v == nil {
		if schema["nullable"] == true {
			return nil
		}
		return []string{at + ": null where the schema does not allow it"}
	}
	var errs []string
	if all, ok := schema["allOf"].([]any); ok {
		for _, sub := range all {
			errs = append(errs, d.validate(sub.(map[string]any), v, at)...)
		}
	}
	if t, ok := schema["type"].(string); ok {
		if err := checkType(t, v); err != "" {
			return append(errs, at+": "+err)
		}
	}
	switch v := v.(type) {
	case map[string]any:
		errs = append(errs, d.validateObject(schema, v, at)...)
	case []any:
		if m, ok := schema["minItems"].(float64); ok && float64(len(v)) < m {
			errs = append(errs, fmt.Sprintf("%s: %d items, fewer than minItems %v", at, len(v), m))
		}
		if m, ok := schema["maxItems"].(float64); ok && float64(len(v)) > m {
			errs = append(errs, fmt.Sprintf("%s: %d items, more than maxItems %v", at, len(v), m))
		}
		if items, ok := schema["items"].(map[string]any); ok {
			for i, x := range v {
				errs = append(errs, d.validate(items, x, fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
	case string:
		errs = append(errs, checkString(schema, v, at)...)
	case json.Number:
		errs = append(errs, checkNumber(schema, v, at)...)
	}
	if enum, ok := schema["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			found = found || scalar(e) == scalar(v)
		}
		if !found {
			errs = append(errs, fmt.Sprintf("%s: %v is not one of %v", at, scalar(v), enum))
		}
	}
	return errs
}

// scalar is how an enum value compares: its JSON text.
func scalar(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func checkType(t string, v any) string {
	ok := false
	switch t {
	case "object":
		_, ok = v.(map[string]any)
	case "array":
		_, ok = v.([]any)
	case "string":
		_, ok = v.(string)
	case "boolean":
		_, ok = v.(bool)
	case "number":
		_, ok = v.(json.Number)
	case "integer":
		n, isNumber := v.(json.Number)
		_, err := strconv.ParseInt(string(n), 10, 64)
		ok = isNumber && err == nil
	default:
		return "the schema's type " + t + " is unknown"
	}
	if !ok {
		return fmt.Sprintf("%s, want %s", scalar(v), t)
	}
	return ""
}

func (d *Doc) validateObject(schema map[string]any, obj map[string]any, at string) []string {
	var errs []string
	props, _ := schema["properties"].(map[string]any)
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if ps, ok := props[k].(map[string]any); ok {
			errs = append(errs, d.validate(ps, obj[k], at+"."+k)...)
			continue
		}
		switch extra := schema["additionalProperties"].(type) {
		case bool:
			if !extra {
				errs = append(errs, at+"."+k+": not in the schema")
			}
		case map[string]any:
			errs = append(errs, d.validate(extra, obj[k], at+"."+k)...)
		}
	}
	req, _ := schema["required"].([]any)
	for _, k := range req {
		if _, ok := obj[k.(string)]; !ok {
			errs = append(errs, fmt.Sprintf("%s.%s: required but missing", at, k))
		}
	}
	return errs
}

func checkString(schema map[string]any, s, at string) []string {
	var errs []string
	n := float64(len([]rune(s)))
	if m, ok := schema["minLength"].(float64); ok && n < m {
		errs = append(errs, fmt.Sprintf("%s: %q is shorter than %v", at, s, m))
	}
	if m, ok := schema["maxLength"].(float64); ok && n > m {
		errs = append(errs, fmt.Sprintf("%s: %q is longer than %v", at, s, m))
	}
	if p, ok := schema["pattern"].(string); ok {
		re, err := regexp.Compile(p)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: the schema's pattern %q does not compile: %v", at, p, err))
		} else if !re.MatchString(s) {
			errs = append(errs, fmt.Sprintf("%s: %q does not match %s", at, s, p))
		}
	}
	switch schema["format"] {
	case "date-time":
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %q is not an RFC 3339 time", at, s))
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %q is not a date (YYYY-MM-DD)", at, s))
		}
	}
	return errs
}

func checkNumber(schema map[string]any, n json.Number, at string) []string {
	var errs []string
	f, err := n.Float64()
	if err != nil {
		return []string{fmt.Sprintf("%s: %s is not a number", at, n)}
	}
	if m, ok := schema["minimum"].(float64); ok && f < m {
		errs = append(errs, fmt.Sprintf("%s: %s is below the minimum %v", at, n, m))
	}
	if m, ok := schema["maximum"].(float64); ok && f > m {
		errs = append(errs, fmt.Sprintf("%s: %s is above the maximum %v", at, n, m))
	}
	return errs
}

// CheckEvent checks an event (a webhook delivery's body, an item of the
// feed) against the schema the document gives its type under x-webhooks;
// an event of a type the document does not list is a violation.
func (d *Doc) CheckEvent(body []byte) []string {
	var v any
	if err := jsonDecoder(body).Decode(&v); err != nil {
		return []string{"the event is not JSON: " + err.Error()}
	}
	ev, _ := v.(map[string]any)
	typ, _ := ev["type"].(string)
	hooks, _ := d.root["x-webhooks"].(map[string]any)
	hook, _ := hooks[typ].(map[string]any)
	post, _ := hook["post"].(map[string]any)
	rb, _ := post["requestBody"].(map[string]any)
	content, _ := rb["content"].(map[string]any)
	media, _ := content["application/json"].(map[string]any)
	schema, _ := media["schema"].(map[string]any)
	if schema == nil {
		return []string{fmt.Sprintf("event type %q has no schema under x-webhooks", typ)}
	}
	return d.validate(schema, v, "event")
}
