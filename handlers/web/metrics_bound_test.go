package web_test

import (
	"math/rand"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
)

// requestSeries returns the labels of every couponsvc_http_requests_total
// series of a scrape, with their values.
func requestSeries(t *testing.T, text string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	re := regexp.MustCompile(`(?m)^couponsvc_http_requests_total\{([^}]*)\} ([0-9.e+-]+)$`)
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			t.Fatalf("parse %q: %v", m[0], err)
		}
		out[m[1]] = v
	}
	return out
}

var labelRe = regexp.MustCompile(`(\w+)="([^"]*)"`)

func labels(series string) map[string]string {
	out := map[string]string{}
	for _, m := range labelRe.FindAllStringSubmatch(series, -1) {
		out[m[1]] = m[2]
	}
	return out
}

// TestMetricsBounded floods the router with invented methods and paths: the
// labels of the request metrics stay within the routes and methods the
// service knows, and /metrics stays small.
func TestMetricsBounded(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	routes := map[string]bool{"unmatched": true}
	for _, r := range e.Router.Routes() {
		routes[r.Path] = true
	}
	methods := map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true,
		"DELETE": true, "OPTIONS": true, "other": true}
	known := []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
	prefixes := []string{"/", "/api/v1/", "/api/v1/templates/", "/api/v1/coupons/", "/api/v1/users/",
		"/static/", "/admin/templates/", "/pos/", "/metrics/"}

	before := testsupport.Scrape(t, e)
	rng := rand.New(rand.NewSource(1))
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('A' + rng.Intn(26))
		}
		return string(b)
	}
	const n = 3000
	invented := map[string]bool{}
	for i := 0; i < n; i++ {
		method := known[rng.Intn(len(known))]
		if i%2 == 0 {
			method = word(4 + rng.Intn(12))
			invented[method] = true
		}
		path := prefixes[rng.Intn(len(prefixes))] + strings.ToLower(word(1+rng.Intn(20)))
		if i%3 == 0 {
			path += "/" + strconv.Itoa(i)
		}
		e.Router.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, path, nil))
	}
	if len(invented) < n/2-10 {
		t.Fatalf("only %d invented methods", len(invented))
	}
	after := testsupport.Scrape(t, e)

	// Every request is counted, under labels from the fixed sets.
	var counted float64
	series := requestSeries(t, after)
	for s, v := range series {
		l := labels(s)
		if !methods[l["method"]] {
			t.Errorf("method label %q in %s", l["method"], s)
		}
		if !routes[l["route"]] {
			t.Errorf("route label %q in %s", l["route"], s)
		}
		counted += v
	}
	for _, v := range requestSeries(t, before) {
		counted -= v
	}
	// The scrape itself is counted after it is served.
	if counted != n+1 {
		t.Errorf("requests counted %v, want %d", counted, n+1)
	}
	if len(series) > 100 {
		t.Errorf("%d request series after %d requests", len(series), n)
	}
	re := regexp.MustCompile(`(?m)^couponsvc_http_request_duration_seconds_count\{route="([^"]*)"\}`)
	for _, m := range re.FindAllStringSubmatch(after, -1) {
		if !routes[m[1]] {
			t.Errorf("latency route label %q", m[1])
		}
	}
	if len(after) > 64<<10 || len(after)-len(before) > 32<<10 {
		t.Errorf("/metrics grew from %d to %d bytes", len(before), len(after))
	}
	t.Logf("metrics %d -> %d bytes, %d series", len(before), len(after), len(series))
}
