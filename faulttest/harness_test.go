package faulttest

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/client"
	"github.com/couponsvc/couponsvc/handlers"
	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/testenv"

	"github.com/alicebob/miniredis/v2"
	mysqldriver "github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"
)

// report prints a test's figures to the test log and to stdout.
func report(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	t.Log(msg)
	fmt.Printf("%s [%s]: %s\n", t.Name(), testenv.BackendName(), msg)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

//-----------------------------------------------------------------------------
// Backends the test inspects directly, and services over them (possibly
// through a TCP proxy).

type backends struct {
	fresh   testenv.Fresh
	dataDir string   // the embedded default's data folder
	db      *gorm.DB // direct
	dialect string
	rdb     redis.UniversalClient // direct; nil when a process runs the embedded Redis
	mini    *miniredis.Miniredis  // the embedded Redis of in-process services
}

// newBackends opens fresh backends: a database and key prefix of the test's
// own on the real servers, or an SQLite file (in dataDir, where a process
// started by the test finds it) and, for in-process services, a miniredis.
func newBackends(t *testing.T, inProcess bool) *backends {
	t.Helper()
	b := &backends{fresh: testenv.NewFresh(t), dataDir: t.TempDir()}
	b.db, b.dialect = b.fresh.OpenDB(t, b.dataDir)
	switch {
	case !b.fresh.Embedded():
		b.rdb = b.fresh.Redis()
	case inProcess:
		b.mini = miniredis.NewMiniRedis()
		if err := b.mini.StartAddr("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(b.mini.Close)
		b.rdb = redis.NewClient(&redis.Options{Addr: b.mini.Addr(), PoolSize: 100})
	}
	t.Cleanup(func() {
		if b.rdb != nil {
			b.rdb.Close()
		}
		if sqlDB, err := b.db.DB(); err == nil {
			sqlDB.Close()
		}
	})
	return b
}

// redisAddr is the address of the single Redis node, "" on a cluster.
func (b *backends) redisAddr() string {
	if b.mini != nil {
		return b.mini.Addr()
	}
	return b.fresh.RedisAddr
}

// mysqlAddr is the MySQL server's address, "" on the embedded default.
func (b *backends) mysqlAddr(t *testing.T) string {
	if b.fresh.Embedded() {
		return ""
	}
	c, err := mysqldriver.ParseDSN(b.fresh.MySQLDSN)
	if err != nil {
		t.Fatal(err)
	}
	return c.Addr
}

// service returns a Service over the backends; dbVia and redisVia, when set,
// are proxies it connects through instead.
func (b *backends) service(t *testing.T, cfg services.Config, dbVia, redisVia string) *services.App {
	t.Helper()
	sb := &core.Backends{DB: b.db, Dialect: b.dialect, Redis: b.rdb}
	if dbVia != "" {
		c, err := mysqldriver.ParseDSN(b.fresh.MySQLDSN)
		if err != nil {
			t.Fatal(err)
		}
		c.Addr = dbVia
		c.Timeout = 2 * time.Second
		db, _, err := core.OpenDB(core.BackendConfig{MySQLDSN: c.FormatDSN(), MaxOpenConns: 16})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if sqlDB, err := db.DB(); err == nil {
				sqlDB.Close()
			}
		})
		sb.DB = db
	}
	if redisVia != "" {
		rdb := redis.NewClient(&redis.Options{Addr: redisVia, PoolSize: 100, DialTimeout: time.Second,
			ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second})
		t.Cleanup(func() { rdb.Close() })
		sb.Redis = rdb
	}
	cfg.KeyPrefix = b.fresh.Prefix
	if cfg.Logger == nil {
		cfg.Logger = testenv.Logger()
	}
	return services.New(sb, cfg)
}

// serveInProcess serves svc's router on a loopback port, with its sweeper
// and repair pass running, until the test ends.
func serveInProcess(t *testing.T, svc *services.App, reconcileEvery time.Duration) string {
	t.Helper()
	srv := httptest.NewServer(handlers.NewRouter(svc, handlers.Options{Logger: testenv.Logger()}))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); svc.RunSweeper(ctx) }()
	go func() { defer wg.Done(); svc.RunReconciler(ctx, reconcileEvery) }()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		srv.Close()
	})
	return srv.URL
}

