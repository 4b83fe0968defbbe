// Package services holds the flows of couponsvc: claims, redemptions, refunds,
// reconciliation, and the administration of campaigns, templates, users and
// tokens. It owns the transactions, the Redis scripts and the locks; callers see
// only models types and *models.Error.
package services

import (
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"

	"couponsvc/models"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"
	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"
)

// Config tunes the services. Zero values take the defaults of DefaultConfig.
type Config struct {
	// KeyPrefix starts every Redis key ("coupon:" by default).
	KeyPrefix string
	// IdempotencyTTL is how long Redis remembers a claim's idempotency key; the
	// database's unique request_id remembers it for ever.
	IdempotencyTTL time.Duration
	// PendingTimeout is the age after which the sweeper resolves a reservation
	// that was neither confirmed nor given back. It must stay well above DBTimeout.
	PendingTimeout time.Duration
	// SweepInterval is how often the sweeper runs.
	SweepInterval time.Duration
	// DBTimeout bounds one database write on the claim path.
	DBTimeout time.Duration
	// CouponWriters is how many batches of coupon rows are written at once
	// (default 4; 1 on SQLite, which has one writer); CouponBatch bounds a
	// batch's rows. Fewer writers make bigger batches, so fewer commits: on
	// the benchmark machine 4 wrote 15% more claims a second than 8.
	CouponWriters, CouponBatch int
	// TemplateCacheTTL is how long a template read from the database is reused
	// on the claim path; updates on this instance invalidate it at once.
	TemplateCacheTTL time.Duration
	// CouponLockTTL is the lifetime of a coupon's redislock mutex (redeem,
	// refund, revoke). The lock only saves work; an expired one is harmless.
	CouponLockTTL time.Duration
	// Now is the clock (UTC); tests fix it.
	Now func() time.Time
	// NewCode makes coupon codes; tests may make them predictable.
	NewCode func() string
	// LoginsPerAccount bounds the page login attempts on one account from
	// one client address in 15 minutes (10 by default; a successful login
	// from that address clears its count); LoginsPerAddress bounds the
	// attempts from one client address a minute, whatever the account (30).
	LoginsPerAccount, LoginsPerAddress int
	// LoginSlowAfter is the number of failed logins on one account, from all
	// addresses, in 15 minutes after which every further attempt on that
	// account waits LoginSlowStep for each failure beyond it, at most
	// LoginSlowMax, before its password is checked (20, 500ms and 3s by
	// default). Failures spread over many addresses are slowed, and the
	// account's owner is never refused by them.
	LoginSlowAfter              int
	LoginSlowStep, LoginSlowMax time.Duration
	// MaxCouponsPerOrder caps the coupons one order carries (held or used;
	// 5 by default).
	MaxCouponsPerOrder int
	// JobLease is how long a job's runner holds it without committing a
	// batch before another instance may take it over (30s by default);
	// JobPoll is how often every instance looks for jobs to run (1s).
	JobLease, JobPoll time.Duration
	// JobBatch is the rows a generation or import job writes in one
	// transaction (5000 by default).
	JobBatch int
	// Rand is the randomness of patterned codes (crypto/rand by default).
	Rand io.Reader
	// BootstrapToken, when set, is accepted as an admin API token.
	BootstrapToken string
	// Location is the deployment's time zone (UTC when nil): the days of
	// "valid N days" and of the reports are its days (docs/time.md).
	Location *time.Location
	Logger   *slog.Logger

	// Webhooks (docs/events.md). WebhookAllowPrivate lets endpoints be on
	// loopback, private and link-local addresses
	// (COUPON_WEBHOOK_ALLOW_PRIVATE). WebhookTimeout bounds one delivery
	// (10s); a delivery is retried for WebhookRetryFor after its first try
	// (72h), and an endpoint failing that long is disabled. WebhookLease is
	// how long a dispatcher holds a delivery it sends (60s): longer than a
	// delivery takes, so that two instances never send one at once, and
	// after which a delivery whose sender died is sent again.
	WebhookAllowPrivate bool
	WebhookTimeout      time.Duration
	WebhookRetryFor     time.Duration
	WebhookLease        time.Duration
	// WebhookWorkers is how many deliveries an instance sends at once (8).
	WebhookWorkers int
	// DispatchInterval is how often an idle dispatcher looks for due
	// deliveries (500ms).
	DispatchInterval time.Duration
	// Jitter returns a number in [0, 1): the jitter of webhook retries; tests
	// fix it.
	Jitter func() float64
	// Resolver resolves the hosts of endpoints at registration and at each
	// connection.
	Resolver *net.Resolver
	// Retention is how long events, deliveries and finished jobs are kept
	// (COUPON_RETENTION, 30 days); PruneInterval how often they are pruned
	// (1h).
	Retention, PruneInterval time.Duration
	// ReportBudget bounds the work of one redemption report, page or CSV
	// (DefaultReportBudget); ExportBudget that of one coupons export
	// (DefaultExportBudget). Past it the request ends with an error that
	// says so (docs/reports.md, docs/jobs.md).
	ReportBudget, ExportBudget time.Duration
	// PasswordCost is the bcrypt cost of the password hashes this instance
	// makes (bcrypt.DefaultCost). A stored hash keeps the cost it was made
	// with. Tests lower it: under the race detector one hash at the default
	// cost takes seconds.
	PasswordCost int
}

