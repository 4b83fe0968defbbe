package core

import (
	"strings"

	"github.com/couponsvc/couponsvc/models"
)

// sharedPrefixOf is sharedRequestPrefix of a key made by sharedRequestID;
// ok is false for any other key.
func sharedPrefixOf(requestID string) (prefix string, ok bool) {
	if !strings.HasPrefix(requestID, "shared:") {
		return "", false
	}
	i := strings.LastIndexByte(requestID, ':')
	return requestID[:i+1], true
}

// SharedCodeOf is the shared code a coupon of t was claimed with at a
// checkout, or "".
func SharedCodeOf(c *models.Coupon, t *models.Template) string {
	if c.ClaimOrderID == nil && c.ID != 0 || t.CodeMode != models.CodeModeShared {
		return ""
	}
	return t.SharedCode
}