//-----------------------------------------------------------------------------
// A couponsvc process.

type proc struct {
	t      *testing.T
	name   string
	cmd    *exec.Cmd
	url    string
	out    *testsupport.LockedBuffer
	exited chan struct{}
	state  *os.ProcessState
}

// procEnv is the environment of a couponsvc process over the test's
// backends: the test's own COUPON_* variables are left out.
func procEnv(b *backends, bootstrap string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "COUPON_") {
			env = append(env, kv)
		}
	}
	env = append(env, "COUPON_LISTEN=127.0.0.1:0", "COUPON_BOOTSTRAP_TOKEN="+bootstrap, "COUPON_DEMO=0",
		"COUPON_DATA_DIR="+b.dataDir, "COUPON_REDIS_PREFIX="+b.fresh.Prefix)
	if !b.fresh.Embedded() {
		env = append(env, "COUPON_MYSQL_DSN="+b.fresh.MySQLDSN)
		if len(b.fresh.RedisAddrs) > 0 {
			env = append(env, "COUPON_REDIS_ADDRS="+strings.Join(b.fresh.RedisAddrs, ","))
		} else {
			env = append(env, "COUPON_REDIS_ADDR="+b.fresh.RedisAddr)
		}
	}
	return env
}

// procs starts couponsvc processes over one set of fresh backends, as the
// tests that kill, stop or restart them do: every process has the same
// environment and the same bootstrap admin.
type procs struct {
	t    *testing.T
	b    *backends
	bin  string
	boot string // the bootstrap admin token
	env  []string
}

// newProcs builds couponsvc (once per run) and opens fresh backends for its
// processes; extraEnv is added to their environment.
func newProcs(t *testing.T, extraEnv ...string) *procs {
	t.Helper()
	ps := &procs{t: t, bin: couponsvcBinary(t), b: newBackends(t, false), boot: "boot-" + randomHex(16)}
	ps.env = append(procEnv(ps.b, ps.boot), extraEnv...)
	return ps
}

// start starts a process named name and returns it with a client of its
// bootstrap admin.
func (ps *procs) start(name string) (*proc, *apiClient) {
	ps.t.Helper()
	p := startProc(ps.t, name, ps.bin, ps.env)
	return p, newClient(p.url, ps.boot)
}

// startProc starts couponsvc and waits until it answers /readyz. A start
// refused because MariaDB has no connection left (it is shared with every
// package testing at the same time) is tried again, a few times.
func startProc(t *testing.T, name, bin string, env []string) *proc {
	t.Helper()
	for try := 1; ; try++ {
		p, err := startProcOnce(t, name, bin, env)
		if err == nil {
			return p
		}
		if try == 3 || !strings.Contains(p.out.String(), "Too many connections") {
			t.Fatal(err)
		}
		t.Logf("%s: %v; starting again", name, err)
		time.Sleep(2 * time.Second)
	}
}

