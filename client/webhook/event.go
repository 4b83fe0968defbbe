package webhook

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/couponsvc/couponsvc/client"
)

// ReadEvent reads a delivery, verifies it (see Read) and decodes it: the
// event, and its data as its type's struct (client.DecodeData:
// *client.CouponEvent for coupon.*, *client.TemplateEvent for template.*,
// …). Nothing is decoded from a body that did not verify.
func ReadEvent(r *http.Request, tolerance time.Duration, secrets ...string) (*client.Event, any, error) {
	body, err := Read(r, tolerance, secrets...)
	if err != nil {
		return nil, nil, err
	}
	var ev client.Event
	if err := json.Unmarshal(body, &ev); err != nil {
		return nil, nil, fmt.Errorf("webhook: the body is not an event: %w", err)
	}
	data, err := client.DecodeData(ev)
	if err != nil {
		return nil, nil, err
	}
	return &ev, data, nil
}
