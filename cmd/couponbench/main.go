// Command couponbench is a load generator for a running couponsvc. It creates
// its own campaign and template through the API, drives a scenario (a flash
// sale, the committed-claim rate, redemptions, a mix) over keep-alive
// connections, and checks the guarantees through the API at the end: a run that
// breaks one exits non-zero, whatever its speed. It also measures, in the same
// run, two references against the same servers: the classic MariaDB claim
// transaction (baseline), the claim script alone on Redis (limit) and the bare
// redemption transaction (rawredeem), and reports the ratios to them (see
// BENCHMARKS.md).
//
//	couponbench -scenario all -json out.json
package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// config is the parsed command line.
type config struct {
	url         string
	token       string
	scenario    string
	mysqlDSN    string
	redisAddr   string
	concurrency int
	short       bool
	jsonOut     string
	mdOut       string
	servicePID  int
	dbConns     int
	seed        uint64
	timeout     time.Duration
	allowRemote bool
	readyWait   time.Duration
	pprofURL    string
	pprofDir    string
	cpuProfile  string
	watchCPU    string
	// rate runs claim and flash open loop at this many requests a second;
	// openLoop, when above zero, adds claim-open and flash-open after claim
	// and flash, open loop at this fraction of the rate each just measured.
	rate     float64
	openLoop float64
	// divide divides every count, for reduced runs (1: full size).
	divide  int
	webhook bool
}

// order is the order of -scenario all: each reference next to the scenario it
// is compared with.
var order = []string{"baseline", "claim", "limit", "flash", "rawredeem", "raworder", "raworderlines", "redeem", "mixed", "checkout", "sharedcheckout",
	"pricing", "cartcheckout", "validate", "validaterule", "statements", "rawinsert", "rawschema", "generate", "export"}

