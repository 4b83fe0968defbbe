// Package core is what the aggregates of couponsvc share: the backends and
// their migrations, the Redis keys, the counters' loader, the locks, the
// clock, the translation of driver errors into *models.Error, the metrics,
// the template cache and the sold-out memory (docs/architecture.md).
package core

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/couponsvc/couponsvc/models"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"
)

// Config tunes what the aggregates share. Zero values take the defaults of
// DefaultConfig.
type Config struct {
	// KeyPrefix starts every Redis key ("coupon:" by default).
	KeyPrefix string
	// DBTimeout bounds one database write on the claim path.
	DBTimeout time.Duration
	// TemplateCacheTTL is how long a template read from the database is reused
	// on the claim path; updates on this instance invalidate it at once.
	TemplateCacheTTL time.Duration
	// CouponLockTTL is the lifetime of a coupon's redislock mutex (redeem,
	// refund, revoke). The lock only saves work; an expired one is harmless.
	CouponLockTTL time.Duration
	// IdempotencyLease is how long the running marker of a request made
	// with an Idempotency-Key lives unless renewed (docs/idempotency.md):
	// the request renews it while it runs, so a crashed one frees its key
	// within the lease.
	IdempotencyLease time.Duration
	// Now is the clock (UTC); tests fix it.
	Now func() time.Time
	// NewCode makes coupon codes; tests may make them predictable.
	NewCode func() string
	// Location is the deployment's time zone (UTC when nil): the days of
	// "valid N days" and of the reports are its days (docs/time.md).
	Location *time.Location
	// Currency is the deployment's currency (COUPON_CURRENCY, an ISO 4217
	// code, models.DefaultCurrency by default): that of a campaign or a
	// template created without one, and of the rows written before
	// templates had one (FillCurrency).
	Currency string
	Logger   *slog.Logger
}

// DefaultConfig returns the configuration used when nothing is set.
func DefaultConfig() Config {
	return Config{
		KeyPrefix:        "coupon:",
		DBTimeout:        5 * time.Second,
		TemplateCacheTTL: time.Second,
		CouponLockTTL:    3 * time.Second,
		IdempotencyLease: 10 * time.Second,
		Now:              func() time.Time { return time.Now().UTC() },
		NewCode:          models.NewCouponCode,
		Location:         time.UTC,
		Currency:         models.DefaultCurrency,
		Logger:           slog.Default(),
	}
}

// ValidCurrency reports whether code is an ISO 4217 currency code in upper
// case, as Config.Currency must be.
func ValidCurrency(code string) bool { return models.ValidateCurrency("currency", code) == nil }

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	d := DefaultConfig()
	if c.KeyPrefix == "" {
		c.KeyPrefix = d.KeyPrefix
	}
	PositiveOr(&c.DBTimeout, d.DBTimeout)
	PositiveOr(&c.TemplateCacheTTL, d.TemplateCacheTTL)
	PositiveOr(&c.CouponLockTTL, d.CouponLockTTL)
	PositiveOr(&c.IdempotencyLease, d.IdempotencyLease)
	if c.Now == nil {
		c.Now = d.Now
	}
	if c.NewCode == nil {
		c.NewCode = d.NewCode
	}
	if c.Location == nil {
		c.Location = d.Location
	}
	if c.Logger == nil {
		c.Logger = d.Logger
	}
	if c.Currency == "" {
		c.Currency = d.Currency
	}
	return c
}

// Core is what the aggregates share over one database and one Redis: the
// backends, the keys, the locks, the clock, the template cache, the
// sold-out memory and the metrics. It is safe for concurrent use, and
// several instances may share the backends.
type Core struct {
	DB      *gorm.DB
	Dialect string
	Rdb     redis.UniversalClient
	// Hot is Rdb through go-redis's automatic pipelining, for the calls of
	// the claim and redeem paths: under a flash sale the scripts of hundreds
	// of concurrent requests share one write and one read, where each would
	// otherwise pay its own round trip (the service's largest cost, in
	// system calls). A lone request still goes out at once.
	Hot    redis.Cmdable
	Locker *redislock.Client
	Keys   Keys
	Cfg    Config
	Log    *slog.Logger

	Templates templateCache
	// SoldOut remembers sold-out templates (docs/soldout.md).
	SoldOut soldOutMemory
	Meter   *Metrics
	// RereadIDs says that MySQL may not number the rows of one INSERT
	// consecutively, so that their ids are read back (claims/couponwriter.go).
	RereadIDs bool
	// Hooks stay nil in production; tests set them.
	Hooks TestHooks
}