// DefaultConfig returns the configuration used when nothing is set.
func DefaultConfig() Config {
	return Config{
		KeyPrefix:        "coupon:",
		IdempotencyTTL:   24 * time.Hour,
		PendingTimeout:   30 * time.Second,
		SweepInterval:    5 * time.Second,
		DBTimeout:        5 * time.Second,
		TemplateCacheTTL: time.Second,
		CouponLockTTL:    3 * time.Second,
		Now:              func() time.Time { return time.Now().UTC() },
		NewCode:          models.NewCouponCode,
		Logger:           slog.Default(),
	}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.PasswordCost < bcrypt.MinCost || c.PasswordCost > bcrypt.MaxCost {
		c.PasswordCost = bcrypt.DefaultCost
	}
	if c.KeyPrefix == "" {
		c.KeyPrefix = d.KeyPrefix
	}
	if c.IdempotencyTTL <= 0 {
		c.IdempotencyTTL = d.IdempotencyTTL
	}
	if c.PendingTimeout <= 0 {
		c.PendingTimeout = d.PendingTimeout
	}
	if c.SweepInterval <= 0 {
		c.SweepInterval = d.SweepInterval
	}
	if c.DBTimeout <= 0 {
		c.DBTimeout = d.DBTimeout
	}
	if c.ReportBudget <= 0 {
		c.ReportBudget = DefaultReportBudget
	}
	if c.ExportBudget <= 0 {
		c.ExportBudget = DefaultExportBudget
	}
	if c.LoginsPerAccount <= 0 {
		c.LoginsPerAccount = 10
	}
	if c.LoginsPerAddress <= 0 {
		c.LoginsPerAddress = 30
	}
	if c.LoginSlowAfter <= 0 {
		c.LoginSlowAfter = 20
	}
	if c.LoginSlowStep <= 0 {
		c.LoginSlowStep = 500 * time.Millisecond
	}
	if c.LoginSlowMax <= 0 {
		c.LoginSlowMax = 3 * time.Second
	}
	if c.CouponBatch <= 0 {
		c.CouponBatch = 100
	}
	if c.TemplateCacheTTL <= 0 {
		c.TemplateCacheTTL = d.TemplateCacheTTL
	}
	if c.CouponLockTTL <= 0 {
		c.CouponLockTTL = d.CouponLockTTL
	}
	if c.Now == nil {
		c.Now = d.Now
	}
	if c.NewCode == nil {
		c.NewCode = d.NewCode
	}
	if c.Logger == nil {
		c.Logger = d.Logger
	}
	if c.JobLease <= 0 {
		c.JobLease = 30 * time.Second
	}
	if c.JobPoll <= 0 {
		c.JobPoll = time.Second
	}
	if c.JobBatch <= 0 {
		c.JobBatch = 5000
	}
	if c.Rand == nil {
		c.Rand = rand.Reader
	}
	if c.WebhookTimeout <= 0 {
		c.WebhookTimeout = 10 * time.Second
	}
	if c.WebhookRetryFor <= 0 {
		c.WebhookRetryFor = 72 * time.Hour
	}
	if c.WebhookLease <= 0 {
		c.WebhookLease = c.WebhookTimeout + 50*time.Second
	}
	if c.WebhookWorkers <= 0 {
		c.WebhookWorkers = 8
	}
	if c.DispatchInterval <= 0 {
		c.DispatchInterval = 500 * time.Millisecond
	}
	if c.Jitter == nil {
		c.Jitter = mrand.Float64
	}
	if c.Resolver == nil {
		c.Resolver = net.DefaultResolver
	}
	if c.Retention <= 0 {
		c.Retention = 30 * 24 * time.Hour
	}
	if c.PruneInterval <= 0 {
		c.PruneInterval = time.Hour
	}
	if c.Location == nil {
		c.Location = time.UTC
	}
	return c
}

