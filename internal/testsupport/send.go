package testsupport

import (
	"net/http/httptest"
	"strings"
)

// Send sends a request through the router: body as contentType (no
// Content-Type when ""), with the bearer token (none when ""), without a
// Content-Length when chunked. It returns the answer as recorded, JSON or not.
func (f *Fixture) Send(method, target, token, contentType, body string, chunked bool) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if chunked {
		req.ContentLength = -1
	}
	rec := httptest.NewRecorder()
	f.Router.ServeHTTP(rec, req)
	return rec
}
