package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/core"

	"github.com/gin-gonic/gin"
)

// IdempotencyKeyHeader makes a changing request safe to retry
// (docs/idempotency.md).
const IdempotencyKeyHeader = "Idempotency-Key"

// MaxIdempotencyKeyLen bounds an Idempotency-Key, in bytes.
const MaxIdempotencyKeyLen = 128

// IdempotencyStore keeps the answers of requests made with an
// Idempotency-Key (core.Core does, in Redis).
type IdempotencyStore interface {
	BeginIdempotent(ctx context.Context, scope, hash string) (*core.IdempotentAnswer, bool, error)
	KeepIdempotent(ctx context.Context, scope string) (stop func())
	FinishIdempotent(ctx context.Context, scope string, a core.IdempotentAnswer) error
	AbortIdempotent(ctx context.Context, scope string) error
}

// Idempotent reports whether a row takes the Idempotency-Key of
// Idempotency: every request of the API that creates or changes something,
// but those that keep their own key (a claim's key is kept with its coupon)
// and dry runs, which change nothing.
func (rt Route) Idempotent() bool {
	return isAPIPath(rt.Path) && !rt.OwnIdempotencyKey && !rt.DryRun &&
		(rt.Method == http.MethodPost || rt.Method == http.MethodPatch || rt.Method == http.MethodDelete)
}

func isAPIPath(p string) bool { return len(p) >= len(APIPrefix) && p[:len(APIPrefix)] == APIPrefix }

// Idempotency answers a retry of a request made with an Idempotency-Key with
// the first request's answer, on any instance, for core.IdempotentAnswerTTL:
// a success again as 200 with its fields and result word and "duplicate":
// true, a refusal as it was, both with Idempotent-Replayed: true. The same
// key with another method, path or body is refused 422
// idempotency_mismatch; while the first request runs (its lease renewed),
// a retry is answered 409 in_progress. A request that ends in a fault or in
// an answer that says to retry (500, 503, 429, any answer with
// Retry-After, such as a service's own in_progress) is forgotten, so that
// its retry runs again. The key is the caller's: one caller's key never
// answers another's request.
func Idempotency(store IdempotencyStore) gin.HandlerFunc {
	return func(c *gin.Context) {
		key := c.GetHeader(IdempotencyKeyHeader)
		if key == "" {
			c.Next()
			return
		}
		if err := validIdempotencyKey(key); err != nil {
			RespondError(c, err)
			c.Abort()
			return
		}
		body, err := io.ReadAll(c.Request.Body)
		if err != nil {
			if BodyTooLarge(err) {
				err = ErrBodyTooLarge
			}
			RespondError(c, err)
			c.Abort()
			return
		}
		c.Request.Body = io.NopCloser(bytes.NewReader(body))
		scope, hash := idempotencyScope(c, key, body)
		ctx := c.Request.Context()
		prev, began, err := store.BeginIdempotent(ctx, scope, hash)
		if err != nil {
			RespondError(c, err)
			c.Abort()
			return
		}
		if !began {
			replayIdempotent(c, prev, hash)
			c.Abort()
			return
		}
		stopLease := store.KeepIdempotent(context.WithoutCancel(ctx), scope)
		rec := &recordingWriter{ResponseWriter: c.Writer}
		c.Writer = rec
		defer func() {
			stopLease()
			// A panic, a fault or an answer that says to retry leaves
			// nothing done that a retry must not redo: forget the key. The
			// store's own failure here cannot be answered any more (the
			// answer went out); the key then lapses with its lease.
			status := rec.Status()
			if v := recover(); v != nil || !finalAnswer(status, rec.Header()) {
				_ = store.AbortIdempotent(context.WithoutCancel(ctx), scope)
				if v != nil {
					panic(v)
				}
				return
			}
			_ = store.FinishIdempotent(context.WithoutCancel(ctx), scope, core.IdempotentAnswer{Hash: hash,
				Status: status, ContentType: rec.Header().Get("Content-Type"), Body: rec.body.Bytes()})
		}()
		c.Next()
	}
}

// finalAnswer reports whether an answer is the key's for good: not a fault
// (5xx), not a 429 and not one that asks to retry (Retry-After), which
// would otherwise answer every retry with "retry" for a day.
func finalAnswer(status int, h http.Header) bool {
	return status < 500 && status != http.StatusTooManyRequests && h.Get("Retry-After") == ""
}

func validIdempotencyKey(key string) error {
	if len(key) > MaxIdempotencyKeyLen {
		return models.Invalid(IdempotencyKeyHeader, "must be 1 to %d printable ASCII characters", MaxIdempotencyKeyLen)
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return models.Invalid(IdempotencyKeyHeader, "must be 1 to %d printable ASCII characters", MaxIdempotencyKeyLen)
		}
	}
	return nil
}

// idempotencyScope is the hash of who asks with which key (the scope) and of
// what they ask (the request: method, path, body).
func idempotencyScope(c *gin.Context, key string, body []byte) (scope, hash string) {
	who := "anonymous"
	if p := Principal(c); p != nil {
		who = p.Role + "\x00" + p.Name + "\x00" + strconv.FormatInt(p.TokenID, 10)
	}
	s := sha256.Sum256([]byte(who + "\x00" + key))
	h := sha256.New()
	h.Write([]byte(c.Request.Method + "\x00" + c.Request.URL.Path + "\x00"))
	h.Write(body)
	return hex.EncodeToString(s[:]), hex.EncodeToString(h.Sum(nil))
}

// replayIdempotent answers a retry from what the first request left.
func replayIdempotent(c *gin.Context, prev *core.IdempotentAnswer, hash string) {
	switch {
	case prev.Hash != hash:
		RespondError(c, &models.Error{Code: models.CodeIdempotencyMismatch, Field: IdempotencyKeyHeader,
			Message: "this Idempotency-Key was used for another request (method, path or body)"})
	case !prev.Done:
		RespondError(c, &models.Error{Code: models.CodeInProgress, RetryAfterSeconds: 1,
			Message: "the first request with this Idempotency-Key is still running; retry shortly"})
	default:
		status, body := prev.Status, prev.Body
		if dup, ok := asReplay(body); ok && status >= 200 && status < 300 {
			status, body = http.StatusOK, dup
		}
		c.Header(ReplayedHeader, "true")
		c.Data(status, prev.ContentType, body)
	}
}

// ReplayedHeader marks an answer replayed from an Idempotency-Key's first
// answer.
const ReplayedHeader = "Idempotent-Replayed"

// ReplayField is the boolean field a replayed JSON success carries beside
// the first answer's fields (docs/idempotency.md).
const ReplayField = "duplicate"

// asReplay turns a JSON success answer into its replay: the first answer's
// fields, code and result word, and "duplicate": true, so that a caller
// checking result == "redeemed" reads the same on its own retry. ok is
// false for an answer without a result word (no body, a CSV), which is
// replayed as it was.
func asReplay(body []byte) (replay []byte, ok bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil || m["result"] == nil {
		return nil, false
	}
	m[ReplayField] = json.RawMessage("true")
	out, err := json.Marshal(m)
	return out, err == nil
}

// recordingWriter keeps a copy of the answer it writes.
type recordingWriter struct {
	gin.ResponseWriter
	body bytes.Buffer
}

func (w *recordingWriter) Write(b []byte) (int, error) {
	w.body.Write(b)
	return w.ResponseWriter.Write(b)
}

func (w *recordingWriter) WriteString(s string) (int, error) {
	w.body.WriteString(s)
	return w.ResponseWriter.WriteString(s)
}
