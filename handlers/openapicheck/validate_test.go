package openapicheck_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/handlers/api"
	"github.com/couponsvc/couponsvc/handlers/openapicheck"
	"github.com/couponsvc/couponsvc/handlers/web"

	"github.com/gin-gonic/gin"
)

// smallDoc is a document with one operation and the keywords the
// validator knows.
const smallDoc = `{
 "paths": {"/things/{id}": {"get": {"responses": {
   "200": {"content": {"application/json": {"schema": {"allOf": [
     {"$ref": "#/components/schemas/Thing"},
     {"type": "object", "properties": {"result": {"type": "string", "enum": ["ok", "duplicate"]}}}]}}}},
   "404": {"$ref": "#/components/responses/404"},
   "204": {"description": "nothing"}}}}},
 "components": {
  "responses": {"404": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}},
  "schemas": {
   "Error": {"type": "object", "additionalProperties": false, "required": ["result"],
     "properties": {"result": {"type": "string"}}},
   "Part": {"type": "object", "additionalProperties": false, "required": ["n"],
     "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 9}}},
   "Thing": {"type": "object", "additionalProperties": false, "required": ["result", "name", "parts", "at"],
     "properties": {
      "result": {"type": "string"},
      "name": {"type": "string", "minLength": 2, "maxLength": 4, "pattern": "^[a-z]+$"},
      "price": {"type": "number"},
      "on": {"type": "boolean"},
      "at": {"type": "string", "format": "date-time"},
      "day": {"type": "string", "format": "date"},
      "parts": {"type": "array", "maxItems": 3, "items": {"$ref": "#/components/schemas/Part"}},
      "steps": {"type": "array", "minItems": 1, "items": {"type": "integer"}},
      "main": {"nullable": true, "allOf": [{"$ref": "#/components/schemas/Part"}]},
      "tags": {"type": "object", "additionalProperties": {"type": "string"}},
      "left": {"type": "integer", "nullable": true},
      "raw": {}}}}}}`

