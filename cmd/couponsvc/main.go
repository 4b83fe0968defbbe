// Command couponsvc runs the coupon service (serve, the default) and its
// administration commands: migrate, user add, token add.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"
	_ "time/tzdata" // COUPON_TIMEZONE works on a machine without a zone database

	"github.com/couponsvc/couponsvc/handlers"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/core"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

const usage = `usage: couponsvc [command]

commands:
  serve                              run the service (the default)
  migrate                            apply the database migrations and exit
  migrate status                     print the database's version and the pending migrations
  migrate force VERSION              record VERSION as applied and clean (after a failed one was repaired)
  user add -username U -password P -role shopper|cashier|admin
  token add -role admin|cashier|app -name NAME   (prints the token once)
  reconcile [--repair] [--template N]   compare Redis with the database
  openapi                            print the API's OpenAPI document (as served at /api/openapi.json)

configuration (environment): COUPON_LISTEN, COUPON_MYSQL_DSN, COUPON_REDIS_ADDR,
COUPON_REDIS_ADDRS, COUPON_BOOTSTRAP_TOKEN, COUPON_DEMO, COUPON_DATA_DIR,
COUPON_IDEMPOTENCY_TTL, COUPON_REDIS_PREFIX, COUPON_SESSION_KEY, COUPON_CURRENCY,
COUPON_TIMEZONE
events: COUPON_RETENTION (30d), COUPON_WEBHOOK_ALLOW_PRIVATE (0), COUPON_WEBHOOK_LEASE (60s)
(see README.md)
limits: COUPON_RATE_USER_PER_MIN (20), COUPON_RATE_ADDR_PER_MIN (120),
COUPON_MAX_INFLIGHT_CLAIMS (512), COUPON_REQUEST_TIMEOUT (10s), COUPON_TRUSTED_PROXIES
`

// run is main with its dependencies passed in, so that tests can call it.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	slog.SetDefault(logger)
	if len(args) > 0 && args[0] == "openapi" {
		// The document needs no configuration and no backend.
		_, err := stdout.Write(handlers.OpenAPIDocument())
		if err != nil {
			fmt.Fprintln(stderr, "couponsvc:", err)
			return 1
		}
		return 0
	}
	cfg, err := loadConfig(getenv)
	if err != nil {
		fmt.Fprintln(stderr, "couponsvc:", err)
		return 2
	}
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		err = serve(ctx, cfg, logger, stdout)
	case "migrate":
		err = migrateCommand(ctx, cfg, logger, args, stdout)
	case "user":
		err = addUser(ctx, cfg, logger, args, stdout)
	case "token":
		err = addToken(ctx, cfg, logger, args, stdout)
	case "reconcile":
		err = reconcile(ctx, cfg, logger, args, stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "couponsvc: unknown command %q\n%s", cmd, usage)
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "couponsvc:", err)
		return 1
	}
	return 0
}

// withService opens the backends (applying migrations), runs f, and closes.
func withService(ctx context.Context, cfg config, logger *slog.Logger, f func(*services.App) error) error {
	b, err := core.OpenBackends(ctx, cfg.Backend)
	if err != nil {
		return err
	}
	defer b.Close()
	svc := services.New(b, services.Config{
		CoreConfig: services.CoreConfig{KeyPrefix: cfg.RedisPrefix, Location: cfg.Location, Currency: cfg.Currency,
			Logger: logger},
		EventsConfig: services.EventsConfig{WebhookAllowPrivate: cfg.WebhookAllowPrivate, WebhookLease: cfg.WebhookLease,
			Retention: cfg.Retention},
		ClaimsConfig:   services.ClaimsConfig{IdempotencyTTL: cfg.IdempotencyTTL},
		CodesConfig:    services.CodesConfig{JobLease: cfg.JobLease},
		CheckoutConfig: services.CheckoutConfig{MaxCouponsPerOrder: cfg.MaxCouponsPerOrder},
		AdminConfig:    services.AdminConfig{BootstrapToken: cfg.BootstrapToken},
	})
	// Runs before b.Close: the coupon writers finish with the database open.
	defer svc.Close()
	return f(svc)
}

