package openapicheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/couponsvc/couponsvc/handlers/web"
)

// Request is what CheckRequest reads of a request: its operation (method
// and gin route), the values of its path parameters, its query, headers
// and body.
type Request struct {
	Method, Route string
	Path          map[string]string
	Query         url.Values
	Header        http.Header
	Body          []byte
}

// CheckRequest validates a request against the document's operation of its
// route: each parameter (path, query, header) against its schema, a missing
// required one, and a JSON body against the request body's schema. A body
// of another media type than JSON is taken as the string its schema says.
// It returns the violations; a request of no operation of the document
// (a page) has none.
func (d *Doc) CheckRequest(r Request) []string {
	ops, _ := d.lookup("#/paths")[web.OpenAPIPath(r.Route)].(map[string]any)
	op, _ := ops[strings.ToLower(r.Method)].(map[string]any)
	if op == nil {
		return nil
	}
	var errs []string
	params, _ := op["parameters"].([]any)
	for _, p := range params {
		p := d.resolve(p.(map[string]any))
		name, _ := p["name"].(string)
		schema, _ := p["schema"].(map[string]any)
		var values []string
		switch p["in"] {
		case "path":
			values = []string{r.Path[name]}
		case "query":
			values = r.Query[name]
		case "header":
			values = r.Header.Values(name)
		}
		if len(values) == 0 {
			if p["required"] == true {
				errs = append(errs, fmt.Sprintf("%s %s: required but missing", p["in"], name))
			}
			continue
		}
		for _, v := range values {
			errs = append(errs, d.validate(schema, paramValue(schema, v), fmt.Sprintf("%s %s", p["in"], name))...)
		}
	}
	rb, _ := op["requestBody"].(map[string]any)
	if rb == nil {
		return errs
	}
	content, _ := rb["content"].(map[string]any)
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	media, ok := content[mt].(map[string]any)
	switch {
	case len(r.Body) == 0:
		if rb["required"] == true {
			errs = append(errs, "body: required but empty")
		}
	case !ok:
		errs = append(errs, fmt.Sprintf("body: the media type %q is not one the operation takes", mt))
	case mt == "application/json" && !utf8.Valid(r.Body):
		errs = append(errs, "body: not UTF-8, which JSON text is")
	case mt == "application/json":
		if key, twice := duplicateKey(r.Body); twice {
			errs = append(errs, fmt.Sprintf("body: the key %q is given twice in one object", key))
		}
		dec := jsonDecoder(r.Body)
		var v any
		if err := dec.Decode(&v); err != nil {
			return append(errs, fmt.Sprintf("body: not JSON: %v", err))
		}
		if dec.More() {
			return append(errs, "body: more than one JSON value")
		}
		errs = append(errs, d.validate(media["schema"].(map[string]any), v, "body")...)
	}
	return errs
}

// paramValue is a parameter's text as the value its schema reads: a number
// for an integer or a number (which fails the type when it is not one), the
// text for the others.
func paramValue(schema map[string]any, v string) any {
	switch schema["type"] {
	case "integer", "number":
		return json.Number(v)
	}
	return v
}

// duplicateKey names a key given twice in one object of a JSON text: the
// service refuses it (docs/result-codes.md), and a schema cannot say it.
func duplicateKey(b []byte) (string, bool) {
	type frame struct {
		keys            map[string]bool
		object, wantKey bool
	}
	var stack []*frame
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		if n := len(stack); n > 0 && stack[n-1].wantKey {
			if k, ok := tok.(string); ok {
				if stack[n-1].keys[k] {
					return k, true
				}
				stack[n-1].keys[k], stack[n-1].wantKey = true, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, object: true, wantKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}
