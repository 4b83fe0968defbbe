package web

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/models"

	"github.com/gin-gonic/gin"
)

// Limits bound what clients may ask of one instance. The zero value
// turns the claim limits off and keeps DefaultRequestTimeout; cmd/couponsvc
// sets the production defaults.
type Limits struct {
	// ClaimsPerUser bounds the claims of one user_id a minute, whoever sends
	// them (0: off).
	ClaimsPerUser int
	// ClaimsPerAddr bounds the claims a minute from one client address
	// (IPv4 address or IPv6 /64) of anonymous and session requests; requests
	// with an API token are not counted, since the shop's backend sends the
	// claims of all its shoppers from one address (0: off).
	ClaimsPerAddr int
	// BadTokensPerAddr bounds the failed bearer-token look-ups a minute from
	// one client address; over it, every bearer request from the address is
	// answered 429 until the next look-up would be allowed (0: off).
	BadTokensPerAddr int
	// ValidatesPerCaller bounds the coupon codes one API token (or one page
	// session's user) validates a minute, for whichever users (0: off).
	ValidatesPerCaller int
	// ValidatesPerUser bounds the coupon codes validated for one user_id a
	// minute, whoever sends them (0: off).
	ValidatesPerUser int
	// MaxInflightClaims bounds the claims this instance works on at once;
	// beyond it a claim is answered 503 at once rather than queued (0: no
	// bound).
	MaxInflightClaims int
	// RequestTimeout bounds the work of every request through its context
	// (0: DefaultRequestTimeout; negative: none).
	RequestTimeout time.Duration
}

// DefaultRequestTimeout bounds a request when Limits.RequestTimeout is zero.
// It stays above services.Config.DBTimeout, so that a claim's own timeout
// fires first and settles the claim.
const DefaultRequestTimeout = 10 * time.Second

// maxRequestBytes bounds the body of every request, the pages' forms included.
// It is one byte above MaxBodyBytes so that DecodeJSON still tells an oversized
// JSON body by its length and names it.
const maxRequestBytes = MaxBodyBytes + 1

// MaxEmptyBody bounds the body of an API route that takes none (its row has
// no Request nor RawRequest): such a body is ignored, and one larger is
// answered 413 before the handler runs (docs/result-codes.md).
const MaxEmptyBody = 1 << 10

// ErrBodyNotTaken refuses a body over MaxEmptyBody on a route that takes none.
var ErrBodyNotTaken = WithStatus(http.StatusRequestEntityTooLarge,
	models.Invalid("body", "must be empty: this request takes no body (at most 1 KiB is ignored)"))

// TakesNoBody reports an API route whose row declares no request body.
func (rt Route) TakesNoBody() bool {
	return strings.HasPrefix(rt.Path, APIPrefix) && !rt.Page && !rt.Asset && rt.Request == nil &&
		rt.RawRequest == nil && rt.MaxBody == 0
}

// BodyLimit is the largest body the route takes, as the OpenAPI document says
// (x-max-body-bytes): its MaxBody, MaxEmptyBody when it takes none, else
// MaxBodyBytes.
func (rt Route) BodyLimit() int64 {
	switch {
	case rt.MaxBody > 0:
		return rt.MaxBody
	case rt.TakesNoBody():
		return MaxEmptyBody
	}
	return MaxBodyBytes
}

// emptyBodyTooLarge reports a body over MaxEmptyBody, by its length or, sent
// without one, by reading at most that much of it.
func emptyBodyTooLarge(r *http.Request) bool {
	if r.ContentLength > MaxEmptyBody {
		return true
	}
	if r.ContentLength >= 0 || r.Body == nil || r.Body == http.NoBody {
		return false
	}
	b, _ := io.ReadAll(io.LimitReader(r.Body, MaxEmptyBody+1))
	r.Body = io.NopCloser(bytes.NewReader(b))
	return len(b) > MaxEmptyBody
}

// longRequest bounds the upload of a large body or the stream of an export.
const longRequest = 30 * time.Minute

// LimitRequest bounds every request: its body is cut at maxRequestBytes and
// its context ends after timeout, except as the routes' rows say otherwise
// (MaxBody for an upload, Streams for an answer streamed without a timeout).
func LimitRequest(timeout time.Duration, routes ...Route) gin.HandlerFunc {
	if timeout == 0 {
		timeout = DefaultRequestTimeout
	}
	special := map[string]Route{}
	for _, rt := range routes {
		if rt.MaxBody > 0 || rt.Streams || rt.TakesNoBody() {
			special[rt.Method+" "+rt.Path] = rt
		}
	}
	return func(c *gin.Context) {
		limit, timeout := int64(maxRequestBytes), timeout
		if rt, ok := special[c.Request.Method+" "+c.FullPath()]; ok {
			if rt.TakesNoBody() && emptyBodyTooLarge(c.Request) {
				RespondError(c, ErrBodyNotTaken)
				return
			}
			// The server's read and write deadlines are set for small
			// requests; an upload or a stream of millions of rows gets
			// longer (a server that cannot move them ignores this).
			rc := http.NewResponseController(c.Writer)
			if rt.MaxBody > 0 {
				limit = rt.MaxBody + 1
				_ = rc.SetReadDeadline(time.Now().Add(longRequest))
			}
			if rt.Streams {
				timeout = -1
				_ = rc.SetWriteDeadline(time.Now().Add(longRequest))
			}
		}
		if c.Request.Body != nil && c.Request.Body != http.NoBody {
			c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, limit)
		}
		if timeout > 0 {
			ctx, cancel := context.WithTimeout(c.Request.Context(), timeout)
			defer cancel()
			c.Request = c.Request.WithContext(ctx)
		}
		c.Next()
	}
}

// TrustProxies makes c.ClientIP() believe X-Forwarded-For only from the given
// proxies. Gin trusts every peer by default, which would let any client pick
// the address its claims are counted under.
func TrustProxies(r *gin.Engine, proxies []string, log *slog.Logger) {
	if err := r.SetTrustedProxies(proxies); err != nil {
		log.Error("trusted proxies refused; trusting none", "err", err)
		_ = r.SetTrustedProxies(nil)
	}
}
