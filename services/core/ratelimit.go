package core

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"sync"
	"time"

	"github.com/couponsvc/couponsvc/models"

	"github.com/go-redis/redis_rate/v10"
)

// ClaimLimits are the abuse limits on claims, in claims per minute. They guard
// the service against bots; no guarantee (docs/guarantees.md) depends on them. A
// zero limit is off.
type ClaimLimits struct {
	// PerUser bounds the claims of one user_id, whoever sends them.
	PerUser int
	// PerAddr bounds the claims from one client address (an IPv4 address or
	// an IPv6 /64).
	PerAddr int
}

// RateLimiter counts claims per user and per client address in Redis with
// GCRA (go-redis/redis_rate), so that all instances share one budget. Each
// counter is one key, which Redis Cluster serves from one slot.
//
// When Redis cannot be asked, the limiter answers CodeUnavailable (503 with
// Retry-After), never a business answer, and never lets the claim through
// unlimited: the claim would ask the same Redis and answer 503 too, a Redis
// too slow to answer is better spared the claims, and a limiter that turns
// itself off under a flood is no limiter. The limiter adds no timeout of its
// own: it fails exactly when the claim would.
type RateLimiter struct {
	lim    *redis_rate.Limiter
	prefix string
	limits ClaimLimits
}

// NewRateLimiter returns the claim limiter of this service's Redis. Its keys
// carry the service's KeyPrefix, so that tests and deployments sharing a Redis
// do not share counters. redis_rate puts "rate:" in front of every key: a
// counter is "rate:<KeyPrefix>rl:claim:user:<user_id>" and lives at most one
// minute.
func (s *Core) NewRateLimiter(limits ClaimLimits) *RateLimiter {
	return &RateLimiter{
		lim:    redis_rate.NewLimiter(s.Hot),
		prefix: s.Keys.Prefix + "rl:claim:",
		limits: limits,
	}
}

// Limits returns the limits the limiter applies.
func (l *RateLimiter) Limits() ClaimLimits { return l.limits }

// AllowUser takes one claim from userID's budget. It returns nil when the
// claim may go on (also when the limit is off), a CodeRateLimited error with
// RetryAfterSeconds when the budget is spent, and CodeUnavailable when Redis
// cannot be asked.
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
	return allowN(ctx, l.lim, l.prefix+key, perMinute, 1, "claims from "+who)
}

// allowN takes n from the budget of key (perMinute a minute; off when 0):
// nil when allowed, a CodeRateLimited error with RetryAfterSeconds saying
// "too many <what> (at most perMinute a minute)" when not, CodeUnavailable
// when Redis cannot be asked. n above perMinute takes the whole budget.
func allowN(ctx context.Context, lim *redis_rate.Limiter, key string, perMinute, n int, what string) error {
	if perMinute <= 0 {
		return nil
	}
	res, err := lim.AllowN(ctx, key, redis_rate.PerMinute(perMinute), min(max(n, 1), perMinute))
	if err != nil {
		return RedisError(err)
	}
	if res.Allowed > 0 {
		return nil
	}
	retry := max(1, int(math.Ceil(res.RetryAfter.Seconds())))
	return &models.Error{Code: models.CodeRateLimited, RetryAfterSeconds: retry,
		Message: fmt.Sprintf("too many %s (at most %d a minute); try again in %d s", what, perMinute, retry)}
}

// ValidateLimits are the abuse limits on validations (Service.Validate), in
// coupon codes validated a minute: each code of a validation is one guess
// at a code. A zero limit is off.
type ValidateLimits struct {
	// PerCaller bounds the codes one API token (or one page session's
	// user) validates, for whichever users.
	PerCaller int
	// PerUser bounds the codes validated for one user_id, whoever sends
	// them.
	PerUser int
}

// ValidateLimiter counts validated codes per caller and per user in Redis
// (GCRA, shared by all instances), as RateLimiter counts claims, and answers
// Redis faults the same way (CodeUnavailable, never unlimited). Its counters
// are "rate:<KeyPrefix>rl:validate:caller:<caller>" and
// "rate:<KeyPrefix>rl:validate:user:<user_id>", each living at most a
// minute.
type ValidateLimiter struct {
	lim    *redis_rate.Limiter
	prefix string
	limits ValidateLimits
}

// NewValidateLimiter returns the validation limiter of this service's Redis.
func (s *Core) NewValidateLimiter(limits ValidateLimits) *ValidateLimiter {
	return &ValidateLimiter{lim: redis_rate.NewLimiter(s.Hot), prefix: s.Keys.Prefix + "rl:validate:", limits: limits}
}

// Limits returns the limits the limiter applies.
func (l *ValidateLimiter) Limits() ValidateLimits { return l.limits }