// TestHooks are points of a flow where a test pauses a request to make a race
// happen at a chosen moment. Production never sets them.
type TestHooks struct {
	// AfterRedeemDecide is called by Redeem with the order id right after the
	// coupon was read and the redemption decided; AfterRedeemUpdate inside
	// the transaction right after the guarded UPDATE.
	AfterRedeemDecide, AfterRedeemUpdate func(orderID string)
	// AfterJobBatch is called after each committed batch of a job; when it
	// returns true the runner stops as a killed process would.
	AfterJobBatch func(jobID, done int64) bool
	// BeforeJobCommit is called by a generate or import batch after it took
	// its stock, right before the transaction that writes its coupons.
	BeforeJobCommit func(jobID int64)
	// AfterConfirmOrder is called by Confirm, and AfterExpireOrder by
	// ExpireHolds, inside the transaction right after the guarded UPDATE of
	// the order's row (which then holds its lock).
	AfterConfirmOrder, AfterExpireOrder func(orderID string)
	// BeforeReleaseOrder is called by Release with the order id once it
	// decided to release the hold it read, right before its transaction.
	BeforeReleaseOrder func(orderID string)
	// AfterReturnCommit is called by a return that completed its order,
	// right after its transaction committed and before it refunds the
	// order's coupons; when it returns true the return stops there, as a
	// killed process would.
	AfterReturnCommit func(orderID string) bool
	// BeforeCouponWrite is called by the coupon writer before each batch's
	// transaction begins (a transaction holds SQLite's one connection, so a
	// test holding rows back must hold them before it).
	BeforeCouponWrite func()
	// BeforeJobCreate is called by a code job's creation, once its template
	// was read, right before the transaction that queues it;
	// JobTemplateLocked inside that transaction once it holds the template's
	// rows.
	BeforeJobCreate, JobTemplateLocked func(templateID int64)
}

// New returns a Core over the opened backends.
func New(b *Backends, cfg Config) *Core {
	cfg = cfg.WithDefaults()
	hot := pipelined(b.Redis)
	return &Core{
		DB:      b.DB,
		Dialect: b.Dialect,
		Rdb:     b.Redis,
		Hot:     hot,
		Locker:  redislock.New(hot),
		Keys:    Keys{Prefix: cfg.KeyPrefix},
		Cfg:     cfg,
		Log:     cfg.Logger,
		Templates: templateCache{
			ttl:   cfg.TemplateCacheTTL,
			items: map[int64]cachedTemplate{},
		},
		Meter:     NewMetrics(),
		RereadIDs: b.Dialect == DialectMySQL && !consecutiveIDs(b.DB, cfg.DBTimeout),
	}
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
func (s *Core) Metrics() *Metrics { return s.Meter }

// Clock is the service's clock to the microsecond, what the database keeps:
// an answer made from memory and one read back show the same instant
// (docs/time.md).
func (s *Core) Clock() time.Time { return s.Cfg.Now().UTC().Truncate(time.Microsecond) }

// Location returns the deployment's time zone (docs/time.md).
func (s *Core) Location() *time.Location { return s.Cfg.Location }

// Ready checks that the database and Redis answer.
func (s *Core) Ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	sqlDB, err := s.DB.DB()
	if err != nil {
		return models.Unavailable("the database", err)
	}
	if err := sqlDB.PingContext(ctx); err != nil {
		return models.Unavailable("the database", err)
	}
	if err := s.Rdb.Ping(ctx).Err(); err != nil {
		return models.Unavailable("Redis", err)
	}
	return nil
}

// Audit writes an audit entry inside tx, as one written-out INSERT
// (InsertRow): it is in every hold, confirm and change of the admin.
func (s *Core) Audit(tx *gorm.DB, actor, action, target, detail string) error {
	_, err := InsertRow(tx, `INSERT INTO audit_log (actor, action, target, detail, created_at) VALUES (?, ?, ?, ?, ?)`,
		actor, action, target, detail, s.Clock())
	return err
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
	// offers is the list of live automatic offers, caps each campaign's
	// per-customer cap (automatic.go).
	offers offerList
	caps   map[int64]cachedCap
	// refresh is closed when the read of the offers in flight ends (nil:
	// none in flight); forgot counts the drops of the list, so that a read
	// begun before a change does not store what it read (automatic.go).
	refresh chan struct{}
	forgot  uint64
}

type cachedShared struct {
	id      int64
	fetched time.Time
}

type cachedTemplate struct {
	t       models.Template
	fetched time.Time
}

func (c *templateCache) Get(id int64, now time.Time) (models.Template, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.items[id]
	if !ok || now.Sub(it.fetched) > c.ttl {
		return models.Template{}, false
	}
	return it.t, true
}

func (c *templateCache) Put(t models.Template, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.items[t.ID] = cachedTemplate{t: t, fetched: now}
}

// Forget drops template id, and every shared code looked up: a change of
// one template may give or take any code.
func (c *templateCache) Forget(id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.items, id)
	clear(c.shared)
	c.dropOffers()
	clear(c.caps)
}

// GetShared returns the template id of a shared code looked up less than
// ttl ago (0: no live template has it).
func (c *templateCache) GetShared(code string, now time.Time) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.shared[code]
	if !ok || now.Sub(it.fetched) > c.ttl {
		return 0, false
	}
	return it.id, true
}

func (c *templateCache) PutShared(code string, id int64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shared == nil || len(c.shared) > 10_000 {
		c.shared = map[string]cachedShared{} // bounded: typed codes come from callers
	}
	c.shared[code] = cachedShared{id: id, fetched: now}
}

// Now returns the service's clock (UTC), for callers that show effective
// statuses.
func (s *Core) Now() time.Time { return s.Clock() }

// RunEvery runs pass at once and then every interval until ctx ends; a pass
// that fails is logged as what, and the next one runs on time.
func (s *Core) RunEvery(ctx context.Context, every time.Duration, what string, pass func(context.Context) error) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		if err := pass(ctx); err != nil && ctx.Err() == nil {
			s.Log.Warn(what, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
