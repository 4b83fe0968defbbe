// Package services wires couponsvc's aggregates (docs/architecture.md):
// core, the shared base; events, the outbox and webhooks; claims; codes,
// the bulk jobs; checkout; reconcile; reports; admin. Each owns its flows,
// transactions, Redis scripts and locks; callers see only models types and
// *models.Error.
package services

import (
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/couponsvc/couponsvc/services/admin"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/claims"
	"github.com/couponsvc/couponsvc/services/codes"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/events"
	"github.com/couponsvc/couponsvc/services/reconcile"
	"github.com/couponsvc/couponsvc/services/reports"
)

// Config is every setting of the aggregates, as cmd/couponsvc reads them
// from the environment, in one struct. New hands each field to the
// aggregate that owns it; the defaults of zero fields live in that
// aggregate's DefaultConfig, and the fields' meanings in its Config.
type Config struct {
	// core.Config
	KeyPrefix        string
	DBTimeout        time.Duration
	TemplateCacheTTL time.Duration
	CouponLockTTL    time.Duration
	IdempotencyLease time.Duration
	Now              func() time.Time
	NewCode          func() string
	Location         *time.Location
	Currency         string
	Logger           *slog.Logger

	// claims.Config
	IdempotencyTTL             time.Duration
	PendingTimeout             time.Duration
	CouponWriters, CouponBatch int

	// checkout.Config
	MaxCouponsPerOrder int
	SweepInterval      time.Duration

	// codes.Config
	JobLease, JobPoll time.Duration
	JobBatch          int
	Rand              io.Reader
	ExportBudget      time.Duration

	// events.Config
	WebhookAllowPrivate      bool
	WebhookTimeout           time.Duration
	WebhookRetryFor          time.Duration
	WebhookLease             time.Duration
	WebhookWorkers           int
	DispatchInterval         time.Duration
	Jitter                   func() float64
	Resolver                 *net.Resolver
	Retention, PruneInterval time.Duration

	// reports.Config
	ReportBudget time.Duration

	// admin.Config
	LoginsPerAccount, LoginsPerAddress int
	LoginSlowAfter                     int
	LoginSlowStep, LoginSlowMax        time.Duration
	BootstrapToken                     string
	PasswordCost                       int
}

// Core returns the settings of core.
func (c Config) Core() core.Config {
	return core.Config{KeyPrefix: c.KeyPrefix, DBTimeout: c.DBTimeout, TemplateCacheTTL: c.TemplateCacheTTL,
		CouponLockTTL: c.CouponLockTTL, IdempotencyLease: c.IdempotencyLease, Now: c.Now, NewCode: c.NewCode, Location: c.Location, Currency: c.Currency, Logger: c.Logger}
}

// Claims returns the settings of claims.
func (c Config) Claims() claims.Config {
	return claims.Config{IdempotencyTTL: c.IdempotencyTTL, PendingTimeout: c.PendingTimeout,
		CouponWriters: c.CouponWriters, CouponBatch: c.CouponBatch}
}

// Checkout returns the settings of checkout.
func (c Config) Checkout() checkout.Config {
	return checkout.Config{MaxCouponsPerOrder: c.MaxCouponsPerOrder, SweepInterval: c.SweepInterval}
}

// Codes returns the settings of codes.
func (c Config) Codes() codes.Config {
	return codes.Config{JobLease: c.JobLease, JobPoll: c.JobPoll, JobBatch: c.JobBatch, Rand: c.Rand,
		ExportBudget: c.ExportBudget}
}

// Events returns the settings of events.
func (c Config) Events() events.Config {
	return events.Config{WebhookAllowPrivate: c.WebhookAllowPrivate, WebhookTimeout: c.WebhookTimeout,
		WebhookRetryFor: c.WebhookRetryFor, WebhookLease: c.WebhookLease, WebhookWorkers: c.WebhookWorkers,
		DispatchInterval: c.DispatchInterval, Jitter: c.Jitter, Resolver: c.Resolver, Retention: c.Retention,
		PruneInterval: c.PruneInterval}
}

// Reports returns the settings of reports.
func (c Config) Reports() reports.Config { return reports.Config{ReportBudget: c.ReportBudget} }

// Admin returns the settings of admin.
func (c Config) Admin() admin.Config {
	return admin.Config{LoginsPerAccount: c.LoginsPerAccount, LoginsPerAddress: c.LoginsPerAddress,
		LoginSlowAfter: c.LoginSlowAfter, LoginSlowStep: c.LoginSlowStep, LoginSlowMax: c.LoginSlowMax,
		BootstrapToken: c.BootstrapToken, PasswordCost: c.PasswordCost}
}

// App is couponsvc's business layer over one database and one Redis: the
// aggregates, wired. It is safe for concurrent use, and several instances
// may share the backends. Handlers take the aggregates they use through
// narrow interfaces; the embedding lets the wiring and the tests of the
// whole reach every method through one value.
type App struct {
	*core.Core
	*events.Events
	*claims.Claims
	*codes.Codes
	*checkout.Checkout
	*reconcile.Reconciler
	*reports.Reports
	*admin.Admin
}

// New wires the aggregates over the opened backends.
func New(b *core.Backends, cfg Config) *App {
	c := core.New(b, cfg.Core())
	ev := events.New(c, cfg.Events())
	cl := claims.New(c, ev, cfg.Claims())
	co := checkout.New(c, cl, ev, cfg.Checkout())
	return &App{
		Core:       c,
		Events:     ev,
		Claims:     cl,
		Codes:      codes.New(c, cl, cfg.Codes()),
		Checkout:   co,
		Reconciler: reconcile.New(c, co),
		Reports:    reports.New(c, cfg.Reports()),
		Admin:      admin.New(c, ev, cfg.Admin()),
	}
}

// Close stops the background coupon writers once the coupon rows they
// hold are written, and the following of token revocations. Call it after
// the last request has finished.
func (a *App) Close() {
	a.Claims.Close()
	a.Admin.Close()
}
