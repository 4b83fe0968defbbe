package pages

import "github.com/couponsvc/couponsvc/models"

// couponStatusWords are the words every page uses for a coupon's status,
// the shopper's wallet and the console alike (docs/pages.md, "Words").
var couponStatusWords = map[string]string{
	models.CouponIssued:  "Ready to use",
	models.CouponHeld:    "Reserved for an order",
	models.CouponUsed:    "Used",
	models.CouponExpired: "Expired",
	models.CouponRevoked: "Revoked",
}

// statusWord says a coupon's status in the words of the pages; a status
// without words (none today) is shown as stored.
func statusWord(status string) string {
	if w, ok := couponStatusWords[status]; ok {
		return w
	}
	return status
}
