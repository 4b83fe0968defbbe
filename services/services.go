// Package services wires couponsvc's aggregates (docs/architecture.md):
// core, the shared base; events, the outbox and webhooks; claims; codes,
// the bulk jobs; checkout; reconcile; reports; admin. Each owns its flows,
// transactions, Redis scripts and locks; callers see only models types and
// *models.Error.
package services

import (
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
// from the environment, in one struct: each aggregate's own Config,
// embedded, so that cfg.Now or cfg.JobBatch is the field of the aggregate
// that owns it (its meaning in that Config, its default in that
// aggregate's DefaultConfig). New hands each to its aggregate. A literal
// names the aggregate: Config{CoreConfig: CoreConfig{Now: clock}}.
type Config struct {
	CoreConfig
	EventsConfig
	ClaimsConfig
	CodesConfig
	CheckoutConfig
	ReportsConfig
	AdminConfig
}

// The aggregates' settings, under the names Config embeds them by.
type (
	// CoreConfig is core.Config: what the aggregates share.
	CoreConfig = core.Config
	// EventsConfig is events.Config: the outbox, webhooks and retention.
	EventsConfig = events.Config
	// ClaimsConfig is claims.Config: claims and the coupon writers.
	ClaimsConfig = claims.Config
	// CodesConfig is codes.Config: the bulk jobs and the export.
	CodesConfig = codes.Config
	// CheckoutConfig is checkout.Config: orders and holds.
	CheckoutConfig = checkout.Config
	// ReportsConfig is reports.Config: the reports' time budget.
	ReportsConfig = reports.Config
	// AdminConfig is admin.Config: logins, tokens and passwords.
	AdminConfig = admin.Config
)

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
	c := core.New(b, cfg.CoreConfig)
	ev := events.New(c, cfg.EventsConfig)
	cl := claims.New(c, ev, cfg.ClaimsConfig)
	co := checkout.New(c, cl, ev, cfg.CheckoutConfig)
	return &App{
		Core:       c,
		Events:     ev,
		Claims:     cl,
		Codes:      codes.New(c, cl, cfg.CodesConfig),
		Checkout:   co,
		Reconciler: reconcile.New(c, co),
		Reports:    reports.New(c, cfg.ReportsConfig),
		Admin:      admin.New(c, ev, cfg.AdminConfig),
	}
}

// Close stops the background coupon writers once the coupon rows they
// hold are written, and the following of token revocations. Call it after
// the last request has finished.
func (a *App) Close() {
	a.Claims.Close()
	a.Admin.Close()
}