var serviceScenarios = []string{"claim", "flash", "redeem", "mixed", "checkout", "sharedcheckout", "cartcheckout", "validate", "validaterule", "statements", "generate", "export"}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("couponbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.url, "url", "http://127.0.0.1:8080", "base URL of the running couponsvc")
	fs.StringVar(&c.token, "token", os.Getenv("COUPON_BOOTSTRAP_TOKEN"), "admin API token (default $COUPON_BOOTSTRAP_TOKEN)")
	fs.StringVar(&c.scenario, "scenario", "all", "flash|claim|redeem|mixed|checkout|sharedcheckout|pricing|cartcheckout|validate|validaterule|statements|baseline|limit|rawredeem|raworder|raworderlines|rawinsert|rawschema|generate|export|all, or a comma list")
	fs.StringVar(&c.mysqlDSN, "mysql-dsn", "root@tcp(127.0.0.1:3306)/test", "MariaDB for the baseline and rawredeem references (own tables, dropped after)")
	fs.StringVar(&c.redisAddr, "redis-addr", "127.0.0.1:6379", "Redis for the limit reference and the memory per coupon")
	fs.IntVar(&c.concurrency, "concurrency", 256, "requests in flight")
	fs.BoolVar(&c.short, "short", false, "a few seconds per scenario: every count divided by 50")
	fs.StringVar(&c.jsonOut, "json", "", "write the report as JSON to this file")
	fs.StringVar(&c.mdOut, "markdown", "", "write the report as Markdown tables to this file")
	fs.IntVar(&c.servicePID, "service-pid", 0, "pid of couponsvc, to sample its RSS from /proc during each scenario")
	fs.IntVar(&c.dbConns, "db-conns", 64, "connection pool of the MariaDB references")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the request plans")
	fs.DurationVar(&c.timeout, "timeout", 0, "time limit per scenario (default 15m, 90s with -short)")
	fs.DurationVar(&c.readyWait, "ready-wait", 15*time.Second, "how long to wait for the service's /readyz")
	fs.StringVar(&c.pprofURL, "pprof", "", "base URL of the service's net/http/pprof listener: fetch a CPU profile during claim, flash, redeem and mixed")
	fs.StringVar(&c.pprofDir, "pprof-dir", ".", "where the CPU profiles go (<scenario>.cpu.pprof)")
	fs.StringVar(&c.watchCPU, "watch-cpu", "", "other processes whose CPU to report per scenario, as name=pid,... (couponbench and -service-pid always are)")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write couponbench's own CPU profile to this file: is the load generator the bottleneck?")
	fs.BoolVar(&c.webhook, "webhook", false, "run claim and redeem again with a webhook endpoint (a receiver in couponbench) registered, and report the ratio; the service needs COUPON_WEBHOOK_ALLOW_PRIVATE=1")
	fs.BoolVar(&c.allowRemote, "allow-remote", false, "allow a -url that is not a loopback address")
	rate := fs.String("rate", "", "run claim and flash open loop: requests leave on a schedule at this rate (e.g. 2000/s) and latency runs from the scheduled time")
	fs.IntVar(&c.divide, "divide", 1, "divide every count by this (a reduced run; -short is 50 and a few seconds per scenario)")
	fs.Float64Var(&c.openLoop, "open-loop", 0, "after claim and flash, run each again open loop (claim-open, flash-open) at this fraction of the answers/s just measured, e.g. 0.5")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if *rate != "" {
		r, err := parseRate(*rate)
		if err != nil {
			return c, err
		}
		c.rate = r
	}
	if c.divide < 1 {
		return c, fmt.Errorf("-divide must be at least 1")
	}
	if c.openLoop < 0 || c.openLoop > 1 {
		return c, fmt.Errorf("-open-loop must be between 0 and 1")
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if c.concurrency < 1 || c.concurrency > 10000 {
		return c, fmt.Errorf("-concurrency must be 1..10000")
	}
	if c.dbConns < 1 {
		return c, fmt.Errorf("-db-conns must be positive")
	}
	if c.timeout == 0 {
		c.timeout = 15 * time.Minute
		if c.short {
			c.timeout = 90 * time.Second
		}
	}
	if !c.allowRemote {
		u, err := url.Parse(c.url)
		if err != nil || u.Hostname() == "" {
			return c, fmt.Errorf("-url %q: not a URL", c.url)
		}
		if !isLoopback(u.Hostname()) {
			return c, fmt.Errorf("-url %q is not a loopback address (pass -allow-remote to load another host)", c.url)
		}
		if c.pprofURL != "" {
			if u, err := url.Parse(c.pprofURL); err != nil || !isLoopback(u.Hostname()) {
				return c, fmt.Errorf("-pprof %q is not a loopback URL", c.pprofURL)
			}
		}
	}
	return c, nil
}

// isLoopback reports whether host is localhost or a loopback IP.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// scenarios expands -scenario into the ordered list to run.
func scenarios(spec string) ([]string, error) {
	want := map[string]bool{}
	for _, s := range strings.Split(spec, ",") {
		s = strings.TrimSpace(s)
		switch {
		case s == "all":
			for _, o := range order {
				want[o] = true
			}
		case slices.Contains(order, s):
			want[s] = true
		default:
			return nil, fmt.Errorf("unknown scenario %q (want %s or all)", s, strings.Join(order, "|"))
		}
	}
	var out []string
	for _, o := range order {
		if want[o] {
			out = append(out, o)
		}
	}
	return out, nil
}

func newRunID() string {
	b := make([]byte, 4)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "summarize" {
		return runSummarize(args[1:], stdout, stderr)
	}
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "couponbench:", err)
		return 2
	}
	list, err := scenarios(cfg.scenario)
	if err != nil {
		fmt.Fprintln(stderr, "couponbench:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The load generator shares the machine with what it measures: the fewer
	// cores it takes, the fewer it takes from the service (see -watch-cpu).
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(400)
	}
	meter, err := newCPUMeter(cfg.servicePID, cfg.watchCPU)
	if err != nil {
		fmt.Fprintln(stderr, "couponbench:", err)
		return 2
	}
	ctx = withCPUMeter(ctx, meter)
	if cfg.cpuProfile != "" {
		f, err := os.Create(cfg.cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(stderr, "couponbench: -cpuprofile:", err)
			return 2
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}

	z := fullSizes()
	if cfg.short {
		z = z.short()
	} else if cfg.divide > 1 {
		z = z.divided(cfg.divide)
	}
	runID := newRunID()
	rep := &Report{StartedAt: time.Now().UTC(), URL: cfg.url, Concurrency: cfg.concurrency, Short: cfg.short}
	fmt.Fprintf(stdout, "couponbench run %s: %s against %s, concurrency %d%s\n", runID, strings.Join(list, ", "), cfg.url, cfg.concurrency,
		map[bool]string{true: ", short", false: ""}[cfg.short])

	needService := slices.ContainsFunc(list, func(s string) bool { return slices.Contains(serviceScenarios, s) })
	needDB := slices.Contains(list, "baseline") || slices.Contains(list, "rawredeem") || slices.Contains(list, "raworder") || slices.Contains(list, "raworderlines") || slices.Contains(list, "checkout") ||
		slices.Contains(list, "rawinsert") || slices.Contains(list, "rawschema") ||
		slices.Contains(list, "sharedcheckout") || slices.Contains(list, "cartcheckout") || slices.Contains(list, "statements")

	var serviceErr error
	e := &env{runID: runID, conc: cfg.concurrency, z: z, seed: cfg.seed, rssPID: cfg.servicePID, log: stdout,
		prof: profiler{base: strings.TrimRight(cfg.pprofURL, "/"), dir: cfg.pprofDir, seconds: 8}, rate: cfg.rate}
	if cfg.rate > 0 {
		e.rateOf = "-rate"
	}
	if cfg.short {
		e.short = true
		e.prof.seconds = 2
	}
	if needService {
		e.c = newClient(cfg.url, cfg.token, cfg.concurrency)
		defer e.c.close()
		serviceErr = e.c.waitReady(ctx, cfg.readyWait)
		if serviceErr == nil && cfg.token == "" {
			serviceErr = errors.New("no admin token: pass -token or set COUPON_BOOTSTRAP_TOKEN")
		}
		if serviceErr == nil {
			serviceErr = e.c.setupApp(ctx, runID)
		}
		if serviceErr == nil {
			e.c.warmUp(ctx, cfg.concurrency)
		}
		if serviceErr != nil {
			fmt.Fprintln(stderr, "couponbench: service:", serviceErr)
		}
	}
	var db *sql.DB
	var dbErr error
	if needDB {
		db, dbErr = openDB(ctx, cfg.mysqlDSN, cfg.dbConns)
		if dbErr != nil {
			fmt.Fprintln(stderr, "couponbench:", dbErr)
		} else {
			defer db.Close()
		}
	}
	// Redis serves the limit reference and the memory per coupon; a service
	// run without it only loses the memory figure.
	var rdb *redis.Client
	redisErr := errors.New("not needed")
	if slices.Contains(list, "limit") || needService {
		rdb, redisErr = openRedis(ctx, cfg.redisAddr, cfg.concurrency)
		if redisErr != nil {
			fmt.Fprintln(stderr, "couponbench:", redisErr)
		} else {
			defer rdb.Close()
			e.rdb = rdb
		}
	}
	var memBefore int64
	memErr := redisErr
	if needService && redisErr == nil {
		memBefore, memErr = redisUsedMemory(ctx, rdb)
	}

	for _, name := range list {
		if ctx.Err() != nil {
			break
		}
		sctx, cancel := context.WithTimeout(ctx, cfg.timeout)
		// s is the scenario's summary; first, when set, one it reports
		// before it (cartcheckout's amount-only half).
		var s, first *Summary
		fail := func(err error) *Summary {
			return &Summary{Name: name, Concurrency: cfg.concurrency, Error: err.Error()}
		}
		switch {
		case slices.Contains(serviceScenarios, name) && serviceErr != nil:
			s = fail(serviceErr)
		case (name == "baseline" || name == "rawredeem" || name == "raworder" || name == "raworderlines" || name == "rawinsert" || name == "rawschema") && dbErr != nil:
			s = fail(dbErr)
		case name == "limit" && redisErr != nil:
			s = fail(redisErr)
		case name == "baseline":
			s = runBaseline(sctx, db, runID, z.claims, z.claims+z.claims/10, cfg.concurrency)
		case name == "rawredeem":
			s = runRawRedeem(sctx, db, runID, z.redeems, cfg.concurrency, cfg.seed)
		case name == "raworder":
			s = runRawOrder(sctx, db, runID, z.redeems, cfg.concurrency, cfg.seed)
		case name == "raworderlines":
			s = runRawOrderLines(sctx, db, runID, z.redeems, cfg.concurrency, cfg.seed)
		case name == "rawinsert":
			s = runRawInsert(sctx, db, runID, z.codes)
		case name == "rawschema":
			s = runRawSchema(sctx, db, runID, z.codes)
		case name == "generate":
			s = e.runGenerate(sctx)
		case name == "export":
			s = e.runExport(sctx)
		case name == "limit":
			plan := flashPlan(z.flashClaims, z.flashUsers, 0.5, cfg.seed)
			s = runLimit(sctx, rdb, runID, plan, z.flashUsers, z.flashStock, cfg.concurrency)
		case name == "claim":
			s = e.runClaim(sctx)
		case name == "flash":
			s = e.runFlash(sctx)
		case name == "redeem":
			s = e.runRedeem(sctx)
		case name == "mixed":
			s = e.runMixed(sctx)
		case name == "checkout":
			if dbErr == nil {
				e.db = db
			}
			s = e.runCheckout(sctx)
		case name == "sharedcheckout":
			if dbErr == nil {
				e.db = db
			}
			s = e.runSharedCheckout(sctx)
		case name == "statements":
			s = e.runStatements(sctx, db, z.statementUsers)
		case name == "validate":
			s = e.runValidate(sctx)
		case name == "validaterule":
			// validate with an eligibility rule on each template, beside
			// validate, its reference.
			s = e.runValidateRule(sctx, "validaterule", validateRule, validateFacts)
		case name == "pricing":
			s = runPricing(sctx, z.pricingCarts, 100)
		case name == "cartcheckout":
			if dbErr == nil {
				e.db = db
			}
			first, s = e.runCartCheckout(sctx)
		}
		if sctx.Err() == context.DeadlineExceeded && s.Error == "" {
			s.Error = fmt.Sprintf("did not finish within %s", cfg.timeout)
		}
		cancel()
		if first != nil {
			rep.Scenarios = append(rep.Scenarios, first)
			printSummary(stdout, first)
		}
		rep.Scenarios = append(rep.Scenarios, s)
		printSummary(stdout, s)
		if o := e.openLoopRun(ctx, cfg, s); o != nil {
			rep.Scenarios = append(rep.Scenarios, o)
			printSummary(stdout, o)
		}
	}
	if cfg.webhook && needService && serviceErr == nil && ctx.Err() == nil {
		rep.Scenarios = append(rep.Scenarios, e.runWithWebhook(ctx, list, cfg.timeout, stdout)...)
	}
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "couponbench: interrupted")
	}

	if needService && serviceErr == nil {
		coupons := 0
		for _, s := range rep.Scenarios {
			coupons += s.Coupons
		}
		if memErr == nil {
			var after int64
			after, memErr = redisUsedMemory(context.WithoutCancel(ctx), rdb)
			if memErr == nil && coupons > 0 {
				rep.RedisBytesPerCoupon = float64(after-memBefore) / float64(coupons)
				rep.RedisMemoryNote = fmt.Sprintf("used_memory %d -> %d bytes over %d coupons claimed through the service, idempotency keys still live", memBefore, after, coupons)
			}
		}
		if memErr != nil {
			rep.RedisMemoryNote = "not measured: " + memErr.Error()
		}
	}
	rep.computeRatios()
	rep.OK = ctx.Err() == nil
	for _, s := range rep.Scenarios {
		if s.Failed() {
			rep.OK = false
		}
	}
	printRatios(stdout, rep)
	printOverview(stdout, rep)

	code := 0
	if cfg.jsonOut != "" {
		if err := writeFile(cfg.jsonOut, func(w io.Writer) error { return writeJSON(w, rep) }); err != nil {
			fmt.Fprintln(stderr, "couponbench:", err)
			code = 1
		}
	}
	if cfg.mdOut != "" {
		if err := writeFile(cfg.mdOut, func(w io.Writer) error { writeMarkdown(w, rep); return nil }); err != nil {
			fmt.Fprintln(stderr, "couponbench:", err)
			code = 1
		}
	}
	if !rep.OK {
		fmt.Fprintln(stdout, "\nFAIL: a guarantee broke or a scenario could not run")
		return 1
	}
	fmt.Fprintln(stdout, "\nPASS: every guarantee held")
	return code
}

