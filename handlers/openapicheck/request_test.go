package openapicheck_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/handlers/openapicheck"

	"github.com/gin-gonic/gin"
)

// requestDoc is a document with one operation taking parameters and a body.
const requestDoc = `{
 "paths": {"/things/{id}": {"post": {
   "parameters": [
     {"name": "id", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 1}},
     {"name": "limit", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "maximum": 10}},
     {"name": "Idempotency-Key", "in": "header", "required": true, "schema": {"type": "string", "minLength": 1, "pattern": "^[!-~]+$"}}],
   "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object",
     "additionalProperties": false, "required": ["name"],
     "properties": {"name": {"type": "string", "maxLength": 4}, "note": {"type": "string"},
       "lines": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}}}}}}}}},
   "responses": {"400": {"content": {"application/json": {"schema": {"type": "object"}}}}}}}}}`

// TestRecorderRequests: a request the server refuses 400 is a violation when
// the document takes it, unless the field it names has a rule stated in words;
// one the document refuses (a parameter, a header, the body, a key given
// twice) is none.
func TestRecorderRequests(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	doc, err := openapicheck.Parse([]byte(requestDoc))
	if err != nil {
		t.Fatal(err)
	}
	rec := openapicheck.NewRecorder(doc, map[string]string{"POST /things/:id note": "stated in words",
		"* * lines[].id": "each line once"})
	var failures []string
	r := gin.New()
	r.Use(rec.Middleware(func(format string, args ...any) { failures = append(failures, fmt.Sprintf(format, args...)) }))
	r.POST("/things/:id", func(c *gin.Context) {
		c.JSON(400, gin.H{"result": "invalid_request", "field": c.Query("field")})
	})
	send := func(id, query, key, body string) {
		req := httptest.NewRequest(http.MethodPost, "/things/"+id+"?"+query, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if key != "-" {
			req.Header["Idempotency-Key"] = []string{key}
		}
		r.ServeHTTP(httptest.NewRecorder(), req)
	}
	for _, tc := range []struct {
		id, query, key, body string
		violation            bool
	}{
		{"1", "field=name", "k", `{"name":"ab"}`, true},
		{"1", "field=note", "k", `{"name":"ab","note":"x"}`, false},
		{"1", "field=lines[3].id", "k", `{"name":"ab","lines":[{"id":"a"}]}`, false},
		{"1", "field=lines[3].other", "k", `{"name":"ab","lines":[{"id":"a"}]}`, true},
		{"0", "field=id", "k", `{"name":"ab"}`, false},
		{"x", "field=id", "k", `{"name":"ab"}`, false},
		{"1", "field=limit&limit=11", "k", `{"name":"ab"}`, false},
		{"1", "field=limit&limit=", "k", `{"name":"ab"}`, false},
		{"1", "field=Idempotency-Key", "", `{"name":"ab"}`, false},
		{"1", "field=Idempotency-Key", "a b", `{"name":"ab"}`, false},
		{"1", "field=Idempotency-Key", "-", `{"name":"ab"}`, false},
		{"1", "field=name", "k", `{"name":"abcde"}`, false},
		{"1", "field=name", "k", `{"name":"ab","name":"cd"}`, false},
		{"1", "field=body", "k", `{"name":"ab"} {}`, false},
		{"1", "field=body", "k", "{\"name\":\"a\xffb\"}", false},
		{"1", "field=body", "k", ``, false},
	} {
		before := len(failures)
		send(tc.id, tc.query, tc.key, tc.body)
		if got := len(failures) > before; got != tc.violation {
			t.Errorf("%s ?%s key %q %s: violation %v, want %v (%q)", tc.id, tc.query, tc.key, tc.body, got, tc.violation, failures[before:])
		}
	}
	if requests, refused := rec.Requests(); requests != 16 || refused != 16 {
		t.Errorf("%d requests checked, %d refused; want 16 and 16", requests, refused)
	}
}
