package checkout

import "github.com/couponsvc/couponsvc/models"

// takeOwner is the extra SET of the guarded UPDATE that holds or redeems c
// for user: a bearer coupon (no owner yet) becomes user's, the first time
// it is held or redeemed with a user_id (docs/shared-codes.md). Empty when
// c has an owner or no user is named (a bearer coupon redeemed at the till
// without a user_id stays anonymous).
func takeOwner(c *models.Coupon, user string) (set string, args []any) {
	if c.UserID != models.BearerUserID || user == "" {
		return "", nil
	}
	return ", user_id = ?", []any{user}
}

// ownerGuard is the WHERE clause that goes with takeOwner's SET: the
// coupon still has no owner, so that two users racing for one bearer code
// never both become its owner (the version guard says the same; this says
// it in words).
func ownerGuard(set string) string {
	if set == "" {
		return ""
	}
	return " AND user_id = ''"
}