// openLoopSeconds is how long an open-loop rerun lasts at its rate (3 s with
// -short).
const openLoopSeconds = 15

// openLoopRun runs claim or flash again, open loop at -open-loop times the
// answers/s that s (the closed-loop run just done) measured, as claim-open or
// flash-open; nil when there is nothing to run.
func (e *env) openLoopRun(ctx context.Context, cfg config, s *Summary) *Summary {
	if cfg.openLoop <= 0 || cfg.rate > 0 || s.Failed() || s.PerSecond <= 0 || ctx.Err() != nil ||
		(s.Name != "claim" && s.Name != "flash") {
		return nil
	}
	secs := openLoopSeconds
	if e.short {
		secs = 3
	}
	eo := *e
	eo.rate = cfg.openLoop * s.PerSecond
	eo.rateOf = fmt.Sprintf("%g x %s %.0f/s", cfg.openLoop, s.Name, s.PerSecond)
	n := max(int(eo.rate*float64(secs)), 100)
	sctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	if s.Name == "claim" {
		return eo.runClaimSized(sctx, "claim-open", n)
	}
	// The flash plan's shape: stock a tenth of the claims, 0.6 users a claim.
	return eo.runFlashSized(sctx, "flash-open", max(n/10, 10), n, max(n*6/10, 10))
}

// writeFile writes a file through fill.
func writeFile(path string, fill func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fill(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
