// Package codes owns the coupons made in bulk: the jobs that generate,
// import and issue them, and the export of a template's coupons
// (docs/jobs.md).
package codes

import (
	"crypto/rand"
	"io"
	"time"

	"github.com/couponsvc/couponsvc/services/claims"
	"github.com/couponsvc/couponsvc/services/core"
)

// Config tunes the jobs and the export. Zero values take the defaults of
// DefaultConfig.
type Config struct {
	// JobLease is how long a job's runner holds it without committing a
	// batch before another instance may take it over (30s by default);
	// JobPoll is how often every instance looks for jobs to run (1s).
	JobLease, JobPoll time.Duration
	// JobBatch is the rows a generation or import job writes in one
	// transaction (5000 by default; 1000 on SQLite, whose one connection a
	// batch holds while it commits: smaller batches keep every other
	// request's wait for it short).
	JobBatch int
	// Rand is the randomness of patterned codes (crypto/rand by default).
	Rand io.Reader
	// ExportBudget bounds the work of one coupons export
	// (core.DefaultExportBudget); past it the export ends with an error
	// that says so (docs/jobs.md).
	ExportBudget time.Duration
}

// DefaultConfig returns the configuration used when nothing is set
// (JobBatch then depends on the database: see withDefaults).
func DefaultConfig() Config {
	return Config{
		JobLease:     30 * time.Second,
		JobPoll:      time.Second,
		JobBatch:     5000,
		Rand:         rand.Reader,
		ExportBudget: core.DefaultExportBudget,
	}
}

func (c Config) withDefaults(dialect string) Config {
	d := DefaultConfig()
	core.PositiveOr(&c.JobLease, d.JobLease)
	core.PositiveOr(&c.JobPoll, d.JobPoll)
	if c.JobBatch <= 0 {
		c.JobBatch = d.JobBatch
		if dialect == core.DialectSQLite {
			c.JobBatch = 1000
		}
	}
	if c.Rand == nil {
		c.Rand = d.Rand
	}
	core.PositiveOr(&c.ExportBudget, d.ExportBudget)
	return c
}

// Codes runs the bulk jobs and the exports.
type Codes struct {
	*core.Core
	cfg    Config
	claims *claims.Claims
	// owner names this instance in the job leases it takes.
	owner string
}

// New returns the codes aggregate over c; its issue and import jobs claim
// through cl.
func New(c *core.Core, cl *claims.Claims, cfg Config) *Codes {
	return &Codes{Core: c, cfg: cfg.withDefaults(c.Dialect), claims: cl, owner: newOwner()}
}