func startProcOnce(t *testing.T, name, bin string, env []string) (*proc, error) {
	t.Helper()
	p := &proc{t: t, name: name, out: &testsupport.LockedBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(bin, "serve")
	p.cmd.Env = env
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		return p, err
	}
	p.cmd.Stderr = p.out
	if err := p.cmd.Start(); err != nil {
		return p, err
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(p.out, line)
			if rest, ok := strings.CutPrefix(line, "couponsvc listening on http://"); ok {
				select {
				case addr <- strings.Fields(rest)[0]:
				default:
				}
			}
		}
	}()
	go func() {
		_ = p.cmd.Wait()
		p.state = p.cmd.ProcessState
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.kill()
		if strings.Contains(p.out.String(), "WARNING: DATA RACE") {
			t.Errorf("%s: the race detector reported a race:\n%s", name, p.out.String())
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", name, tail(p.out.String(), 60))
		}
	})
	select {
	case a := <-addr:
		p.url = "http://" + a
	case <-p.exited:
		return p, fmt.Errorf("%s exited at start: %v\n%s", name, p.state, p.out.String())
	case <-time.After(90 * time.Second):
		return p, fmt.Errorf("%s did not listen within 90s:\n%s", name, p.out.String())
	}
	c, err := client.New(p.url, "", client.WithRetries(0), client.WithHTTPClient(&http.Client{Timeout: 2 * time.Second}))
	if err != nil {
		return p, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		status := 0
		if _, err := c.Readyz(context.Background(), client.Status(&status)); err == nil && status == 200 {
			return p, nil
		}
		if time.Now().After(deadline) {
			return p, fmt.Errorf("%s not ready within 30s:\n%s", name, p.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func tail(s string, lines int) string {
	parts := strings.Split(s, "\n")
	if len(parts) > lines {
		parts = parts[len(parts)-lines:]
	}
	return strings.Join(parts, "\n")
}

// kill sends SIGKILL (when still running) and waits for the exit.
func (p *proc) kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

//-----------------------------------------------------------------------------
// The JSON API, through the Go client.

// apiClient is a client of one instance with one token. It never retries
// (client.WithRetries(0)): each call is one request, and the test sees each
// outcome as it came (a network error, a 503, a business answer).
type apiClient struct {
	*client.Client
	base, token string
}

func newClient(base, token string) *apiClient {
	c, err := client.New(base, token, client.WithRetries(0), client.WithHTTPClient(&http.Client{
		Timeout:   15 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64, IdleConnTimeout: 30 * time.Second},
	}))
	if err != nil {
		panic(err) // the URLs are the test's own: a bad one is a bug of the test
	}
	return &apiClient{Client: c, base: base, token: token}
}

// answer is the outcome of one call, as the figures count it.
type answer struct {
	status  int    // the HTTP status; 0 when no answer came
	result  string // the result word of the answer
	message string // an error answer's text
	// err is a call that got no answer the client could read (a network
	// error, a body that is not the documented JSON); a refusal is not an
	// err but a status and result.
	err error
}

// outcome is the answer of a call that returned err, or a success answered
// with HTTP status whose result word is result() (called only then).
func outcome(status int, err error, result func() string) answer {
	var refused *client.Error
	switch {
	case errors.As(err, &refused):
		return answer{status: refused.Status, result: refused.Result, message: refused.Message}
	case err != nil:
		return answer{err: err}
	}
	return answer{status: status, result: result()}
}

// undocumented: an error answer without the documented JSON body (the
// client names its result after the status, "http_503").
func (a answer) undocumented() bool { return a.err == nil && strings.HasPrefix(a.result, "http_") }

// kind names an answer in the figures: "201 claimed", "503 unavailable",
// "transport error", "502 undocumented answer".
func (a answer) kind() string {
	switch {
	case a.err != nil:
		return "transport error"
	case a.undocumented():
		return fmt.Sprintf("%d undocumented answer", a.status)
	}
	return fmt.Sprintf("%d %s", a.status, a.result)
}

func (a answer) String() string {
	if a.err != nil {
		return a.err.Error()
	}
	return fmt.Sprintf("%d %s %q", a.status, a.result, a.message)
}

// wantStatus fails the test unless the call answered with HTTP status want.
func wantStatus(t *testing.T, what string, status int, err error, want int) {
	t.Helper()
	if err != nil || status != want {
		t.Fatalf("%s: %d, %v; want %d", what, status, err, want)
	}
}

// hold holds the coupons for an order of 100.00, as app, answered 201.
func hold(t *testing.T, app *apiClient, req client.HoldRequest) {
	t.Helper()
	req.OrderAmountCents = client.Ptr[int64](10000)
	status := 0
	_, err := app.HoldCoupons(context.Background(), req, client.Status(&status))
	wantStatus(t, "hold "+req.OrderID, status, err, 201)
}

// getHold reads an order's hold, answered 200.
func getHold(t *testing.T, app *apiClient, order string) *client.CheckoutAnswer {
	t.Helper()
	status := 0
	h, err := app.GetHold(context.Background(), order, client.Status(&status))
	wantStatus(t, "get hold "+order, status, err, 200)
	return h
}

// confirmHold confirms an order's hold, answered 200.
func confirmHold(t *testing.T, app *apiClient, order string) *client.CheckoutAnswer {
	t.Helper()
	status := 0
	c, err := app.ConfirmHold(context.Background(), order, client.ConfirmRequest{}, client.Status(&status))
	wantStatus(t, "confirm "+order, status, err, 200)
	return c
}

// releaseHold releases an order's hold, answered 200.
func releaseHold(t *testing.T, app *apiClient, order string) *client.ReleaseAnswer {
	t.Helper()
	status := 0
	r, err := app.ReleaseHold(context.Background(), order, client.Status(&status))
	wantStatus(t, "release "+order, status, err, 200)
	return r
}

// stateOf is a hold's state, "<none>" when the answer has none.
func stateOf(h *client.CheckoutAnswer) string {
	if h.State == nil {
		return "<none>"
	}
	return *h.State
}

// tmplSpec is a template the tests create.
type tmplSpec struct {
	id, cid      int64
	stock, limit int64
	policy       string
}

// claimEach claims one coupon of template tid for each of n users
// (prefix-u0, prefix-u1, ...; key prefix-k0, ...) and returns their codes.
func claimEach(t *testing.T, app *apiClient, tid int64, n int, prefix string) []string {
	t.Helper()
	codes := make([]string, n)
	for i := range n {
		status := 0
		got, err := app.ClaimCoupon(context.Background(), tid, client.ClaimRequest{UserID: client.Ptr(fmt.Sprintf("%s-u%d", prefix, i))},
			client.IdempotencyKey(fmt.Sprintf("%s-k%d", prefix, i)), client.Status(&status))
		wantStatus(t, fmt.Sprintf("claim %d", i), status, err, 201)
		codes[i] = got.Coupon.Code
	}
	return codes
}

// setUp creates, as admin, an app token, a campaign (with budget) and the
// templates, and returns the app client.
func setUp(t *testing.T, admin *apiClient, budget int64, specs []*tmplSpec) *apiClient {
	t.Helper()
	ctx := context.Background()
	status := 0
	tok, err := admin.CreateToken(ctx, client.CreateTokenRequest{Role: client.TokenRoleApp, Name: "faulttest"}, client.Status(&status))
	wantStatus(t, "create the app token", status, err, 201)
	camp, err := admin.CreateCampaign(ctx, client.CreateCampaignRequest{Name: "fault", BudgetCents: client.Ptr(budget)}, client.Status(&status))
	wantStatus(t, "create the campaign", status, err, 201)
	cid := camp.Campaign.ID
	for i, s := range specs {
		tm, err := admin.CreateTemplate(ctx, client.CreateTemplateRequest{
			CampaignID: cid, Name: fmt.Sprintf("fault %d", i), Kind: client.TemplateKindFixed, FaceValueCents: client.Ptr[int64](500),
			TotalStock: s.stock, PerUserLimit: s.limit, ValidDays: client.Ptr[int64](30),
			RefundPolicy: client.Ptr(client.RefundPolicy(s.policy)),
		}, client.Status(&status))
		wantStatus(t, fmt.Sprintf("create template %d", i), status, err, 201)
		s.id, s.cid = tm.Template.ID, cid
	}
	return newClient(admin.base, tok.Token)
}

//-----------------------------------------------------------------------------
// The mixed load: claims, redemptions and refunds, spread over instances.

type load struct {
	urls    []string // instances, used in turn
	token   string
	tmpls   []*tmplSpec
	users   int
	max     int           // requests to send at most
	workers int           // concurrent shoppers and cashiers
	redeem  float64       // share of a worker's turns that redeem a coupon it holds
	refund  float64       // share that refund a coupon it redeemed
	stop    chan struct{} // closed: send nothing more
	runID   string
}

type claimRec struct {
	code, user string
	tid        int64
}

type usedRec struct{ code, order string }

// ledger is what the clients were told.
type ledger struct {
	mu       sync.Mutex
	kinds    map[string]int      // "claim 201 claimed" → count
	messages map[string]string   // kind → the first error message of that kind
	claimed  map[string]claimRec // Idempotency-Key → coupon, for every 201
	unknown  map[string]claimRec // claims without a clear answer (transport error, 503)
	redeemed map[string]string   // code → order, answered redeemed
	refunded map[string]string   // code → order, answered refunded
	sent     atomic.Int64
	answered atomic.Int64 // answers with an HTTP status
	after    atomic.Int64 // answers received after mark was set
	mark     atomic.Bool
}

func newLedger() *ledger {
	return &ledger{kinds: map[string]int{}, messages: map[string]string{}, claimed: map[string]claimRec{}, unknown: map[string]claimRec{},
		redeemed: map[string]string{}, refunded: map[string]string{}}
}

func (l *ledger) note(op string, a answer) {
	defer func() {
		if a.err != nil || a.status == 503 {
			// A client that honours Retry-After, a little: no busy loop
			// while a backend is down.
			time.Sleep(20 * time.Millisecond)
		}
	}()
	if a.err == nil {
		l.answered.Add(1)
		if l.mark.Load() {
			l.after.Add(1)
		}
	}
	kind := op + " " + a.kind()
	l.mu.Lock()
	l.kinds[kind]++
	if _, seen := l.messages[kind]; !seen && (a.err != nil || a.status >= 400) {
		l.messages[kind] = a.String()
		if a.err == nil {
			l.messages[kind] = a.message
		}
	}
	l.mu.Unlock()
}

// count returns how many answers were of a kind ("claim 201 claimed").
func (l *ledger) count(kind string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.kinds[kind]
}

// summary is the figures of a run.
func (l *ledger) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	keys := make([]string, 0, len(l.kinds))
	for k := range l.kinds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "requests=%d answered=%d;", l.sent.Load(), l.answered.Load())
	for _, k := range keys {
		fmt.Fprintf(&b, " [%s]=%d", k, l.kinds[k])
	}
	for _, k := range keys {
		if m, ok := l.messages[k]; ok {
			fmt.Fprintf(&b, "\n    first %q: %s", k, m)
		}
	}
	return b.String()
}

