package webhook

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestSignKnownValue: Sign, with which the service signs its deliveries,
// writes "t=<unix>,v1=<hex HMAC-SHA256 of "<unix>.<body>">" (the value
// below computed with openssl).
func TestSignKnownValue(t *testing.T) {
	got := Sign("whsec_test_secret_123", time.Unix(1764590400, 0), []byte(`{"id":1}`))
	const want = "t=1764590400,v1=aa53a46eb32b0d00fbbe8b40a6fd0a36cfa35d0863a71ad40f6c4dd781ee542c"
	if got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
}

// The signatures are made by the service's own signer, so a change on
// either side that breaks receivers fails here.
func TestVerify(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"id":7,"type":"coupon.redeemed"}`)
	header := Sign("new-secret", now, body)
	cases := []struct {
		name      string
		header    string
		body      []byte
		at        time.Time
		tolerance time.Duration
		secrets   []string
		want      error
	}{
		{"the secret", header, body, now, 0, []string{"new-secret"}, nil},
		{"rotation: old and new", header, body, now, 0, []string{"old-secret", "new-secret"}, nil},
		{"only the old secret", header, body, now, 0, []string{"old-secret"}, ErrNoMatch},
		{"a changed body", header, []byte(`{"id":8,"type":"coupon.redeemed"}`), now, 0, []string{"new-secret"}, ErrNoMatch},
		{"within the default tolerance", header, body, now.Add(DefaultTolerance), 0, []string{"new-secret"}, nil},
		{"past the default tolerance", header, body, now.Add(DefaultTolerance + time.Second), 0, []string{"new-secret"}, ErrTooOld},
		{"from the future", header, body, now.Add(-DefaultTolerance - time.Second), 0, []string{"new-secret"}, ErrTooOld},
		{"a tighter tolerance", header, body, now.Add(31 * time.Second), 30 * time.Second, []string{"new-secret"}, ErrTooOld},
		{"no header", "", body, now, 0, []string{"new-secret"}, ErrNoSignature},
		{"no secret", header, body, now, 0, nil, ErrNoSecret},
		{"only empty secrets", Sign("", now, body), body, now, 0, []string{""}, ErrNoSecret},
		{"an empty old secret is skipped", Sign("", now, body), body, now, 0, []string{"new-secret", ""}, ErrNoMatch},
		{"no time", strings.Split(header, ",")[1], body, now, 0, []string{"new-secret"}, ErrMalformed},
		{"no v1", strings.Split(header, ",")[0], body, now, 0, []string{"new-secret"}, ErrMalformed},
		{"a short v1", "t=1800000000,v1=abcd", body, now, 0, []string{"new-secret"}, ErrMalformed},
		{"a later scheme next to v1", header + ",v2=zz", body, now, 0, []string{"new-secret"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := verifyAt(c.header, c.body, c.at, c.tolerance, c.secrets); !errors.Is(err, c.want) {
				t.Fatalf("verify = %v, want %v", err, c.want)
			}
		})
	}
}

func TestRead(t *testing.T) {
	body := `{"id":1,"type":"coupon.claimed"}`
	req := httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(body))
	req.Header.Set(Header, Sign("s3cret", time.Now(), []byte(body)))
	got, err := Read(req, 0, "s3cret")
	if err != nil || string(got) != body {
		t.Fatalf("Read = %q, %v; want the body", got, err)
	}
	req = httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(body))
	req.Header.Set(Header, Sign("other", time.Now(), []byte(body)))
	if got, err := Read(req, 0, "s3cret"); !errors.Is(err, ErrNoMatch) || got != nil {
		t.Fatalf("Read of a foreign signature = %q, %v; want nil, ErrNoMatch", got, err)
	}
}
