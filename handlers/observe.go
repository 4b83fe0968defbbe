package handlers

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"time"

	"couponsvc/services"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// resultKey is the gin context key of the answer's result word.
const resultKey = "couponsvc.result"

// slowCall is the latency over which a request is logged with its steps.
const slowCall = 100 * time.Millisecond

// observeRequest gives each request an id (X-Request-ID) and a trace, counts
// it by route and result, times it, and logs it with the time of each step
// when it is slow.
func (s *Server) observeRequest(c *gin.Context) {
	start := time.Now()
	id := c.GetHeader("X-Request-ID")
	if id == "" || len(id) > 64 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		id = hex.EncodeToString(b[:])
	}
	c.Header("X-Request-ID", id)
	ctx, trace := services.WithTrace(c.Request.Context())
	c.Request = c.Request.WithContext(ctx)

	c.Next()

	elapsed := time.Since(start)
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	result := c.GetString(resultKey)
	m := s.svc.Metrics()
	m.Requests.WithLabelValues(route, methodLabel(c.Request.Method), strconv.Itoa(c.Writer.Status()), result).Inc()
	m.RequestSeconds.WithLabelValues(route).Observe(elapsed.Seconds())
	if elapsed > slowCall {
		attrs := append([]any{"request_id", id, "method", c.Request.Method, "route", route,
			"status", c.Writer.Status(), "result", result, "ms", elapsed.Milliseconds(), "steps", trace.Steps()},
			trace.Attrs()...)
		s.log.Warn("slow call", attrs...)
	}
}

// methodLabel is the method as a metric label. Clients choose the method, so
// only the methods the service knows keep their name; every other one is
// "other", or a client could grow /metrics and memory without end.
func methodLabel(method string) string {
	switch method {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS":
		return method
	}
	return "other"
}

// metricsHandler serves the Prometheus text format.
func (s *Server) metricsHandler() gin.HandlerFunc {
	h := promhttp.HandlerFor(s.svc.Metrics().Registry, promhttp.HandlerOpts{})
	return gin.WrapH(h)
}
