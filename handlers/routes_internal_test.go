package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/testenv"

	"github.com/gin-gonic/gin"
)

// pingRequest is the body of the endpoint TestRouteOneRowIsAnEndpoint adds.
type pingRequest struct {
	Echo *string `json:"echo" binding:"required" doc:"what to say back"`
}

// pingAnswer is its answer.
type pingAnswer struct {
	Echo string `json:"echo" doc:"what was said"`
}

// ping is the handler of that endpoint.
func ping(c *gin.Context) {
	var req pingRequest
	if !web.BindJSON(c, &req) {
		return
	}
	if err := web.Required("echo", req.Echo); err != nil {
		web.RespondError(c, err)
		return
	}
	web.Respond(c, http.StatusOK, "ok", pingAnswer{Echo: *req.Echo})
}

// TestRouteOneRowIsAnEndpoint adds one row and a handler to the table, and
// finds the endpoint routed, guarded by its roles, and documented with its
// body, its answer and its roles.
func TestRouteOneRowIsAnEndpoint(t *testing.T) {
	env := testenv.New(t, services.Config{})
	row := web.Route{Method: "POST", Path: "/api/v1/ping", Roles: web.Roles(models.RoleCashier, models.RoleAdmin),
		Handler: ping, Tag: "admin", Summary: "Say something back", Request: web.TypeOf[pingRequest](),
		Status: 200, Results: []string{"ok"}, Answer: web.TypeOf[pingAnswer]()}
	router := newRouter(env.Service, Options{Logger: env.Config.Logger}, row)

	tokens := map[string]string{}
	for _, role := range []string{models.RoleApp, models.RoleCashier, models.RoleAdmin} {
		token, _, err := env.Service.CreateToken(context.Background(), "test", role, "ping-"+role)
		if err != nil {
			t.Fatal(err)
		}
		tokens[role] = "Bearer " + token
	}
	call := func(method, target, auth, body string) (int, map[string]any) {
		req := httptest.NewRequest(method, target, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		router.ServeHTTP(rec, req)
		var out map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("%s %s: not JSON: %d %q", method, target, rec.Code, rec.Body.String())
		}
		return rec.Code, out
	}
	for _, tc := range []struct {
		who, auth, body string
		status          int
		result          string
	}{
		{"anonymous", "", `{"echo":"hi"}`, 401, "unauthorized"},
		{"app", tokens[models.RoleApp], `{"echo":"hi"}`, 403, "forbidden"},
		{"cashier", tokens[models.RoleCashier], `{"echo":"hi"}`, 200, "ok"},
		{"admin", tokens[models.RoleAdmin], `{"echo":"hi"}`, 200, "ok"},
		{"admin without echo", tokens[models.RoleAdmin], `{}`, 400, "invalid_request"},
	} {
		status, out := call("POST", "/api/v1/ping", tc.auth, tc.body)
		if status != tc.status || out["result"] != tc.result {
			t.Errorf("as %s: %d %v, want %d %s", tc.who, status, out, tc.status, tc.result)
		}
		if status == 200 && out["echo"] != "hi" {
			t.Errorf("as %s: %v, want the echo", tc.who, out)
		}
	}
	if status, out := call("GET", "/api/v1/ping", tokens[models.RoleAdmin], ""); status != 405 || out["result"] != "invalid_request" {
		t.Errorf("GET: %d %v, want 405 invalid_request", status, out)
	}

	status, doc := call("GET", "/api/openapi.json", "", "")
	if status != 200 {
		t.Fatalf("the document: %d", status)
	}
	op, _ := doc["paths"].(map[string]any)["/api/v1/ping"].(map[string]any)["post"].(map[string]any)
	if op == nil {
		t.Fatalf("POST /api/v1/ping is not documented")
	}
	body := op["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"]
	answer := op["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"]
	// Both are named schemas: the request's, and the answer's with the
	// route's result words beside it.
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	if got := fmt.Sprint(body); got != "map[$ref:#/components/schemas/PingRequest]" {
		t.Errorf("documented body: %s, want a reference to PingRequest", got)
	}
	if got := fmt.Sprint(answer.(map[string]any)["allOf"].([]any)[0]); got != "map[$ref:#/components/schemas/PingAnswer]" {
		t.Errorf("documented answer: %s, want a reference to PingAnswer", got)
	}
	body, answer = schemas["PingRequest"], schemas["PingAnswer"]
	for what, got := range map[string]string{
		"roles":  fmt.Sprint(op["x-roles"]),
		"body":   fmt.Sprint(body),
		"answer": fmt.Sprint(answer.(map[string]any)["properties"].(map[string]any)["echo"]),
		"errors": fmt.Sprint(op["x-error-results"]),
	} {
		want := map[string]string{
			"roles": "[cashier admin]",
			"body": "map[additionalProperties:false properties:map[echo:map[description:what to say back type:string]] " +
				"required:[echo] type:object]",
			"answer": "map[description:what was said type:string]",
			// A POST of the API takes an Idempotency-Key: in_progress and
			// idempotency_mismatch come with it.
			"errors": "[400: invalid_request 401: unauthorized 403: forbidden 409: in_progress 413: invalid_request 415: invalid_request 422: idempotency_mismatch 429: rate_limited 503: unavailable]",
		}[what]
		if got != want {
			t.Errorf("documented %s: %s, want %s", what, got, want)
		}
	}
}
