package core

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// KeptFormTTL is how long a form's input posted with an ended session waits
// for its admin to log in again (docs/pages.md, "Session ended").
const KeptFormTTL = 15 * time.Minute

// KeptForm is a console form's input kept across a login: the form's action
// and its fields (never a password, a secret or a token; the pages drop
// those before keeping it).
type KeptForm struct {
	Action string              `json:"action"`
	Fields map[string][]string `json:"fields"`
}

func (c *Core) keptFormKey(id string) string { return c.Keys.Prefix + "keptform:" + id }

// KeepForm stores f for KeptFormTTL under a new random id, which it returns.
// Errors: CodeUnavailable.
func (c *Core) KeepForm(ctx context.Context, f KeptForm) (string, error) {
	b, err := json.Marshal(f)
	if err != nil {
		return "", err
	}
	id := rand.Text()
	if err := c.Rdb.Set(ctx, c.keptFormKey(id), b, KeptFormTTL).Err(); err != nil {
		return "", RedisError(err)
	}
	return id, nil
}

// TakeForm returns the form kept under id and forgets it, so that it fills
// one page once; nil when there is none (expired, taken, or never kept).
// Errors: CodeUnavailable.
func (c *Core) TakeForm(ctx context.Context, id string) (*KeptForm, error) {
	b, err := c.Rdb.GetDel(ctx, c.keptFormKey(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, RedisError(err)
	}
	var f KeptForm
	if json.Unmarshal(b, &f) != nil {
		return nil, nil
	}
	return &f, nil
}
