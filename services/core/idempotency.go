package core

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// IdempotentAnswerTTL is how long the answer of a request made with an
// Idempotency-Key is kept: a retry within it gets the first answer.
const IdempotentAnswerTTL = 24 * time.Hour

// IdempotentAnswer is what Redis keeps of a request made with an
// Idempotency-Key (docs/idempotency.md): the hash of the request (method,
// path, body) and, once it finished, its answer. Done is false while the
// first request runs: that running marker lives Config.IdempotencyLease,
// renewed by KeepIdempotent, so that a request that crashed frees its key
// within the lease instead of answering in_progress for a day.
type IdempotentAnswer struct {
	Hash        string `json:"hash"`
	Done        bool   `json:"done"`
	Status      int    `json:"status,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	Body        []byte `json:"body,omitempty"`
}

// BeginIdempotent claims scope (who asks and with which key) for a request
// of this hash, for one lease. began is true when this request is the
// first: it runs (renewing its lease with KeepIdempotent), then
// FinishIdempotent or AbortIdempotent. Otherwise prev is what the first
// one left (running, or done with its answer). Redis is the one place every
// instance sees, so a retry sent to another instance finds it too.
func (c *Core) BeginIdempotent(ctx context.Context, scope, hash string) (prev *IdempotentAnswer, began bool, err error) {
	key := c.Keys.IdempotentAnswer(scope)
	running, _ := json.Marshal(IdempotentAnswer{Hash: hash})
	ok, err := c.Rdb.SetNX(ctx, key, running, c.Cfg.IdempotencyLease).Result()
	if err != nil {
		return nil, false, RedisError(err)
	}
	if ok {
		return nil, true, nil
	}
	raw, err := c.Rdb.Get(ctx, key).Bytes()
	if errors.Is(err, redis.Nil) {
		// The first request aborted between the two calls: try again.
		return c.BeginIdempotent(ctx, scope, hash)
	}
	if err != nil {
		return nil, false, RedisError(err)
	}
	prev = &IdempotentAnswer{}
	if err := json.Unmarshal(raw, prev); err != nil {
		return nil, false, RedisError(err)
	}
	return prev, false, nil
}

// KeepIdempotent renews the running marker of scope every third of the
// lease until stop is called; stop returns once no renewal is under way, so
// that FinishIdempotent after it is not shortened by a late renewal. A
// renewal that fails is tried again at the next tick: the lease is long
// enough for two to fail.
func (c *Core) KeepIdempotent(ctx context.Context, scope string) (stop func()) {
	key := c.Keys.IdempotentAnswer(scope)
	lease := c.Cfg.IdempotencyLease
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		tick := time.NewTicker(lease / 3)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				// PEXPIRE renews only a marker that is still there.
				_ = c.Rdb.PExpire(ctx, key, lease).Err()
			}
		}
	}()
	return func() { close(done); <-exited }
}

// FinishIdempotent keeps the first request's answer for its retries.
func (c *Core) FinishIdempotent(ctx context.Context, scope string, a IdempotentAnswer) error {
	a.Done = true
	raw, err := json.Marshal(a)
	if err != nil {
		return err
	}
	if err := c.Rdb.Set(ctx, c.Keys.IdempotentAnswer(scope), raw, IdempotentAnswerTTL).Err(); err != nil {
		return RedisError(err)
	}
	return nil
}

// AbortIdempotent forgets a request that ended in a fault (503, 500, 429):
// nothing was done, and a retry with the same key runs again.
func (c *Core) AbortIdempotent(ctx context.Context, scope string) error {
	if err := c.Rdb.Del(ctx, c.Keys.IdempotentAnswer(scope)).Err(); err != nil {
		return RedisError(err)
	}
	return nil
}
