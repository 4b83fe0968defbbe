package clienttest_test

import (
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"

	"github.com/couponsvc/couponsvc/client/webhook"
)

// TestWebhookSignIsTheServices: webhook.Sign, what a receiver's tests sign
// with, writes the header the service sends, and Verify accepts it.
func TestWebhookSignIsTheServices(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	body := []byte(`{"id":42,"type":"coupon.redeemed"}`)
	got, want := webhook.Sign("whsec-1", at, body), models.SignWebhook("whsec-1", at, body)
	if got != want {
		t.Fatalf("webhook.Sign = %q, the service signs %q", got, want)
	}
	if err := webhook.Verify(models.SignWebhook("whsec-1", time.Now(), body), body, 0, "whsec-1"); err != nil {
		t.Fatalf("Verify of the service's signature: %v", err)
	}
}