// run sends the load until max requests were sent or stop is closed.
func (ld *load) run(t *testing.T, l *ledger) {
	t.Helper()
	if ld.runID == "" {
		ld.runID = randomHex(4)
	}
	clients := make([]*apiClient, len(ld.urls))
	for i, u := range ld.urls {
		clients[i] = newClient(u, ld.token)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < ld.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seed, _ := strconv.ParseUint(ld.runID, 16, 64)
			rng := mrand.New(mrand.NewPCG(uint64(w), seed))
			var held []claimRec
			var used []usedRec
			for {
				select {
				case <-ld.stop:
					return
				default:
				}
				n := next.Add(1)
				if n > int64(ld.max) {
					return
				}
				l.sent.Add(1)
				c := clients[int(n)%len(clients)]
				ctx := context.Background()
				switch {
				case len(used) > 0 && rng.Float64() < ld.refund:
					u := used[len(used)-1]
					used = used[:len(used)-1]
					status := 0
					got, err := c.RefundCoupon(ctx, client.RefundRequest{CouponCode: client.Ptr(u.code), OrderID: u.order}, client.Status(&status))
					a := outcome(status, err, func() string { return got.Result })
					l.note("refund", a)
					if a.err == nil && a.status == 200 {
						l.mu.Lock()
						l.refunded[u.code] = u.order
						l.mu.Unlock()
					}
				case len(held) > 0 && rng.Float64() < ld.redeem:
					h := held[len(held)-1]
					held = held[:len(held)-1]
					order := fmt.Sprintf("o-%s-%d", ld.runID, n)
					status := 0
					got, err := c.RedeemCoupon(ctx, client.RedeemRequest{CouponCode: h.code, OrderID: order,
						OrderAmountCents: client.Ptr[int64](10000), UserID: client.Ptr(h.user)}, client.Status(&status))
					a := outcome(status, err, func() string { return got.Result })
					l.note("redeem", a)
					if a.err == nil && a.status == 200 {
						l.mu.Lock()
						l.redeemed[h.code] = order
						l.mu.Unlock()
						used = append(used, usedRec{code: h.code, order: order})
					}
				default:
					tm := ld.tmpls[rng.IntN(len(ld.tmpls))]
					user := fmt.Sprintf("u%d", rng.IntN(ld.users))
					key := fmt.Sprintf("k-%s-%d", ld.runID, n)
					status := 0
					got, err := c.ClaimCoupon(ctx, tm.id, client.ClaimRequest{UserID: client.Ptr(user)},
						client.IdempotencyKey(key), client.Status(&status))
					a := outcome(status, err, func() string { return got.Result })
					l.note("claim", a)
					rec := claimRec{user: user, tid: tm.id}
					switch {
					case a.err == nil && a.status == 201:
						rec.code = got.Coupon.Code
						l.mu.Lock()
						l.claimed[key] = rec
						l.mu.Unlock()
						held = append(held, rec)
					case a.err != nil || a.status >= 500:
						l.mu.Lock()
						l.unknown[key] = rec
						l.mu.Unlock()
					}
				}
			}
		}()
	}
	wg.Wait()
}

