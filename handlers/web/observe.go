package web

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strconv"
	"time"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/gin-gonic/gin"
)

// resultKey is the gin context key of the answer's result word.
const ResultKey = "couponsvc.result"

// StatusClientClosed is the status the log and the metrics give a request
// whose caller hung up before its answer (nginx's 499): no answer reached
// anyone, and it is no fault of the service.
const StatusClientClosed = 499

// hungUpKey is the gin context key set when the caller hung up
// (RespondError).
const hungUpKey = "couponsvc.hung_up"

// loggedStatus is the request's status for the log and the metrics:
// StatusClientClosed when the caller hung up, else the answer's.
func loggedStatus(c *gin.Context) int {
	if c.GetBool(hungUpKey) {
		return StatusClientClosed
	}
	return c.Writer.Status()
}

// slowCall is the latency over which a request is logged with its steps.
const slowCall = 100 * time.Millisecond

// Metered is what Observe needs of the services: their metrics
// (core.Core.Metrics).
type Metered interface {
	Metrics() *core.Metrics
}

// Observe gives each request an id (X-Request-ID) and a trace, counts
// it by route and result, times it, and logs it with the time of each step
// when it is slow.
func Observe(svc Metered, log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) { observe(svc, log, c) }
}

func observe(svc Metered, log *slog.Logger, c *gin.Context) {
	start := time.Now()
	// The header's canonical spelling, as net/http keeps it: a key to
	// canonicalise would cost an allocation per request, read and written.
	const requestIDKey = "X-Request-Id"
	id := c.Request.Header.Get(requestIDKey)
	if id == "" || len(id) > 64 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		id = hex.EncodeToString(b[:])
	}
	c.Writer.Header()[requestIDKey] = []string{id}
	ctx, trace := core.WithTrace(c.Request.Context())
	c.Request = c.Request.WithContext(ctx)

	c.Next()

	elapsed := time.Since(start)
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	result := c.GetString(ResultKey)
	m := svc.Metrics()
	m.Requests.WithLabelValues(route, MethodLabel(c.Request.Method), strconv.Itoa(loggedStatus(c)), result).Inc()
	m.RequestSeconds.WithLabelValues(route).Observe(elapsed.Seconds())
	if elapsed > slowCall {
		attrs := append([]any{"request_id", id, "method", c.Request.Method, "route", route,
			"status", loggedStatus(c), "result", result, "ms", elapsed.Milliseconds(), "steps", trace.Steps()},
			trace.Attrs()...)
		log.Warn("slow call", attrs...)
	}
}

// MethodLabel is the method as a metric label. Clients choose the method, so
// only the methods the service knows keep their name; every other one is
// "other", or a client could grow /metrics and memory without end.
func MethodLabel(method string) string {
	switch method {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS":
		return method
	}
	return "other"
}
