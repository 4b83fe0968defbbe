package services

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/netip"
	"sync/atomic"
	"time"

	"couponsvc/models"

	"github.com/go-redis/redis_rate/v10"
)

// ClaimLimits are the abuse limits on claims, in claims per minute. They guard
// the service against bots; the guarantees of SPEC §2 never depend on them. A
// zero limit is off.
type ClaimLimits struct {
	// PerUser bounds the claims of one user_id, whoever sends them.
	PerUser int
	// PerAddr bounds the claims from one client address (an IPv4 address or
	// an IPv6 /64).
	PerAddr int
}

// limiterTimeout bounds one call to the rate limiter, so that a slow Redis
// costs a claim little before the limiter gives way (see RateLimiter).
const limiterTimeout = 500 * time.Millisecond

// limiterWarnEvery spaces the warnings of a failing limiter, so that a Redis
// outage does not write one log line per request.
const limiterWarnEvery = 10 * time.Second

// RateLimiter counts claims per user and per client address in Redis with
// GCRA (go-redis/redis_rate), so that all instances share one budget. Each
// counter is one key, which Redis Cluster serves from one slot.
//
// It fails open: when Redis cannot be asked, the claim goes on unlimited and a
// warning is logged. A limiter fault must never become a business answer, and
// the claim that follows asks Redis itself and answers 503 when Redis is down;
// refusing it here would only turn a short glitch of the limiter into refused
// claims. The in-flight bound of the handlers still caps the load.
type RateLimiter struct {
	lim    *redis_rate.Limiter
	prefix string
	limits ClaimLimits
	log    *slog.Logger
	// lastWarn is the Unix time in nanoseconds of the last failure warning.
	lastWarn atomic.Int64
}

// NewRateLimiter returns the claim limiter of this service's Redis. Its keys
// carry the service's KeyPrefix, so that tests and deployments sharing a Redis
// do not share counters. redis_rate puts "rate:" in front of every key: a
// counter is "rate:<KeyPrefix>rl:claim:user:<user_id>" and lives at most one
// minute.
func (s *Service) NewRateLimiter(limits ClaimLimits) *RateLimiter {
	return &RateLimiter{
		lim:    redis_rate.NewLimiter(s.rdb),
		prefix: s.keys.prefix + "rl:claim:",
		limits: limits,
		log:    s.log,
	}
}

// Limits returns the limits the limiter applies.
func (l *RateLimiter) Limits() ClaimLimits { return l.limits }

// AllowUser takes one claim from userID's budget. It returns nil when the
// claim may go on (also when the limit is off or Redis cannot be asked) and a
// CodeRateLimited error with RetryAfterSeconds when the budget is spent.
func (l *RateLimiter) AllowUser(ctx context.Context, userID string) error {
	return l.allow(ctx, "user:"+userID, l.limits.PerUser, "this user")
}

// AllowAddr takes one claim from the budget of the client address addr (an
// IP address; IPv6 addresses share the budget of their /64, which one client
// usually holds whole). Errors as AllowUser.
func (l *RateLimiter) AllowAddr(ctx context.Context, addr string) error {
	return l.allow(ctx, "addr:"+AddrKey(addr), l.limits.PerAddr, "this address")
}

func (l *RateLimiter) allow(ctx context.Context, key string, perMinute int, who string) error {
	if perMinute <= 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, limiterTimeout)
	defer cancel()
	res, err := l.lim.Allow(ctx, l.prefix+key, redis_rate.PerMinute(perMinute))
	if err != nil {
		l.warn(err)
		return nil
	}
	if res.Allowed > 0 {
		return nil
	}
	retry := max(1, int(math.Ceil(res.RetryAfter.Seconds())))
	return &models.Error{Code: models.CodeRateLimited, RetryAfterSeconds: retry,
		Message: fmt.Sprintf("too many claims from %s (at most %d a minute); try again in %d s", who, perMinute, retry)}
}

func (l *RateLimiter) warn(err error) {
	now := time.Now().UnixNano()
	last := l.lastWarn.Load()
	if now-last < int64(limiterWarnEvery) || !l.lastWarn.CompareAndSwap(last, now) {
		return
	}
	l.log.Warn("claim rate limiter unavailable; claims go on unlimited", "err", err)
}

// AddrKey returns the part of a client address that a per-address limit
// counts: the address itself for IPv4 (also IPv4-mapped IPv6), the /64 for
// IPv6. Anything that is not an IP address is returned as it is.
func AddrKey(addr string) string {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is4() {
		return ip.String()
	}
	p, _ := ip.Prefix(64)
	return p.String()
}
