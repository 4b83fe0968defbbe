// Package reports owns what is read back for people: the redemption
// reports (page and CSV), the figures of templates and campaigns, and
// the statistics (docs/reports.md).
package reports

import (
	"time"

	"github.com/couponsvc/couponsvc/services/core"
)

// Config tunes the reports. Zero values take the defaults of DefaultConfig.
type Config struct {
	// ReportBudget bounds the work of one redemption report, page or CSV
	// (core.DefaultReportBudget). Past it the request ends with an error
	// that says so (docs/reports.md).
	ReportBudget time.Duration
}

// DefaultConfig returns the configuration used when nothing is set.
func DefaultConfig() Config { return Config{ReportBudget: core.DefaultReportBudget} }

func (c Config) withDefaults() Config {
	if c.ReportBudget <= 0 {
		c.ReportBudget = DefaultConfig().ReportBudget
	}
	return c
}

// Reports reads reports and figures.
type Reports struct {
	*core.Core
	cfg Config
}

// New returns the reports aggregate over c.
func New(c *core.Core, cfg Config) *Reports { return &Reports{Core: c, cfg: cfg.withDefaults()} }
