package models

// MaxOrderIDLen is the longest order id, in characters.
const MaxOrderIDLen = 64

// ValidateOrderID checks an order id (and a return id, which follows the
// same rule): 1 to 64 characters of A-Z a-z 0-9 and . _ : @ -, not made of
// dots only (docs/checkout.md, "Order ids"). Every character is one a URL
// path segment carries as itself, and no id is a "." or ".." segment, so
// /api/v1/holds/<order_id>/confirm always routes to its order; an order id
// is the same string read back from a receipt, a path or a form.
func ValidateOrderID(field, s string) error {
	if len(s) < 1 || len(s) > MaxOrderIDLen {
		return Invalid(field, "must be 1 to %d characters", MaxOrderIDLen)
	}
	dots := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ':' || c == '@' || c == '-') {
			return Invalid(field, "may only contain letters, digits and . _ : @ -")
		}
		if c == '.' {
			dots++
		}
	}
	if dots == len(s) {
		return Invalid(field, "must not be made of dots only")
	}
	return nil
}
