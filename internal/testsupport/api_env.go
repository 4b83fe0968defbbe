package testsupport

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// AdminToken is the bootstrap admin token of NewAPIEnv and HoldAPI.
const AdminToken = "test-bootstrap-token-0123456789"

// APIEnv is a fixture that calls the JSON API; NewAPIEnv's has an admin
// bootstrap token.
type APIEnv struct{ *Fixture }

// NewAPIEnv returns the router over fresh backends, AdminToken its
// bootstrap token.
func NewAPIEnv(t *testing.T) *APIEnv {
	t.Helper()
	return &APIEnv{NewFixture(t, WithBootstrap(AdminToken))}
}

// Call sends a request and decodes the JSON answer. Every answer must be JSON.
func (e *APIEnv) Call(t *testing.T, method, path, token string, headers map[string]string, body string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	rec := httptest.NewRecorder()
	e.Router.ServeHTTP(rec, req)
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s %s: answer is not JSON (%d): %q", method, path, rec.Code, rec.Body.String())
	}
	return rec.Code, out
}

// MustCall is Call that expects a status.
func (e *APIEnv) MustCall(t *testing.T, want int, method, path, token, body string) map[string]any {
	t.Helper()
	code, out := e.Call(t, method, path, token, nil, body)
	if code != want {
		t.Fatalf("%s %s: status %d, want %d: %v", method, path, code, want, out)
	}
	return out
}

// Counts returns the number of rows of each table that requests may change.
func (e *APIEnv) Counts(t *testing.T) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, table := range []string{"campaigns", "templates", "user_coupons", "api_tokens", "users", "audit_log"} {
		var n int64
		if err := e.Backends.DB.Table(table).Count(&n).Error; err != nil {
			t.Fatalf("count %s: %v", table, err)
		}
		out[table] = n
	}
	return out
}

// AppToken creates an app token and returns it.
func (e *APIEnv) AppToken(t *testing.T) string {
	t.Helper()
	out := e.MustCall(t, 201, "POST", "/api/v1/tokens", AdminToken, `{"role":"app","name":"shop"}`)
	return out["token"].(string)
}

// ValidTemplate is the body of a template the admin may create.
const ValidTemplate = `{"campaign_id":1,"name":"Five off","kind":"fixed","face_value_cents":500,"total_stock":10,"per_user_limit":2,"valid_days":30}`

// EqualCounts reports whether two Counts are the same.
func EqualCounts(a, b map[string]int64) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return len(a) == len(b)
}

// TemplateJSON reads a template as an admin sees it through the API.
func (e *APIEnv) TemplateJSON(t *testing.T, id int) map[string]any {
	t.Helper()
	return e.MustCall(t, 200, "GET", fmt.Sprintf("/api/v1/templates/%d", id), AdminToken, "")["template"].(map[string]any)
}

// FieldErrorBeside is the error shown right after the form control with the
// given id ("" when there is none).
func FieldErrorBeside(body, id string) string {
	m := regexp.MustCompile(`(?s)id="` + regexp.QuoteMeta(id) + `"[^>]*>(?:[^<]*</textarea>)?\s*<p class="field-error"[^>]*>([^<]*)</p>`).
		FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return m[1]
}