// Service is couponsvc's business layer over one database and one Redis.
// It is safe for concurrent use, and several instances may share the backends.
type Service struct {
	db      *gorm.DB
	dialect string
	rdb     redis.UniversalClient
	// hot is rdb through go-redis's automatic pipelining, for the calls of
	// the claim and redeem paths: under a flash sale the scripts of hundreds
	// of concurrent requests share one write and one read, where each would
	// otherwise pay its own round trip (the service's largest cost, in
	// system calls). A lone request still goes out at once.
	hot    redis.Cmdable
	locker *redislock.Client
	keys   keys
	cfg    Config
	log    *slog.Logger

	templates templateCache
	// soldOut remembers sold-out templates (docs/soldout.md).
	soldOut soldOutMemory
	tokens  tokenCache
	metrics *Metrics
	writer  *couponWriter
	// rereadIDs says that MySQL may not number the rows of one INSERT
	// consecutively, so that their ids are read back (couponwriter.go).
	rereadIDs bool
	// owner names this instance in the job leases it takes.
	owner string
	// endpoints are the enabled webhook endpoints emitEvents fans out to;
	// webhookClient sends the deliveries.
	endpoints     endpointCache
	webhookClient *http.Client
	// hooks stay nil in production; tests set them (export_test.go).
	hooks testHooks
	// dummyHash is checked against when a login names no user, so that it
	// takes the time of a real check (made with cfg.PasswordCost, once).
	dummyHash func() []byte
}

// testHooks are points of a flow where a test pauses a request to make a race
// happen at a chosen moment. Production never sets them.
type testHooks struct {
	// afterRedeemDecide is called by Redeem with the order id right after the
	// coupon was read and the redemption decided; afterRedeemUpdate inside
	// the transaction right after the guarded UPDATE.
	afterRedeemDecide, afterRedeemUpdate func(orderID string)
	// afterJobBatch is called after each committed batch of a job; when it
	// returns true the runner stops as a killed process would.
	afterJobBatch func(jobID, done int64) bool
	// beforeJobCommit is called by a generate or import batch after it took
	// its stock, right before the transaction that writes its coupons.
	beforeJobCommit func(jobID int64)
	// afterConfirmOrder is called by Confirm, and afterExpireOrder by
	// ExpireHolds, inside the transaction right after the guarded UPDATE of
	// the order's row (which then holds its lock).
	afterConfirmOrder, afterExpireOrder func(orderID string)
}

// New returns a Service over the opened backends.
func New(b *Backends, cfg Config) *Service {
	if b.Dialect == DialectSQLite && cfg.JobBatch <= 0 {
		// A job's batch holds SQLite's one connection while it commits:
		// smaller batches keep every other request's wait for it short.
		cfg.JobBatch = 1000
	}
	cfg = cfg.withDefaults()
	hot := pipelined(b.Redis)
	s := &Service{
		db:      b.DB,
		dialect: b.Dialect,
		rdb:     b.Redis,
		hot:     hot,
		locker:  redislock.New(hot),
		keys:    keys{prefix: cfg.KeyPrefix},
		cfg:     cfg,
		log:     cfg.Logger,
		templates: templateCache{
			ttl:   cfg.TemplateCacheTTL,
			items: map[int64]cachedTemplate{},
		},
		tokens:        tokenCache{items: map[string]cachedToken{}},
		metrics:       NewMetrics(),
		owner:         newOwner(),
		webhookClient: newWebhookClient(cfg.WebhookTimeout, cfg.WebhookAllowPrivate, cfg.Resolver),
		dummyHash: sync.OnceValue(func() []byte {
			// withDefaults keeps the cost in range, so this cannot fail.
			h, _ := bcrypt.GenerateFromPassword([]byte("not a password of anyone"), cfg.PasswordCost)
			return h
		}),
	}
	writers := cfg.CouponWriters
	if b.Dialect == DialectSQLite {
		writers = 1
	} else if writers <= 0 {
		writers = 4
	}
	rereadIDs := b.Dialect == DialectMySQL && !consecutiveIDs(b.DB, cfg.DBTimeout)
	s.rereadIDs = rereadIDs
	s.writer = newCouponWriter(b.DB, rereadIDs, writers, cfg.CouponBatch, cfg.DBTimeout,
		cfg.NewCode, func(n int) { s.metrics.CouponBatchRows.Observe(float64(n)) }, s.emitClaimEvents)
	return s
}

