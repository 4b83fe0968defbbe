// Package events owns the outbox of couponsvc and what reads it: the events
// every flow emits inside its transaction, the webhook endpoints, the
// dispatch of their deliveries, the feed, and the retention that prunes
// them (docs/events.md).
package events

import (
	mrand "math/rand/v2"
	"net"
	"net/http"
	"time"

	"github.com/couponsvc/couponsvc/services/core"
)

// Config tunes the outbox, the webhooks and the retention. Zero values take
// the defaults of DefaultConfig.
type Config struct {
	// WebhookAllowPrivate lets endpoints be on loopback, private and
	// link-local addresses (COUPON_WEBHOOK_ALLOW_PRIVATE). WebhookTimeout
	// bounds one delivery (10s); a delivery is retried for WebhookRetryFor
	// after its first try (72h), and an endpoint failing that long is
	// disabled. WebhookLease is how long a dispatcher holds a delivery it
	// sends (WebhookTimeout + 50s): longer than a delivery takes, so that two
	// instances never send one at once, and after which a delivery whose
	// sender died is sent again.
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
}

// DefaultConfig returns the configuration used when nothing is set.
func DefaultConfig() Config {
	return Config{
		WebhookTimeout:   10 * time.Second,
		WebhookRetryFor:  72 * time.Hour,
		WebhookWorkers:   8,
		DispatchInterval: 500 * time.Millisecond,
		Jitter:           mrand.Float64,
		Resolver:         net.DefaultResolver,
		Retention:        30 * 24 * time.Hour,
		PruneInterval:    time.Hour,
	}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	core.PositiveOr(&c.WebhookTimeout, d.WebhookTimeout)
	core.PositiveOr(&c.WebhookRetryFor, d.WebhookRetryFor)
	if c.WebhookLease <= 0 {
		c.WebhookLease = c.WebhookTimeout + 50*time.Second
	}
	core.PositiveOr(&c.WebhookWorkers, d.WebhookWorkers)
	core.PositiveOr(&c.DispatchInterval, d.DispatchInterval)
	if c.Jitter == nil {
		c.Jitter = d.Jitter
	}
	if c.Resolver == nil {
		c.Resolver = d.Resolver
	}
	core.PositiveOr(&c.Retention, d.Retention)
	core.PositiveOr(&c.PruneInterval, d.PruneInterval)
	return c
}

// Events writes the outbox and delivers it to the webhook endpoints.
type Events struct {
	*core.Core
	cfg Config
	// endpoints are the enabled webhook endpoints EmitEvents fans out to;
	// webhookClient sends the deliveries.
	endpoints     endpointCache
	webhookClient *http.Client
}

// New returns the events aggregate over c.
func New(c *core.Core, cfg Config) *Events {
	cfg = cfg.withDefaults()
	return &Events{
		Core:          c,
		cfg:           cfg,
		webhookClient: NewWebhookClient(cfg.WebhookTimeout, cfg.WebhookAllowPrivate, cfg.Resolver),
	}
}
