package api_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
)

// rawClaim sends a claim over a real connection with the Idempotency-Key
// written as is (a client library would refuse to send a control
// character) and returns the answer.
func rawClaim(t *testing.T, addr, token string, template int64, key string) (*http.Response, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"user_id":"raw-key"}`
	fmt.Fprintf(conn, "POST /api/v1/templates/%d/claim HTTP/1.1\r\nHost: couponsvc\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\nIdempotency-Key: %s\r\nConnection: close\r\n\r\n%s",
		template, token, len(body), key, body)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestClaimIdempotencyKeyCharacters: a claim's key with a character outside
// printable ASCII that reaches the service (a tab, a non-ASCII letter) is the
// service's own JSON 400 naming Idempotency-Key, with X-Request-ID; a control
// character other than a tab never reaches it: Go's HTTP server refuses the
// request line by line before any handler (400, text/plain, the connection
// closed), as docs/idempotency.md says. Neither makes a coupon.
func TestClaimIdempotencyKeyCharacters(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	template := e.Template(t, 100, 0, "exclusive")
	srv := httptest.NewServer(e.Router)
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	before := e.Counts(t)
	for _, key := range []string{"a\tb", "clé-1", "key with space"} {
		resp, body := rawClaim(t, addr, e.App, template, key)
		if key == "key with space" {
			// Printable ASCII with spaces: the claim's own rule takes it.
			if resp.StatusCode != 201 {
				t.Fatalf("key %q: %d %s, want 201", key, resp.StatusCode, body)
			}
			continue
		}
		if resp.StatusCode != 400 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
			!strings.Contains(body, `"field":"Idempotency-Key"`) || resp.Header.Get("X-Request-ID") == "" {
			t.Fatalf("key %q: %d %s %v, want the service's JSON 400 naming Idempotency-Key with X-Request-ID",
				key, resp.StatusCode, body, resp.Header)
		}
	}
	for _, key := range []string{"a\x01b", "a\x7fb"} {
		resp, body := rawClaim(t, addr, e.App, template, key)
		if resp.StatusCode != 400 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") ||
			!strings.HasPrefix(body, "400 Bad Request") || resp.Header.Get("X-Request-ID") != "" {
			t.Fatalf("key %q: %d %q %v, want net/http's own 400 (text/plain, before the service)", key, resp.StatusCode, body, resp.Header)
		}
	}
	after := e.Counts(t)
	if after["user_coupons"] != before["user_coupons"]+1 {
		t.Fatalf("coupons %d then %d, want the one claim with a printable key", before["user_coupons"], after["user_coupons"])
	}
}