// whenAnswered calls f once n answers arrived; it returns without calling f
// when ctx ends first.
func whenAnswered(ctx context.Context, l *ledger, n int64, f func()) {
	for l.answered.Load() < n {
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
	f()
}

//-----------------------------------------------------------------------------
// What must hold afterwards.

// reconcileReport asks an instance for a reconcile report (no repair).
func reconcileReport(c *apiClient) ([]client.TemplateDrift, error) {
	status := 0
	got, err := c.ReconcileCounters(context.Background(), client.ReconcileRequest{Repair: false}, client.Status(&status))
	if err != nil || status != 200 {
		return nil, fmt.Errorf("reconcile: %s", outcome(status, err, func() string { return got.Result }))
	}
	return got.Templates, nil
}

// drift sums the drift of a report: |drift| and users drifted.
func drift(rows []client.TemplateDrift) (stock, users int64) {
	for _, r := range rows {
		stock += max(r.Drift, -r.Drift)
		users += r.UsersDrifted
	}
	return stock, users
}

func showRows(rows []client.TemplateDrift) string {
	var b strings.Builder
	for _, r := range rows {
		rem := "nil"
		if r.RedisRemaining != nil {
			rem = strconv.FormatInt(*r.RedisRemaining, 10)
		}
		fmt.Fprintf(&b, " {template=%d total=%d redis_remaining=%s db_live=%d in_flight=%d drift=%d users_drifted=%d}",
			r.TemplateID, r.TotalStock, rem, r.DBLive, r.InFlight, r.Drift, r.UsersDrifted)
	}
	return b.String()
}

// waitSettled polls until reconcile reports no drift and no reservation is
// pending, within d; it returns how long that took and the first and last
// reports.
func waitSettled(t *testing.T, c *apiClient, b *backends, cid int64, d time.Duration) (took time.Duration, first, last string) {
	t.Helper()
	start := time.Now()
	for i := 0; ; i++ {
		rows, err := reconcileReport(c)
		pend := b.pendingOrZero(cid)
		if err == nil {
			last = showRows(rows)
			if i == 0 {
				first = last
			}
			s, u := drift(rows)
			if s == 0 && u == 0 && pend == 0 && allLoaded(rows) {
				return time.Since(start), first, last
			}
		}
		if time.Since(start) > d {
			t.Fatalf("not settled within %s: pending=%d, last reconcile %s (%v)", d, pend, last, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func allLoaded(rows []client.TemplateDrift) bool {
	for _, r := range rows {
		if r.RedisRemaining == nil && r.DBLive > 0 {
			return false
		}
	}
	return true
}

// pendingOrZero counts pending reservations; the embedded default's Redis
// inside a process is not reachable from the test (0).
func (b *backends) pendingOrZero(cid int64) int64 {
	if b.rdb == nil {
		return 0
	}
	n, err := b.rdb.ZCard(context.Background(), fmt.Sprintf("%s{c%d}:pending", b.fresh.Prefix, cid)).Result()
	if err != nil {
		return -1
	}
	return n
}

// dbFigures is what the database holds after a run.
type dbFigures struct {
	coupons, live, used, revoked, liveLogs, undoneLogs int64
}

func (f dbFigures) String() string {
	return fmt.Sprintf("coupons=%d live=%d used=%d revoked=%d live_logs=%d undone_logs=%d",
		f.coupons, f.live, f.used, f.revoked, f.liveLogs, f.undoneLogs)
}

// checkDatabase checks docs/guarantees.md on the database against
// what the clients were told.
func checkDatabase(t *testing.T, db *gorm.DB, l *ledger, tmpls []*tmplSpec) dbFigures {
	t.Helper()
	var f dbFigures
	q := func(dst any, sql string, args ...any) {
		t.Helper()
		if err := db.Raw(sql, args...).Scan(dst).Error; err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	for _, tm := range tmpls {
		var live, over int64
		q(&live, "SELECT COUNT(*) FROM user_coupons WHERE template_id = ? AND slot IS NOT NULL", tm.id)
		if live > tm.stock {
			t.Errorf("template %d oversold: %d live coupons for a stock of %d", tm.id, live, tm.stock)
		}
		q(&over, `SELECT COUNT(*) FROM (SELECT user_id FROM user_coupons WHERE template_id = ? AND slot IS NOT NULL
			GROUP BY user_id HAVING COUNT(*) > ?) x`, tm.id, tm.limit)
		if over > 0 {
			t.Errorf("template %d: %d users over the limit of %d", tm.id, over, tm.limit)
		}
	}
	q(&f.coupons, "SELECT COUNT(*) FROM user_coupons")
	q(&f.live, "SELECT COUNT(*) FROM user_coupons WHERE slot IS NOT NULL")
	q(&f.used, "SELECT COUNT(*) FROM user_coupons WHERE status = ?", models.CouponUsed)
	q(&f.revoked, "SELECT COUNT(*) FROM user_coupons WHERE status = ?", models.CouponRevoked)
	q(&f.liveLogs, "SELECT COUNT(*) FROM coupon_use_log WHERE undo_flag = ?", false)
	q(&f.undoneLogs, "SELECT COUNT(*) FROM coupon_use_log WHERE undo_flag = ?", true)

	// Every coupon used has exactly one live log row, of its order; every
	// live row is of a coupon used by that order.
	var bad []int64
	q(&bad, `SELECT c.id FROM user_coupons c WHERE c.status = ? AND (SELECT COUNT(*) FROM coupon_use_log l
		WHERE l.coupon_id = c.id AND l.undo_flag = ? AND l.order_id = c.order_id) <> 1`, models.CouponUsed, false)
	if len(bad) > 0 {
		t.Errorf("coupons used without exactly one live log row of their order: %v", bad)
	}
	bad = nil
	q(&bad, `SELECT l.id FROM coupon_use_log l JOIN user_coupons c ON c.id = l.coupon_id
		WHERE l.undo_flag = ? AND (c.status <> ? OR c.order_id IS NULL OR c.order_id <> l.order_id)`, false, models.CouponUsed)
	if len(bad) > 0 {
		t.Errorf("live log rows of coupons not used by their order: %v", bad)
	}
	bad = nil
	q(&bad, "SELECT coupon_id FROM coupon_use_log WHERE undo_flag = ? GROUP BY coupon_id HAVING COUNT(*) > 1", false)
	if len(bad) > 0 {
		t.Errorf("coupons with more than one live log row: %v", bad)
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	// Every claim answered 201 is in the database, as answered.
	type row struct {
		RequestID, Code, UserID string
		TemplateID              int64
	}
	keys := make([]string, 0, len(l.claimed))
	for k := range l.claimed {
		keys = append(keys, k)
	}
	found := map[string]row{}
	for i := 0; i < len(keys); i += 500 {
		var rows []row
		if err := db.Table("user_coupons").Select("request_id, code, user_id, template_id").
			Where("request_id IN ?", keys[i:min(i+500, len(keys))]).Scan(&rows).Error; err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			found[r.RequestID] = r
		}
	}
	lost := 0
	for k, c := range l.claimed {
		r, ok := found[k]
		if !ok || r.Code != c.code || r.UserID != c.user || r.TemplateID != c.tid {
			lost++
			if lost <= 5 {
				t.Errorf("claim %s answered 201 with %s, the database has %+v (found %t)", k, c.code, r, ok)
			}
		}
	}
	if lost > 0 {
		t.Errorf("%d claims answered 201 are not in the database as answered", lost)
	}
	// Every redemption answered has its log row; every refund answered its
	// undone row.
	check := func(what string, m map[string]string, undone bool) {
		for code, order := range m {
			var n int64
			sql := `SELECT COUNT(*) FROM coupon_use_log l JOIN user_coupons c ON c.id = l.coupon_id
				WHERE c.code = ? AND l.order_id = ?`
			args := []any{code, order}
			if undone {
				sql += " AND l.undo_flag = ?"
				args = append(args, true)
			}
			q(&n, sql, args...)
			if n != 1 {
				t.Errorf("%s of %s by %s answered 200, %d matching log rows", what, code, order, n)
			}
		}
	}
	check("redemption", l.redeemed, false)
	check("refund", l.refunded, true)
	return f
}

// replayClaims sends again up to n claims answered 201, with their keys:
// each must answer 200 duplicate with the same coupon (nothing claimed twice).
func replayClaims(t *testing.T, c *apiClient, l *ledger, n int) int {
	t.Helper()
	l.mu.Lock()
	keys := make([]string, 0, len(l.claimed))
	for k := range l.claimed {
		keys = append(keys, k)
	}
	l.mu.Unlock()
	sort.Strings(keys)
	replayed := 0
	for _, k := range keys[:min(n, len(keys))] {
		l.mu.Lock()
		rec := l.claimed[k]
		l.mu.Unlock()
		status := 0
		got, err := c.ClaimCoupon(context.Background(), rec.tid, client.ClaimRequest{UserID: client.Ptr(rec.user)},
			client.IdempotencyKey(k), client.Status(&status))
		if a := outcome(status, err, func() string { return got.Result }); a.err != nil || a.status != 200 || a.result != "duplicate" || got.Coupon.Code != rec.code {
			t.Errorf("replay of claim %s (coupon %s): %s", k, rec.code, a)
			continue
		}
		replayed++
	}
	return replayed
}

// retryUnknown sends again the claims that got no clear answer, with their
// keys, and returns the answers by kind: 201 (it had not been written), 200
// duplicate (it had), or a business answer; never a fault now that the
// backends are back.
func retryUnknown(t *testing.T, c *apiClient, l *ledger) map[string]int {
	t.Helper()
	l.mu.Lock()
	todo := make(map[string]claimRec, len(l.unknown))
	for k, v := range l.unknown {
		todo[k] = v
	}
	l.mu.Unlock()
	kinds := map[string]int{}
	for k, rec := range todo {
		status := 0
		got, err := c.ClaimCoupon(context.Background(), rec.tid, client.ClaimRequest{UserID: client.Ptr(rec.user)},
			client.IdempotencyKey(k), client.Status(&status))
		a := outcome(status, err, func() string { return got.Result })
		kinds[a.kind()]++
		if a.err != nil || a.status >= 500 || a.undocumented() {
			t.Errorf("retry of claim %s after recovery: %s", k, a)
		}
		if a.err == nil && (a.status == 201 || a.status == 200) {
			rec.code = got.Coupon.Code
			l.mu.Lock()
			l.claimed[k] = rec
			l.mu.Unlock()
		}
	}
	return kinds
}

//-----------------------------------------------------------------------------
// A TCP proxy whose connection the test can cut.

type proxy struct {
	t      *testing.T
	target string
	addr   string
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]struct{}
	cuts   int
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, target: target, addr: ln.Addr().String(), ln: ln, conns: map[net.Conn]struct{}{}}
	go p.serve(ln)
	t.Cleanup(p.cut)
	return p
}

func (p *proxy) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		up, err := net.DialTimeout("tcp", p.target, 2*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		if p.ln != ln { // cut meanwhile
			p.mu.Unlock()
			c.Close()
			up.Close()
			continue
		}
		p.conns[c], p.conns[up] = struct{}{}, struct{}{}
		p.mu.Unlock()
		pipe := func(dst, src net.Conn) {
			_, _ = io.Copy(dst, src)
			dst.Close()
			src.Close()
			p.mu.Lock()
			delete(p.conns, dst)
			delete(p.conns, src)
			p.mu.Unlock()
		}
		go pipe(up, c)
		go pipe(c, up)
	}
}

// cut closes the listener and every connection: the backend is gone.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		return
	}
	p.ln.Close()
	p.ln = nil
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]struct{}{}
	p.cuts++
}

// restore listens again on the same address.
func (p *proxy) restore() {
	p.t.Helper()
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ {
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		p.t.Errorf("proxy: listen again on %s: %v", p.addr, err)
		return
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go p.serve(ln)
}

// newFreshIsEmbedded reports whether the tests run on the embedded default.
func newFreshIsEmbedded() bool { return os.Getenv("COUPON_TEST_MYSQL_DSN") == "" }