func TestValidate(t *testing.T) {
	doc, err := openapicheck.Parse([]byte(smallDoc))
	if err != nil {
		t.Fatal(err)
	}
	const good = `{"result":"ok","name":"abc","parts":[{"n":1},{"n":9}],"at":"2026-12-03T10:00:00.5Z"`
	for _, tc := range []struct {
		name, body string
		want       []string // the violations, in order
	}{
		{"the least", good + `}`, nil},
		{"every field", good + `,"price":1.5,"on":true,"day":"2026-12-03","main":{"n":2},"tags":{"a":"b"},"left":null,"raw":[1,"x"]}`, nil},
		{"null where nullable", good + `,"main":null,"left":3}`, nil},
		{"a required field missing", `{"result":"ok","name":"abc","parts":[]}`, []string{"body.at: required but missing"}},
		{"a field not in the schema", good + `,"colour":"red"}`, []string{"body.colour: not in the schema"}},
		{"a word not in the enumeration", `{"result":"sold","name":"abc","parts":[],"at":"2026-12-03T10:00:00Z"}`,
			[]string{`body.result: "sold" is not one of [ok duplicate]`}},
		{"a string for an integer", good + `,"left":"3"}`, []string{`body.left: "3", want integer`}},
		{"a fraction for an integer", good + `,"left":3.5}`, []string{`body.left: 3.5, want integer`}},
		{"a number for a boolean", good + `,"on":1}`, []string{`body.on: 1, want boolean`}},
		{"null where not nullable", good + `,"price":null}`, []string{"body.price: null where the schema does not allow it"}},
		{"an object for an array", `{"result":"ok","name":"abc","parts":{},"at":"2026-12-03T10:00:00Z"}`,
			[]string{"body.parts: {}, want array"}},
		{"an item of an array through its reference", `{"result":"ok","name":"abc","parts":[{"n":1},{"m":2}],"at":"2026-12-03T10:00:00Z"}`,
			[]string{"body.parts[1].m: not in the schema", "body.parts[1].n: required but missing"}},
		{"out of range", good + `,"main":{"n":10}}`, []string{"body.main.n: 10 is above the maximum 9"}},
		{"below range", good + `,"main":{"n":0}}`, []string{"body.main.n: 0 is below the minimum 1"}},
		{"too many items", `{"result":"ok","name":"abc","parts":[{"n":1},{"n":2},{"n":3},{"n":4}],"at":"2026-12-03T10:00:00Z"}`,
			[]string{"body.parts: 4 items, more than maxItems 3"}},
		{"too few items", good + `,"steps":[]}`, []string{"body.steps: 0 items, fewer than minItems 1"}},
		{"too long, and the pattern", `{"result":"ok","name":"ABCDE","parts":[],"at":"2026-12-03T10:00:00Z"}`,
			[]string{`body.name: "ABCDE" is longer than 4`, `body.name: "ABCDE" does not match ^[a-z]+$`}},
		{"not a time", `{"result":"ok","name":"ab","parts":[],"at":"yesterday"}`, []string{`body.at: "yesterday" is not an RFC 3339 time`}},
		{"not a date", good + `,"day":"3 Dec"}`, []string{`body.day: "3 Dec" is not a date (YYYY-MM-DD)`}},
		{"a map's value", good + `,"tags":{"a":1}}`, []string{"body.tags.a: 1, want string"}},
		{"not an object", `[1]`, []string{"body: [1], want object", "body: [1], want object"}},
		{"not JSON", `{"result":`, []string{`the body is not JSON: unexpected EOF: "{\"result\":"`}},
		{"two values", `{} {}`, []string{`the body is more than one JSON value: "{} {}"`}},
	} {
		got := doc.CheckAnswer("GET", "/things/:id", 200, []byte(tc.body))
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		status int
		want   string
	}{
		{404, "[]"},
		{409, `["GET /things/:id: the document has no answer 409"]`},
		{204, `["GET /things/:id: the answer 204 is not JSON in the document"]`},
	} {
		if got := fmt.Sprintf("%q", doc.CheckAnswer("GET", "/things/:id", tc.status, []byte(`{"result":"not_found"}`))); got != tc.want && !(tc.want == "[]" && got == "[]") {
			t.Errorf("status %d: %s, want %s", tc.status, got, tc.want)
		}
	}
	if got := doc.CheckAnswer("POST", "/things/:id", 200, []byte(`{}`)); fmt.Sprint(got) != "[POST /things/:id is not in the document]" {
		t.Errorf("an operation not documented: %q", got)
	}
	if got := doc.UnknownKeywords(); len(got) != 0 {
		t.Errorf("unknown keywords in the small document: %v", got)
	}
	other, _ := openapicheck.Parse([]byte(`{"paths":{},"components":{"schemas":{"X":{"type":"object","oneOf":[],"properties":{"a":{"const":1}}}}}}`))
	if got := fmt.Sprint(other.UnknownKeywords()); got != "[const oneOf]" {
		t.Errorf("unknown keywords: %s, want [const oneOf]", got)
	}
}

// TestValidateServiceDocument checks answers of the claim against the
// document of the API's routes: the validator knows every keyword it uses,
// and a wrong answer is refused.
func TestValidateServiceDocument(t *testing.T) {
	doc, err := openapicheck.Parse(web.OpenAPIJSON((*api.Server)(nil).Routes()))
	if err != nil {
		t.Fatal(err)
	}
	if got := doc.UnknownKeywords(); len(got) != 0 {
		t.Errorf("the document uses keywords the validator does not know: %v", got)
	}
	coupon := `{"id":1,"code":"ABCDEFGHJKLMN","template_id":2,"user_id":"u1","status":"issued","claimed_at":"2026-12-03T10:00:00Z",` +
		`"campaign_id":3,"value_cents":500,"updated_at":"2026-12-03T10:00:00Z","valid_from":"2026-12-03T10:00:00Z","valid_until":"2027-12-03T10:00:00Z","used_at":null,"order_id":null,"version":1,"currency":"EUR"}`
	good := `{"code":0,"result":"claimed","error":"","coupon":` + coupon + `,"remaining":4}`
	errs := doc.CheckAnswer("POST", "/api/v1/templates/:id/claim", 201, []byte(good))
	if len(errs) > 0 {
		// The coupon's fields are the model's: say which differ before the
		// cases below, which expect exactly one violation each.
		t.Fatalf("a claimed coupon: %q", errs)
	}
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"another result word", 201, strings.Replace(good, `"claimed"`, `"redeemed"`, 1), `body.result: "redeemed" is not one of [claimed]`},
		{"a duplicate's code on a 201", 201, strings.Replace(good, `"code":0`, `"code":1`, 1), `body.code: 1 is not one of [0]`},
		{"the remaining stock missing", 201, strings.Replace(good, `,"remaining":4`, ``, 1), `body.remaining: required but missing`},
		{"a field of another answer", 201, strings.Replace(good, `"remaining":4`, `"remaining":4,"discount_cents":1`, 1), `body.discount_cents: not in the schema`},
		{"a duplicate answered 200 claimed", 200, strings.Replace(good, `"code":0`, `"code":1`, 1), `body.result: "claimed" is not one of [duplicate]`},
		{"an error answer without its word", 409, `{"code":2,"error":"sold out"}`, `body.result: required but missing`},
	} {
		got := doc.CheckAnswer("POST", "/api/v1/templates/:id/claim", tc.status, []byte(tc.body))
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: %q, want [%q]", tc.name, got, tc.want)
		}
	}
}

