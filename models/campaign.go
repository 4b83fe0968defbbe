package models

import (
	"strings"
	"time"
	"unicode/utf8"
)

// Campaign groups templates under one optional budget. All Redis keys of a
// campaign share the hash tag {c<ID>} so that one script can touch them all,
// also on Redis Cluster.
type Campaign struct {
	ID          int64  `gorm:"primaryKey" json:"id"`
	Name        string `json:"name"`
	BudgetCents int64  `json:"budget_cents"` // 0 = no budget
	// Status is CampaignActive or CampaignPaused: a paused campaign's
	// templates take no claims, whatever their own status (docs/flows.md).
	Status string `gorm:"default:active" json:"status" schema:"campaign_status"`
	// Currency is the ISO 4217 code of the campaign's budget and of its
	// templates' amounts: every template has it. It changes only while the
	// campaign has no template.
	Currency string `json:"currency"`
	// PerCustomerLimit caps the coupons one customer holds of all the
	// campaign's templates together, claimed, shared-code and automatic
	// alike (0: no cap; docs/automatic-offers.md).
	PerCustomerLimit int64     `json:"per_customer_limit"`
	CreatedAt        time.Time `json:"created_at"`
}

// Campaign statuses.
const (
	CampaignActive = "active"
	CampaignPaused = "paused"
)

// MaxBudgetCents bounds a campaign budget (one trillion cents), far below what
// overflows an int64 or a Lua number.
const MaxBudgetCents = 1_000_000_000_000

// Validate checks the fields an admin sets, every one of them: the error
// names each field at fault (see FieldErrors). An empty status is active; an
// empty currency is left empty for the service to set the deployment's.
func (c *Campaign) Validate() error {
	var errs FieldErrors
	c.Name = strings.TrimSpace(c.Name)
	errs.Add(validateName("name", c.Name))
	if c.BudgetCents < 0 || c.BudgetCents > MaxBudgetCents {
		errs.Add(Invalid("budget_cents", "must be between 0 (no budget) and %d", int64(MaxBudgetCents)))
	}
	errs.Add(eitherOr("status", &c.Status, CampaignActive, CampaignPaused))
	if c.PerCustomerLimit < 0 || c.PerCustomerLimit > MaxPerCustomerLimit {
		errs.Add(Invalid("per_customer_limit", "must be between 0 (no cap) and %d", int64(MaxPerCustomerLimit)))
	}
	if c.Currency != "" {
		errs.Add(ValidateCurrency("currency", c.Currency))
	}
	return errs.Err()
}

// MaxPerCustomerLimit bounds a campaign's per-customer cap.
const MaxPerCustomerLimit = 1000

// MaxNameRunes bounds the name of a campaign, a template or an API token, in
// characters (as the OpenAPI document's maxLength counts them).
const MaxNameRunes = 100

// MaxReasonRunes bounds the reason of a revocation or a stock change, in
// characters.
const MaxReasonRunes = 500

func validateName(field, name string) error {
	n := utf8.RuneCountInString(name)
	if n < 1 || n > MaxNameRunes {
		return Invalid(field, "must be 1 to %d characters", MaxNameRunes)
	}
	return CheckText(field, name, SingleLine)
}