// pipelined returns the client's shared automatic pipeliner; the client
// closes it. A client of another kind (none in couponsvc) is used as it is.
func pipelined(rdb redis.UniversalClient) redis.Cmdable {
	var ap *redis.AutoPipeliner
	var err error
	switch c := rdb.(type) {
	case *redis.Client:
		ap, err = c.AutoPipeline()
	case *redis.ClusterClient:
		ap, err = c.AutoPipeline()
	default:
		return rdb
	}
	if err != nil { // only for invalid options, which couponsvc does not set
		return rdb
	}
	return ap
}

// Metrics returns the service's Prometheus metrics.
func (s *Service) Metrics() *Metrics { return s.metrics }

// now is the service's clock to the microsecond, what the database keeps:
// an answer made from memory and one read back show the same instant
// (docs/time.md).
func (s *Service) now() time.Time { return s.cfg.Now().UTC().Truncate(time.Microsecond) }

// Location returns the deployment's time zone (docs/time.md).
func (s *Service) Location() *time.Location { return s.cfg.Location }

// Ready checks that the database and Redis answer.
func (s *Service) Ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	sqlDB, err := s.db.DB()
	if err != nil {
		return models.Unavailable("the database", err)
	}
	if err := sqlDB.PingContext(ctx); err != nil {
		return models.Unavailable("the database", err)
	}
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return models.Unavailable("Redis", err)
	}
	return nil
}

// audit writes an audit entry inside tx.
func (s *Service) audit(tx *gorm.DB, actor, action, target, detail string) error {
	return tx.Create(&models.AuditEntry{Actor: actor, Action: action, Target: target, Detail: detail, CreatedAt: s.now()}).Error
}

// templateCache keeps templates read on the claim path for a short time, so
// that a flash sale does not read the same row thousands of times a second.
type templateCache struct {
	mu    sync.Mutex
	ttl   time.Duration
	items map[int64]cachedTemplate
	// shared maps a shared code to the live template that has it (0: none),
	// for checkout's reading of typed codes (see sharedTemplate).
	shared map[string]cachedShared
}

type cachedShared struct {
	id      int64
	fetched time.Time
}

type cachedTemplate struct {
	t       models.Template
	fetched time.Time
}

func (c *templateCache) get(id int64, now time.Time) (models.Template, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.items[id]
	if !ok || now.Sub(it.fetched) > c.ttl {
		return models.Template{}, false
	}
	return it.t, true
}

func (c *templateCache) put(t models.Template, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.items[t.ID] = cachedTemplate{t: t, fetched: now}
}

// forget drops template id, and every shared code looked up: a change of
// one template may give or take any code.
func (c *templateCache) forget(id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.items, id)
	clear(c.shared)
}

// getShared returns the template id of a shared code looked up less than
// ttl ago (0: no live template has it).
func (c *templateCache) getShared(code string, now time.Time) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.shared[code]
	if !ok || now.Sub(it.fetched) > c.ttl {
		return 0, false
	}
	return it.id, true
}

func (c *templateCache) putShared(code string, id int64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shared == nil || len(c.shared) > 10_000 {
		c.shared = map[string]cachedShared{} // bounded: typed codes come from callers
	}
	c.shared[code] = cachedShared{id: id, fetched: now}
}

// Now returns the service's clock (UTC), for callers that show effective
// statuses.
func (s *Service) Now() time.Time { return s.now() }

// runEvery runs pass at once and then every interval until ctx ends; a pass
// that fails is logged as what, and the next one runs on time.
func (s *Service) runEvery(ctx context.Context, every time.Duration, what string, pass func(context.Context) error) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		if err := pass(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn(what, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
