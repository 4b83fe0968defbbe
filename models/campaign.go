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
	ID          int64     `gorm:"primaryKey" json:"id"`
	Name        string    `json:"name"`
	BudgetCents int64     `json:"budget_cents"` // 0 = no budget
	CreatedAt   time.Time `json:"created_at"`
}

// MaxBudgetCents bounds a campaign budget (one trillion cents), far below what
// overflows an int64 or a Lua number.
const MaxBudgetCents = 1_000_000_000_000

// Validate checks the fields an admin sets.
func (c *Campaign) Validate() error {
	c.Name = strings.TrimSpace(c.Name)
	if err := validateName("name", c.Name); err != nil {
		return err
	}
	if c.BudgetCents < 0 || c.BudgetCents > MaxBudgetCents {
		return Invalid("budget_cents", "must be between 0 (no budget) and %d", int64(MaxBudgetCents))
	}
	return nil
}

func validateName(field, name string) error {
	n := utf8.RuneCountInString(name)
	if n < 1 || n > 100 {
		return Invalid(field, "must be 1 to 100 characters")
	}
	return CheckText(field, name, SingleLine)
}
