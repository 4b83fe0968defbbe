package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/couponsvc/couponsvc/services"
	reconcilesvc "github.com/couponsvc/couponsvc/services/reconcile"
)

// reconcileInterval is how often a serving instance runs the repair pass
// (services.RepairPass): a crash between a refund's commit and its stock
// return is repaired within stockChangeGrace plus this.
const reconcileInterval = 5 * time.Second

// startupLoadTimeout bounds the load of missing counters before serving.
const startupLoadTimeout = 30 * time.Second

// loadCounters loads, before the listener opens, the counters Redis lost (or
// never had: the embedded Redis starts empty). A failure is logged and the
// service serves anyway: the claim path loads what is missing on demand.
func loadCounters(ctx context.Context, svc *services.App, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, startupLoadTimeout)
	defer cancel()
	start := time.Now()
	n, err := svc.LoadMissingCounters(ctx)
	if err != nil {
		logger.Warn("load the missing Redis counters at start; claims will load them", "loaded", n, "err", err)
		return
	}
	if n > 0 {
		logger.Info("loaded the missing Redis counters from the database", "campaigns", n,
			"took", time.Since(start).Round(time.Millisecond))
	}
}

// reconcile runs `couponsvc reconcile [--repair] [--template N]`: it prints
// the comparison of every template (or one) and of their campaigns' budgets,
// and fails when a drift is found and not repaired, so that scripts can act
// on it.
func reconcile(ctx context.Context, cfg config, logger *slog.Logger, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("reconcile", flag.ContinueOnError)
	fs.SetOutput(stdout)
	repair := fs.Bool("repair", false, "rebuild the counters of the campaigns whose templates or budget drifted (with an audit entry)")
	tid := fs.Int64("template", 0, "compare this template only")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("usage: couponsvc reconcile [--repair] [--template N]")
	}
	if cfg.embedded() {
		// The embedded Redis lives in the serving process: this one only
		// sees an empty Redis of its own.
		return fmt.Errorf("the embedded default keeps Redis inside the serving process: use POST /api/v1/reconcile (or the admin console) instead")
	}
	return withService(ctx, cfg, logger, func(svc *services.App) error {
		report, err := svc.Reconcile(ctx, reconcilesvc.ReconcileRequest{TemplateID: *tid, Repair: *repair, Actor: "cli"})
		if err != nil {
			return err
		}
		if n := printReconcile(stdout, report); n > 0 {
			return fmt.Errorf("%d templates or campaign budgets drifted: run with --repair to rebuild their counters from the database", n)
		}
		return nil
	})
}

// printReconcile writes a reconciliation report as two tables, templates and
// campaign budgets, and returns how many lines drifted and were not repaired.
func printReconcile(w io.Writer, report *reconcilesvc.ReconcileReport) int {
	unrepaired := 0
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "template\tcampaign\ttotal_stock\tredis_remaining\tdb_live\tin_flight\tdrift\tusers_drifted\trepaired\t")
	for _, d := range report.Templates {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%d\t%d\t%d\t%d\t%t\t\n", d.TemplateID, d.CampaignID, d.TotalStock,
			orNotLoaded(d.RedisRemaining), d.DBLive, d.InFlight, d.Drift, d.UsersDrifted, d.Repaired)
		if d.Drifted() && !d.Repaired {
			unrepaired++
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "%d templates, %d drifted\n", len(report.Templates), report.Drifted())
	if len(report.Campaigns) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "campaign\tbudget_cents\tredis_budget_remaining\tdb_budget_used\tin_flight_cents\texpected_budget_remaining\tdrift\trepaired\t")
		for _, d := range report.Campaigns {
			fmt.Fprintf(tw, "%d\t%d\t%s\t%d\t%d\t%d\t%d\t%t\t\n", d.CampaignID, d.BudgetCents,
				orNotLoaded(d.RedisBudgetRemaining), d.DBBudgetUsed, d.InFlightCents, d.ExpectedRemaining, d.Drift, d.Repaired)
			if d.Drifted() && !d.Repaired {
				unrepaired++
			}
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "%d campaign budgets, %d drifted\n", len(report.Campaigns), report.BudgetsDrifted())
	return unrepaired
}

func orNotLoaded(n *int64) string {
	if n == nil {
		return "not loaded"
	}
	return strconv.FormatInt(*n, 10)
}