// TestCheckEvent: an event is checked against its type's schema under
// x-webhooks.
func TestCheckEvent(t *testing.T) {
	doc, err := openapicheck.Parse(web.OpenAPIJSON((*api.Server)(nil).Routes()))
	if err != nil {
		t.Fatal(err)
	}
	good := `{"id":7,"type":"template.paused","created_at":"2026-12-03T10:00:00Z",` +
		`"data":{"template_id":2,"campaign_id":1,"name":"Ten off","status":"paused","total_stock":100,"actor":"admin"}}`
	if errs := doc.CheckEvent([]byte(good)); len(errs) > 0 {
		t.Fatalf("a template.paused event: %q", errs)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"a field of another event's data", strings.Replace(good, `"actor":"admin"`, `"actor":"admin","coupon_id":3`, 1), `event.data.coupon_id: not in the schema`},
		{"a field missing", strings.Replace(good, `"total_stock":100,`, ``, 1), `event.data.total_stock: required but missing`},
		{"an unknown type", strings.Replace(good, `template.paused`, `template.painted`, 1), `event type "template.painted" has no schema under x-webhooks`},
	} {
		if got := doc.CheckEvent([]byte(tc.body)); len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: %q, want [%q]", tc.name, got, tc.want)
		}
	}
}

// TestRecorder serves a route of the small document through the recorder:
// a good answer passes, a bad one is reported, and the counts say which
// routes were checked.
func TestRecorder(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	doc, err := openapicheck.Parse([]byte(smallDoc))
	if err != nil {
		t.Fatal(err)
	}
	rec := openapicheck.NewRecorder(doc, nil)
	var failures []string
	r := gin.New()
	r.Use(rec.Middleware(func(format string, args ...any) { failures = append(failures, fmt.Sprintf(format, args...)) }))
	r.GET("/things/:id", func(c *gin.Context) {
		switch c.Param("id") {
		case "good":
			c.Data(200, "application/json; charset=utf-8", []byte(`{"result":"ok","name":"ab","parts":[],"at":"2026-12-03T10:00:00Z"}`))
		case "bad":
			c.JSON(200, gin.H{"result": "ok"})
		case "text":
			c.String(200, "not checked")
		default:
			c.JSON(404, gin.H{"result": "not_found"})
		}
	})
	r.NoRoute(func(c *gin.Context) {
		if c.Request.URL.Path == "/page" {
			c.JSON(405, gin.H{"result": "invalid_request"})
			return
		}
		c.JSON(404, gin.H{"result": 3})
	})
	get := func(path string) {
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
	}
	for _, path := range []string{"/things/good", "/things/none", "/things/text", "/api/unknown", "/page"} {
		get(path)
	}
	if len(failures) != 1 || !strings.Contains(failures[0], "body.result: 3, want string") {
		t.Errorf("failures: %q, want one about /api/unknown's result", failures)
	}
	get("/things/bad")
	if len(failures) != 4 || !strings.Contains(failures[1], "body.name: required but missing") ||
		!strings.Contains(failures[2], "body.parts: required but missing") || !strings.Contains(failures[3], "body.at: required but missing") {
		t.Errorf("failures: %q, want three more about the bad answer", failures)
	}
	if answers, routes := rec.Answers(); answers != 5 || routes != 1 {
		t.Errorf("%d answers of %d routes checked, want 5 of 1", answers, routes)
	}
	if got := rec.Unchecked([]string{"GET /things/:id", "POST /things/:id"}); fmt.Sprint(got) != "[POST /things/:id]" {
		t.Errorf("unchecked: %v, want [POST /things/:id]", got)
	}
}
