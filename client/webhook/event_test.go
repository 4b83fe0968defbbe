package webhook

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/client"
)

// TestReadEvent: a verified delivery comes back as its event and typed
// data; one signed with another secret decodes nothing.
func TestReadEvent(t *testing.T) {
	body := `{"id":42,"type":"coupon.redeemed","created_at":"2026-12-01T10:00:00Z","data":{"coupon_id":7,"code":"ABC","template_id":3,` +
		`"campaign_id":2,"user_id":"alice","status":"used","value_cents":1000,"currency":"USD","order_id":"o-1","discount_cents":900}}`
	req := httptest.NewRequest("POST", "/hook", strings.NewReader(body))
	req.Header.Set(Header, Sign("s3cret", time.Now(), []byte(body)))
	ev, data, err := ReadEvent(req, 0, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	redeemed, ok := data.(*client.CouponEvent)
	if ev.ID != 42 || ev.Type != client.EventTypeCouponRedeemed || !ok || redeemed.CouponID != 7 || redeemed.Status != "used" ||
		redeemed.DiscountCents == nil || *redeemed.DiscountCents != 900 || redeemed.OrderID == nil || *redeemed.OrderID != "o-1" {
		t.Fatalf("event %+v, data %#v", ev, data)
	}

	req = httptest.NewRequest("POST", "/hook", strings.NewReader(body))
	req.Header.Set(Header, Sign("another", time.Now(), []byte(body)))
	if ev, data, err := ReadEvent(req, 0, "s3cret"); !errors.Is(err, ErrNoMatch) || ev != nil || data != nil {
		t.Fatalf("another secret: %v, %v, %v; want ErrNoMatch and nothing decoded", ev, data, err)
	}
}
