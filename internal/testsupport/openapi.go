package testsupport

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/handlers/openapicheck"
)

// OpenAPIDoc is the served document, decoded loosely.
type OpenAPIDoc struct {
	Raw   map[string]any
	Paths map[string]map[string]map[string]any // path → method → operation
}

// FetchOpenAPI gets /api/openapi.json from a router.
func FetchOpenAPI(t *testing.T, e *APIEnv) *OpenAPIDoc {
	t.Helper()
	rec := httptest.NewRecorder()
	e.Router.ServeHTTP(rec, httptest.NewRequest("GET", "/api/openapi.json", nil))
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("GET /api/openapi.json: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	doc := &OpenAPIDoc{}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc.Raw); err != nil {
		t.Fatalf("the document is not JSON: %v", err)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &struct {
		Paths *map[string]map[string]map[string]any `json:"paths"`
	}{&doc.Paths}); err != nil {
		t.Fatalf("paths: %v", err)
	}
	return doc
}

// GinParam finds the parameters of a gin route (":id", "*path").
var GinParam = regexp.MustCompile(`[:*]([A-Za-z0-9_]+)`)

// ResolveRef returns the schema a "#/components/..." reference names.
var ResolveRef = openapicheck.ResolveRef

// CheckAnswer validates an answer body against the document's schema of that
// operation and status: the keys, the required ones, and the types.
func (d *OpenAPIDoc) CheckAnswer(t *testing.T, method, path string, status int, body map[string]any) {
	t.Helper()
	op := d.Paths[path][strings.ToLower(method)]
	if op == nil {
		t.Fatalf("%s %s is not documented", method, path)
	}
	resp, _ := op["responses"].(map[string]any)[fmt.Sprint(status)].(map[string]any)
	if resp == nil {
		t.Fatalf("%s %s: status %d is not documented", method, path, status)
	}
	if r, ok := resp["$ref"].(string); ok {
		resp = ResolveRef(d.Raw, r)
	}
	schema := resp["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
	for _, err := range d.validate(schema, body, "body") {
		t.Errorf("%s %s %d: %s", method, path, status, err)
	}
}

func (d *OpenAPIDoc) validate(schema map[string]any, v any, at string) []string {
	if r, ok := schema["$ref"].(string); ok {
		schema = ResolveRef(d.Raw, r)
	}
	if v == nil {
		if schema["nullable"] == true {
			return nil
		}
		return []string{at + ": null where the schema does not allow it"}
	}
	var errs []string
	switch schema["type"] {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %T, want an object", at, v)}
		}
		props, _ := schema["properties"].(map[string]any)
		for k, x := range obj {
			ps, ok := props[k].(map[string]any)
			if !ok {
				if props != nil && schema["additionalProperties"] == false {
					errs = append(errs, at+"."+k+": not in the schema")
				}
				continue
			}
			errs = append(errs, d.validate(ps, x, at+"."+k)...)
		}
		req, _ := schema["required"].([]any)
		for _, k := range req {
			if _, ok := obj[k.(string)]; !ok {
				errs = append(errs, fmt.Sprintf("%s.%s: required but missing", at, k))
			}
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %T, want an array", at, v)}
		}
		items, _ := schema["items"].(map[string]any)
		for i, x := range arr {
			errs = append(errs, d.validate(items, x, fmt.Sprintf("%s[%d]", at, i))...)
		}
	case "integer":
		if f, ok := v.(float64); !ok || f != float64(int64(f)) {
			errs = append(errs, fmt.Sprintf("%s: %v, want an integer", at, v))
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			errs = append(errs, fmt.Sprintf("%s: %v, want a boolean", at, v))
		}
	case "string":
		if _, ok := v.(string); !ok {
			errs = append(errs, fmt.Sprintf("%s: %v, want a string", at, v))
		}
	}
	if enum, ok := schema["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			found = found || fmt.Sprint(e) == fmt.Sprint(v)
		}
		if !found {
			errs = append(errs, fmt.Sprintf("%s: %v not in %v", at, v, enum))
		}
	}
	return errs
}

// RequestBodySchema returns the documented JSON body of an operation, or nil.
func (d *OpenAPIDoc) RequestBodySchema(method, path string) map[string]any {
	op := d.Paths[GinParam.ReplaceAllString(path, "{$1}")][strings.ToLower(method)]
	body, _ := op["requestBody"].(map[string]any)
	if body == nil {
		return nil
	}
	js, _ := body["content"].(map[string]any)["application/json"].(map[string]any)
	if js == nil {
		return nil // another media type only (a CSV upload)
	}
	schema := js["schema"].(map[string]any)
	if ref, ok := schema["$ref"].(string); ok {
		return ResolveRef(d.Raw, ref) // a named request type's component
	}
	return schema
}
