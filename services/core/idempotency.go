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
// first request runs.
type IdempotentAnswer struct {
	Hash        string `json:"hash"`
	Done        bool   `json:"done"`
	Status      int    `json:"status,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	Body        []byte `json:"body,omitempty"`
}

// BeginIdempotent claims scope (who asks and with which key) for a request
// of this hash. began is true when this request is the first: it runs, then
// FinishIdempotent or AbortIdempotent. Otherwise prev is what the first
// one left (running, or done with its answer). Redis is the one place every
// instance sees, so a retry sent to another instance finds it too.
func (c *Core) BeginIdempotent(ctx context.Context, scope, hash string) (prev *IdempotentAnswer, began bool, err error) {
	key := c.Keys.IdempotentAnswer(scope)
	running, _ := json.Marshal(IdempotentAnswer{Hash: hash})
	ok, err := c.Rdb.SetNX(ctx, key, running, IdempotentAnswerTTL).Result()
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
