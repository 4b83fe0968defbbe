package webhook_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/client/webhook"
)

// A receiver verifies each delivery with its current and its previous
// secret while it rotates them, then decodes the event.
func ExampleRead() {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := webhook.Read(r, 5*time.Minute, "whsec-new", "whsec-old")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var ev struct {
			ID   int64  `json:"id"`
			Type string `json:"type"`
		}
		if err := json.Unmarshal(body, &ev); err != nil {
			http.Error(w, "bad event", http.StatusBadRequest)
			return
		}
		fmt.Println("event", ev.ID, ev.Type)
	})

	// What couponsvc sends, signed with the old secret.
	body := `{"id":42,"type":"coupon.redeemed"}`
	req := httptest.NewRequest(http.MethodPost, "/hooks/coupons", strings.NewReader(body))
	req.Header.Set(webhook.Header, webhook.Sign("whsec-old", time.Now(), []byte(body)))
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, req)
	fmt.Println(rec.Code)
	// Output:
	// event 42 coupon.redeemed
	// 200
}