// AllowCaller takes n validated codes from the budget of caller, a name of
// who sends them that no other caller shares ("token:<id>" for an API
// token). Errors as RateLimiter.AllowUser.
func (l *ValidateLimiter) AllowCaller(ctx context.Context, caller string, n int) error {
	return allowN(ctx, l.lim, l.prefix+"caller:"+caller, l.limits.PerCaller, n, "coupon codes validated by this caller")
}

// AllowUser takes n validated codes from the budget of userID. Errors as
// RateLimiter.AllowUser.
func (l *ValidateLimiter) AllowUser(ctx context.Context, userID string, n int) error {
	return allowN(ctx, l.lim, l.prefix+"user:"+userID, l.limits.PerUser, n, "coupon codes validated for this user")
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

// maxBlockedAddrs bounds the addresses a BadTokenLimiter remembers as over
// their limit, so that a flood from many addresses does not grow memory.
const maxBlockedAddrs = 10000

// BadTokenLimiter counts failed bearer-token look-ups per client address in
// Redis (GCRA, shared by all instances), against an attacker guessing tokens.
// An address over its limit has every bearer request refused, a valid token's
// too: a guess that is refused only when wrong would still tell the right one.
// Which addresses are over is remembered in the instance from Redis's answers
// to failed look-ups, so that a valid token costs no round trip; another
// instance learns it at the address's next failed look-up there.
type BadTokenLimiter struct {
	lim       *redis_rate.Limiter
	prefix    string
	perMinute int
	now       func() time.Time

	mu      sync.Mutex
	blocked map[string]time.Time // address key → until when
}

// NewBadTokenLimiter returns the limiter of failed token look-ups, perMinute
// from one address. Its counters are "rate:<KeyPrefix>rl:token:addr:<addr>".
func (s *Core) NewBadTokenLimiter(perMinute int) *BadTokenLimiter {
	return &BadTokenLimiter{
		lim:       redis_rate.NewLimiter(s.Hot),
		prefix:    s.Keys.Prefix + "rl:token:addr:",
		perMinute: perMinute,
		now:       s.Clock,
		blocked:   map[string]time.Time{},
	}
}

// Blocked returns a CodeRateLimited error when the failed look-ups from addr
// are over the limit, as this instance last learnt; else nil. It does not ask
// Redis.
func (l *BadTokenLimiter) Blocked(addr string) error {
	key := AddrKey(addr)
	now := l.now()
	l.mu.Lock()
	until, ok := l.blocked[key]
	if ok && !now.Before(until) {
		delete(l.blocked, key)
		ok = false
	}
	l.mu.Unlock()
	if !ok {
		return nil
	}
	return l.refusal(until.Sub(now))
}

// Failed counts one failed look-up from addr. It returns a CodeRateLimited
// error when the address is over its limit, CodeUnavailable when Redis cannot
// be asked, else nil. When this look-up spent the address's budget or was
// over it, Blocked refuses the address until one more is allowed.
func (l *BadTokenLimiter) Failed(ctx context.Context, addr string) error {
	key := AddrKey(addr)
	limit := redis_rate.PerMinute(l.perMinute)
	res, err := l.lim.Allow(ctx, l.prefix+key, limit)
	if err != nil {
		return RedisError(err)
	}
	if res.Allowed > 0 {
		if res.Remaining == 0 {
			// This was the last one: the next bearer request, whatever its
			// token, waits until one more look-up is allowed.
			l.block(key, res.ResetAfter-time.Duration(limit.Burst-1)*limit.Period/time.Duration(limit.Rate))
		}
		return nil
	}
	l.block(key, res.RetryAfter)
	return l.refusal(res.RetryAfter)
}

// block remembers that the address key is over its limit for wait.
func (l *BadTokenLimiter) block(key string, wait time.Duration) {
	if wait <= 0 {
		return
	}
	now := l.now()
	l.mu.Lock()
	if len(l.blocked) >= maxBlockedAddrs {
		for k, until := range l.blocked {
			if !now.Before(until) {
				delete(l.blocked, k)
			}
		}
		if len(l.blocked) >= maxBlockedAddrs {
			// Redis still refuses their next failed look-up.
			clear(l.blocked)
		}
	}
	l.blocked[key] = now.Add(wait)
	l.mu.Unlock()
}

func (l *BadTokenLimiter) refusal(wait time.Duration) error {
	retry := max(1, int(math.Ceil(wait.Seconds())))
	return &models.Error{Code: models.CodeRateLimited, RetryAfterSeconds: retry,
		Message: fmt.Sprintf("too many invalid API tokens from this address (at most %d a minute); try again in %d s", l.perMinute, retry)}
}