func serve(ctx context.Context, cfg config, logger *slog.Logger, stdout io.Writer) error {
	tuneGC()
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return withService(ctx, cfg, logger, func(svc *services.App) error {
		// Rows older than currencies get the deployment's before anything
		// prices them.
		if n, err := svc.FillCurrency(ctx); err != nil {
			return fmt.Errorf("set the currency of older campaigns and templates: %w", err)
		} else if n > 0 {
			logger.Info("set the deployment's currency on older campaigns and templates", "currency", cfg.Currency, "rows", n)
		}
		key, err := loadSessionKey(ctx, cfg, svc)
		if err != nil {
			return err
		}
		if cfg.Demo {
			if err := seedDemo(ctx, svc, stdout); err != nil {
				return err
			}
		}
		router := handlers.NewRouter(svc, handlers.Options{Logger: logger, Limits: cfg.Limits, TrustedProxies: cfg.TrustedProxies,
			Pages: handlers.PageOptions{SessionKey: key, Currency: cfg.Currency, Location: cfg.Location}})
		loadCounters(ctx, svc, logger)
		ln, err := net.Listen("tcp", cfg.Listen)
		if err != nil {
			return err
		}
		srv := &http.Server{
			Handler:           router,
			ReadHeaderTimeout: 5 * time.Second,
			ReadTimeout:       15 * time.Second,
			WriteTimeout:      30 * time.Second,
			IdleTimeout:       120 * time.Second,
			MaxHeaderBytes:    64 << 10,
		}
		bg, stopBackground := context.WithCancel(context.WithoutCancel(ctx))
		defer stopBackground()
		go svc.RunSweeper(bg)
		go svc.RunJobs(bg)
		go svc.RunReconciler(bg, reconcileInterval)
		go svc.RunDispatcher(bg)
		go svc.RunPruner(bg)
		if cfg.PprofListen != "" {
			go servePprof(bg, cfg.PprofListen, logger)
		}

		mode := "MySQL + Redis"
		if cfg.embedded() {
			mode = "embedded default (SQLite in " + cfg.DataDir + ", in-process Redis)"
		}
		fmt.Fprintf(stdout, "couponsvc listening on http://%s (%s)\n", ln.Addr(), mode)
		errc := make(chan error, 1)
		go func() { errc <- srv.Serve(ln) }()
		select {
		case err := <-errc:
			return err
		case <-ctx.Done():
		}
		// SIGTERM: stop accepting, let in-flight requests finish, then close
		// the backends (deferred) once nothing uses them.
		logger.Info("shutting down", "grace", cfg.ShutdownGrace)
		sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownGrace)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			return fmt.Errorf("shutdown: %w", err)
		}
		if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
}

// seedDemo fills an empty database with the demo data and prints the demo
// users' passwords, once: later starts find users and do nothing.
func seedDemo(ctx context.Context, svc *services.App, stdout io.Writer) error {
	demo, err := svc.SeedDemo(ctx)
	if err != nil {
		return fmt.Errorf("demo data: %w", err)
	}
	if demo == nil {
		return nil
	}
	fmt.Fprintf(stdout, "demo data created: the campaign %q with %d templates, and these users\n", demo.Campaign.Name, len(demo.Templates))
	fmt.Fprintln(stdout, "(the passwords are shown this once; COUPON_DEMO=0 starts without demo data):")
	for _, u := range demo.Users {
		fmt.Fprintf(stdout, "    %-8s  password %s\n", u.Username, u.Password)
	}
	return nil
}

// parseAdd parses the arguments of `couponsvc <what> add <usage>`; flags
// declares the command's flags.
func parseAdd(args []string, what, usage string, flags func(fs *flag.FlagSet)) error {
	if len(args) == 0 || args[0] != "add" {
		return fmt.Errorf("usage: couponsvc %s add %s", what, usage)
	}
	fs := flag.NewFlagSet(what+" add", flag.ContinueOnError)
	flags(fs)
	return fs.Parse(args[1:])
}

func addUser(ctx context.Context, cfg config, logger *slog.Logger, args []string, stdout io.Writer) error {
	var username, password, role string
	if err := parseAdd(args, "user", "-username U -password P -role R", func(fs *flag.FlagSet) {
		fs.StringVar(&username, "username", "", "the username (a shopper's user_id)")
		fs.StringVar(&password, "password", "", "the password (8 to 72 bytes)")
		fs.StringVar(&role, "role", "", "shopper, cashier or admin")
	}); err != nil {
		return err
	}
	return withService(ctx, cfg, logger, func(svc *services.App) error {
		u, err := svc.CreateUser(ctx, "cli", username, password, role)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "user %s added with role %s\n", u.Username, u.Role)
		return nil
	})
}

func addToken(ctx context.Context, cfg config, logger *slog.Logger, args []string, stdout io.Writer) error {
	var role, name string
	if err := parseAdd(args, "token", "-role R -name NAME", func(fs *flag.FlagSet) {
		fs.StringVar(&role, "role", "", "admin, cashier or app")
		fs.StringVar(&name, "name", "", "what the token is for")
	}); err != nil {
		return err
	}
	return withService(ctx, cfg, logger, func(svc *services.App) error {
		token, _, err := svc.CreateToken(ctx, "cli", role, name)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, token)
		return nil
	})
}

// tuneGC trades memory for CPU unless the operator chose with GOGC or
// GOMEMLIMIT: with Go's default (GOGC=100) the garbage collector took about a
// seventh of the service's CPU during a flash sale, while the live heap stays
// at tens of MB. GOGC=400 collects a quarter as often; a soft limit of 120 MiB
// makes it collect sooner should the heap grow towards the 150 MB budget of
// the whole process (BENCHMARKS.md: 149 MB during a flash sale with 256 MiB).
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(400)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(120 << 20)
	}
}

// servePprof serves the profiler on its own loopback-only address, apart
// from the public router.
func servePprof(ctx context.Context, addr string, logger *slog.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	logger.Info("pprof listening", "addr", addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Error("pprof", "err", err)
	}
}
