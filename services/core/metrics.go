package core

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are couponsvc's Prometheus metrics, in a registry of their own so
// that several services in one process (tests) do not collide.
type Metrics struct {
	Registry *prometheus.Registry

	// Requests counts HTTP requests by route, method, status and result word.
	Requests *prometheus.CounterVec
	// RequestSeconds is the latency of HTTP requests by route.
	RequestSeconds *prometheus.HistogramVec
	// ScriptSeconds is the latency of the Redis scripts by script.
	ScriptSeconds *prometheus.HistogramVec
	// DBSeconds is the latency of the database steps of the flows by step.
	DBSeconds *prometheus.HistogramVec
	// LockWaitSeconds is how long redemptions and refunds waited for a coupon's lock.
	LockWaitSeconds prometheus.Histogram
	// Claims counts claims by result word.
	Claims *prometheus.CounterVec
	// CouponBatchRows is how many coupon rows each multi-row insert wrote.
	CouponBatchRows prometheus.Histogram
	// ReservationsPending is the number of reservations this instance holds
	// between the script and the confirmation.
	ReservationsPending prometheus.Gauge
	// SweeperActions counts reservations the sweeper settled, by action.
	SweeperActions *prometheus.CounterVec
	// ReconcileActions counts reconciliation findings and repairs, by action.
	ReconcileActions *prometheus.CounterVec
	// Refused counts requests refused before any work, by reason
	// ("rate_limited_user", "rate_limited_addr", "rate_limited_token",
	// "rate_limited_validate_caller", "rate_limited_validate_user", "shed").
	Refused *prometheus.CounterVec
	// SoldOutFromMemory counts claims answered sold_out from this instance's
	// memory of a sell-out, without Redis (docs/soldout.md).
	SoldOutFromMemory prometheus.Counter
}

// NewMetrics registers couponsvc's metrics and the Go runtime's.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	fast := []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}
	m := &Metrics{
		Registry: reg,
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "couponsvc_http_requests_total", Help: "HTTP requests by route, method, status and result.",
		}, []string{"route", "method", "status", "result"}),
		RequestSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "couponsvc_http_request_duration_seconds", Help: "HTTP request latency by route.", Buckets: fast,
		}, []string{"route"}),
		ScriptSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "couponsvc_redis_script_duration_seconds", Help: "Redis Lua script latency by script.", Buckets: fast,
		}, []string{"script"}),
		DBSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "couponsvc_db_duration_seconds", Help: "Database step latency by step.", Buckets: fast,
		}, []string{"step"}),
		LockWaitSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "couponsvc_lock_wait_seconds", Help: "Time spent obtaining a coupon's lock.", Buckets: fast,
		}),
		Claims: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "couponsvc_claims_total", Help: "Claims by result.",
		}, []string{"result"}),
		CouponBatchRows: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "couponsvc_coupon_batch_rows", Help: "Coupon rows written per insert.",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 100},
		}),
		ReservationsPending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "couponsvc_reservations_pending", Help: "Reservations between the claim script and their confirmation on this instance.",
		}),
		SweeperActions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "couponsvc_sweeper_actions_total", Help: "Stale reservations settled by the sweeper, by action.",
		}, []string{"action"}),
		ReconcileActions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "couponsvc_reconcile_actions_total", Help: "Reconciliation findings and repairs, by action.",
		}, []string{"action"}),
		Refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "couponsvc_refused_total", Help: "Requests refused before any work (rate limits, load shedding), by reason.",
		}, []string{"reason"}),
		SoldOutFromMemory: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "couponsvc_claims_sold_out_from_memory_total",
			Help: "Claims answered sold_out from this instance's memory of the sell-out, without Redis.",
		}),
	}
	reg.MustRegister(m.SoldOutFromMemory, m.Requests, m.RequestSeconds, m.ScriptSeconds, m.DBSeconds, m.LockWaitSeconds,
		m.Claims, m.CouponBatchRows, m.ReservationsPending, m.SweeperActions, m.ReconcileActions, m.Refused,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Trace records the steps of one request, for the slow-call log. A request
// carries one in its context; services add steps and facts to it.
type Trace struct {
	mu    sync.Mutex
	steps []traceStep
	attrs []any
}

type traceStep struct {
	name string
	d    time.Duration
}

type traceKey struct{}

// WithTrace returns a context carrying a new Trace.
func WithTrace(ctx context.Context) (context.Context, *Trace) {
	t := &Trace{}
	return context.WithValue(ctx, traceKey{}, t), t
}

func traceFrom(ctx context.Context) *Trace {
	t, _ := ctx.Value(traceKey{}).(*Trace)
	return t
}

// Steps renders the steps as "lua=1.2ms insert=3.4ms".
func (t *Trace) Steps() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b strings.Builder
	for i, s := range t.steps {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s.name + "=" + s.d.Round(10*time.Microsecond).String())
	}
	return b.String()
}

// Attrs returns the facts services noted (template, user...), as slog pairs.
func (t *Trace) Attrs() []any {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]any(nil), t.attrs...)
}

// Note adds facts about the request to its trace, if it has one.
func Note(ctx context.Context, kv ...any) {
	if t := traceFrom(ctx); t != nil {
		t.mu.Lock()
		t.attrs = append(t.attrs, kv...)
		t.mu.Unlock()
	}
}

// Observe records a step: in the histogram and in the request's trace.
func Observe(ctx context.Context, h prometheus.Observer, step string, start time.Time) {
	d := time.Since(start)
	h.Observe(d.Seconds())
	if t := traceFrom(ctx); t != nil {
		t.mu.Lock()
		t.steps = append(t.steps, traceStep{step, d})
		t.mu.Unlock()
	}
}
