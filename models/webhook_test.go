package models_test

import (
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
)

// TestWebhookSignature: a receiver accepts the header "t=<unix>,v1=<hex
// HMAC-SHA256 of "<unix>.<body>">" (the value below computed with openssl,
// which client/webhook's TestSignKnownValue pins the service's signer to)
// only with the right secret and body within the tolerance.
func TestWebhookSignature(t *testing.T) {
	const secret = "whsec_test_secret_123"
	at := time.Unix(1764590400, 0)
	body := []byte(`{"id":1}`)
	const want = "t=1764590400,v1=aa53a46eb32b0d00fbbe8b40a6fd0a36cfa35d0863a71ad40f6c4dd781ee542c"
	h := want
	cases := []struct {
		name, secret, header string
		body                 []byte
		now                  time.Time
		ok                   bool
	}{
		{"OK", secret, h, body, at, true},
		{"OKWithinTolerance", secret, h, body, at.Add(4 * time.Minute), true},
		{"OKSecondSignature", secret, "t=1764590400,v1=00,v1=" + want[len("t=1764590400,v1="):], body, at, true},
		{"ErrOtherSecret", "whsec_other_secret_456", h, body, at, false},
		{"ErrBodyChanged", secret, h, []byte(`{"id":2}`), at, false},
		{"ErrTooOld", secret, h, body, at.Add(6 * time.Minute), false},
		{"ErrTimeChanged", secret, "t=1764590401,v1=" + want[len("t=1764590400,v1="):], body, at, false},
		{"ErrNoTime", secret, want[len("t=1764590400,"):], body, at, false},
		{"ErrEmpty", secret, "", body, at, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := models.VerifyWebhook(c.secret, c.header, c.body, c.now, 5*time.Minute); got != c.ok {
				t.Fatalf("VerifyWebhook = %t, want %t", got, c.ok)
			}
		})
	}
}
