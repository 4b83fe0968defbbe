package models

import "time"

// Roles of users (pages) and API tokens.
const (
	RoleShopper = "shopper"
	RoleCashier = "cashier"
	RoleAdmin   = "admin"
	RoleApp     = "app" // tokens only: the shop's backends acting for their users
)

// User is a person who logs in to the pages. For a shopper the username is the
// user_id of their coupons.
type User struct {
	ID           int64     `gorm:"primaryKey" json:"id"`
	Username     string    `json:"username"`
	PasswordHash string    `json:"-"`
	Role         string    `json:"role" schema:"user_role"`
	CreatedAt    time.Time `json:"created_at"`
}

// APIToken is a bearer token for the API. Only its SHA-256 hash is stored; the
// token itself is shown once, at creation.
type APIToken struct {
	ID        int64      `gorm:"primaryKey" json:"id"`
	Name      string     `json:"name"`
	Role      string     `json:"role" schema:"token_role"`
	TokenHash string     `json:"-"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// TableName names the token table.
func (APIToken) TableName() string { return "api_tokens" }

// Principal is who makes a request: a token or a logged-in user.
type Principal struct {
	Name string // username, or "token:<name>"
	Role string
	// UserID is the user_id a shopper acts as (their username); empty otherwise.
	UserID string
	// TokenID is the id of the API token (api_tokens.id) of the request;
	// 0 for the bootstrap token and for a page session.
	TokenID int64
}

// ValidateUserID checks a shop user id: 1-64 characters of A-Z a-z 0-9 . _ : @ -.
func ValidateUserID(field, s string) error {
	if len(s) < 1 || len(s) > MaxUserIDLen {
		return Invalid(field, "must be 1 to %d characters", MaxUserIDLen)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ':' || c == '@' || c == '-') {
			return Invalid(field, "may only contain letters, digits and . _ : @ -")
		}
	}
	return nil
}

// ValidateIdempotencyKey checks an Idempotency-Key: 1-128 printable ASCII.
func ValidateIdempotencyKey(s string) error {
	if len(s) < 1 || len(s) > 128 {
		return Invalid("Idempotency-Key", "header is required: 1 to 128 printable ASCII characters")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return Invalid("Idempotency-Key", "header must be printable ASCII")
		}
	}
	return nil
}

// ValidateRole checks a role for a user (tokens also allow app).
func ValidateRole(field, role string, allowApp bool) error {
	switch role {
	case RoleShopper, RoleCashier, RoleAdmin:
		if allowApp && role == RoleShopper {
			return Invalid(field, `must be "admin", "cashier" or "app"`)
		}
		return nil
	case RoleApp:
		if allowApp {
			return nil
		}
	}
	if allowApp {
		return Invalid(field, `must be "admin", "cashier" or "app"`)
	}
	return Invalid(field, `must be "shopper", "cashier" or "admin"`)
}
