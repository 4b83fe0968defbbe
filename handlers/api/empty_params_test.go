package api_test

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
)

// emptyParamPaths fills the path parameters of the document's paths: the
// empty parameter is refused before anything is looked up.
var emptyParamPaths = strings.NewReplacer("{id}", "1", "{user_id}", "u1", "{code}", "ABCDEFGHJKLMN",
	"{order_id}", "o1", "{delivery_id}", "1")

// TestEmptyParamsRefused sends every query parameter and every header
// parameter of the document (Idempotency-Key included) with an empty value,
// which no schema takes: each is refused 400 naming it, and nothing is made.
func TestEmptyParamsRefused(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	doc := testsupport.FetchOpenAPI(t, e)
	tokens := map[string]string{"admin": testsupport.AdminToken, "app": e.AppToken(t)}
	cashier := e.MustCall(t, 201, "POST", "/api/v1/tokens", testsupport.AdminToken, `{"role":"cashier","name":"till"}`)
	tokens["cashier"] = cashier["token"].(string)
	before := e.Counts(t)
	var sent []string
	paths := make([]string, 0, len(doc.Paths))
	for p := range doc.Paths {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, path := range paths {
		for method, op := range doc.Paths[path] {
			params, _ := op["parameters"].([]any)
			token := testsupport.AdminToken
			if roles, ok := op["x-roles"].([]any); ok && !slices.Contains(roles, any("admin")) {
				token = tokens[roles[0].(string)]
			}
			for _, p := range params {
				p := p.(map[string]any)
				name, in := p["name"].(string), p["in"].(string)
				if in == "path" {
					continue
				}
				req := httptest.NewRequest(strings.ToUpper(method), emptyParamPaths.Replace(path), strings.NewReader(`{}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+token)
				if in == "query" {
					req.URL.RawQuery = name + "="
				} else {
					req.Header[name] = []string{""}
				}
				rec := httptest.NewRecorder()
				e.Router.ServeHTTP(rec, req)
				var out map[string]any
				_ = json.Unmarshal(rec.Body.Bytes(), &out)
				if rec.Code != 400 || out["field"] != name {
					t.Errorf("%s %s with %s %s empty: %d %s, want 400 naming %s", method, path, in, name, rec.Code, rec.Body.String(), name)
				}
				sent = append(sent, method+" "+path+" "+name)
			}
		}
	}
	// The lists (after, limit), stats (hours), the export (status, from, to),
	// the reports (from, by...), claim and every changing request
	// (Idempotency-Key): about sixty in all.
	if len(sent) < 50 {
		t.Fatalf("sent %d empty parameters, want at least 50: %v", len(sent), sent)
	}
	// A valid body with an empty key creates nothing either.
	req := httptest.NewRequest("POST", "/api/v1/campaigns", strings.NewReader(`{"name":"Empty key"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testsupport.AdminToken)
	req.Header["Idempotency-Key"] = []string{""}
	rec := httptest.NewRecorder()
	e.Router.ServeHTTP(rec, req)
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), `"field":"Idempotency-Key"`) {
		t.Fatalf("a campaign with an empty Idempotency-Key: %d %s, want 400 naming Idempotency-Key", rec.Code, rec.Body.String())
	}
	if after := e.Counts(t); !testsupport.EqualCounts(before, after) {
		t.Fatalf("rows changed: %v, then %v", before, after)
	}
}
