package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"

	"github.com/gin-gonic/gin"
)

// thingAnswer and otherAnswer are answers of a test route.
type thingAnswer struct {
	Name  string              `json:"name" doc:"the thing's name"`
	Size  *int64              `json:"size,omitempty"`
	Parts []models.FieldError `json:"parts"`
}

type otherAnswer struct {
	Name string `json:"name"`
}

// TestRespondSendsTheRowsType: Respond writes code, result and error, then
// the payload's fields; a handler answering another type than its row's is
// a 500, so that any test of the route finds the mistake.
func TestRespondSendsTheRowsType(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	row := web.Route{Method: "GET", Path: "/things/:what", Answer: web.TypeOf[thingAnswer]()}
	r := gin.New()
	r.GET(row.Path, web.ExpectAnswer(row), func(c *gin.Context) {
		switch c.Param("what") {
		case "ok":
			web.Respond(c, http.StatusCreated, "ok", thingAnswer{Name: "a<b"})
		case "duplicate":
			size := int64(3)
			web.Respond(c, http.StatusOK, "duplicate", thingAnswer{Name: "a", Size: &size, Parts: []models.FieldError{}})
		case "other":
			web.Respond(c, http.StatusOK, "ok", otherAnswer{Name: "a"})
		case "error":
			web.Answer(c, models.Errorf(models.CodeNotFound, "no such thing"), http.StatusOK, "ok", thingAnswer{})
		}
	})
	r.GET("/none", func(c *gin.Context) { web.Respond(c, http.StatusOK, "ok", web.NoPayload{}) })
	r.GET("/nil", func(c *gin.Context) { web.Respond(c, http.StatusOK, "ok", (*thingAnswer)(nil)) })
	for _, tc := range []struct {
		path   string
		status int
		body   string
	}{
		{"/things/ok", 201, `{"code":0,"result":"ok","error":"","name":"a\u003cb","parts":null}`},
		{"/things/duplicate", 200, `{"code":1,"result":"duplicate","error":"","name":"a","size":3,"parts":[]}`},
		{"/things/other", 500, `{"code":99,"result":"internal","error":"internal error"}`},
		{"/things/error", 404, `{"code":10,"result":"not_found","error":"no such thing"}`},
		{"/none", 200, `{"code":0,"result":"ok","error":""}`},
		{"/nil", 500, `{"code":99,"result":"internal","error":"internal error"}`},
	} {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest("GET", tc.path, nil))
		if rec.Code != tc.status || rec.Body.String() != tc.body || rec.Header().Get("Content-Type") != "application/json; charset=utf-8" {
			t.Errorf("%s: %d %s %s, want %d %s", tc.path, rec.Code, rec.Header().Get("Content-Type"), rec.Body, tc.status, tc.body)
		}
	}
}

// TestOpenAPINamedSchemas: the row's request and answer types are component
// schemas referred to by name, the answer's with the envelope's fields, and
// a named type inside one is a component too.
func TestOpenAPINamedSchemas(t *testing.T) {
	type thingRequest struct {
		Name *string `json:"name" binding:"required" doc:"a name"`
	}
	rows := []web.Route{{Method: "POST", Path: "/api/v1/things", Summary: "Make a thing", Tag: "admin",
		Request: web.TypeOf[thingRequest](), Status: 201, Results: []string{"ok"}, Duplicate200: true,
		Answer: web.TypeOf[thingAnswer]()}}
	var doc struct {
		Paths      map[string]map[string]map[string]any `json:"paths"`
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(web.OpenAPIJSON(rows), &doc); err != nil {
		t.Fatal(err)
	}
	op := doc.Paths["/api/v1/things"]["post"]
	schemaOf := func(v any) string {
		return fmt.Sprint(v.(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"])
	}
	responses := op["responses"].(map[string]any)
	for what, got := range map[string]string{
		"request": schemaOf(op["requestBody"]),
		"201":     schemaOf(responses["201"]),
		"200":     schemaOf(responses["200"]),
		"thing":   fmt.Sprint(doc.Components.Schemas["ThingAnswer"]),
		"field":   fmt.Sprint(doc.Components.Schemas["FieldError"]),
		"error":   fmt.Sprint(doc.Components.Schemas["ErrorBody"].(map[string]any)["required"]),
	} {
		want := map[string]string{
			"request": "map[$ref:#/components/schemas/ThingRequest]",
			"201": "map[allOf:[map[$ref:#/components/schemas/ThingAnswer] map[properties:map[code:map[enum:[0] type:integer] " +
				"result:map[description:one of: ok enum:[ok] type:string]] type:object]]]",
			"200": "map[allOf:[map[$ref:#/components/schemas/ThingAnswer] map[properties:map[code:map[enum:[0 1] type:integer] " +
				"result:map[description:one of: ok, duplicate enum:[ok duplicate] type:string]] type:object]]]",
			"thing": "map[additionalProperties:false properties:map[" +
				"code:map[description:0 done, 1 duplicate (a replay, answered with the first answer) format:int64 type:integer] " +
				"duplicate:map[description:true on a replay of an Idempotency-Key's first answer (its fields and result word as they were; " +
				"header Idempotent-Replayed: true) type:boolean] " +
				"error:map[description:empty type:string] name:map[description:the thing's name type:string] " +
				"parts:map[items:map[$ref:#/components/schemas/FieldError] type:array] result:map[description:the result word type:string] " +
				"size:map[format:int64 nullable:true type:integer]] required:[code error name parts result] type:object]",
			"field": "map[additionalProperties:false properties:map[field:map[type:string] message:map[type:string]] required:[field message] type:object]",
			"error": "[code error result]",
		}[what]
		if got != want {
			t.Errorf("%s: %s\nwant %s", what, got, want)
		}
	}
	if _, ok := doc.Components.Schemas["ThingRequest"]; !ok {
		t.Errorf("no component ThingRequest: %v", doc.Components.Schemas)
	}
	if _, ok := doc.Components.Schemas["FieldError"]; !ok {
		t.Errorf("no component FieldError for models.FieldError: %v", doc.Components.Schemas)
	}
}

// TestOpenAPIRefusesAnonymousAnswers: a row naming an anonymous struct is a
// bug the document's construction refuses.
func TestOpenAPIRefusesAnonymousAnswers(t *testing.T) {
	defer func() {
		if v := recover(); v == nil || fmt.Sprint(v) != "couponsvc: a request or answer must be a named struct type, not struct { Name string }" {
			t.Errorf("recovered %v", v)
		}
	}()
	web.OpenAPIJSON([]web.Route{{Method: "GET", Path: "/api/v1/x", Status: 200, Results: []string{"ok"},
		Answer: web.TypeOf[struct{ Name string }]()}})
}
