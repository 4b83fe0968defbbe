package main

import (
	couponclient "github.com/couponsvc/couponsvc/client"

	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync/atomic"
	"time"
)

// webhookScenarios are run again, with a webhook endpoint registered, under
// -webhook: the outbox's cost is the ratio of the two runs.
var webhookScenarios = []string{"claim", "redeem"}

// webhookReceiver is the endpoint couponbench registers under -webhook: it
// answers 204 to every delivery and counts them. The service must run with
// COUPON_WEBHOOK_ALLOW_PRIVATE=1 to send to it (a loopback address).
type webhookReceiver struct {
	srv  *http.Server
	url  string
	got  atomic.Int64
	done chan struct{}
}

func startWebhookReceiver() (*webhookReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &webhookReceiver{url: "http://" + ln.Addr().String() + "/couponbench", done: make(chan struct{})}
	r.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		r.got.Add(1)
		w.WriteHeader(http.StatusNoContent)
	})}
	go func() { _ = r.srv.Serve(ln); close(r.done) }()
	return r, nil
}

func (r *webhookReceiver) close() {
	_ = r.srv.Close()
	<-r.done
}

// runWithWebhook registers a receiver, runs the claim and redeem scenarios
// of list again under another run id (fresh users and keys), and removes the
// endpoint. The summaries are named "<scenario>+webhook".
func (e *env) runWithWebhook(ctx context.Context, list []string, timeout time.Duration, stdout io.Writer) []*Summary {
	var out []*Summary
	names := slices.DeleteFunc(slices.Clone(webhookScenarios), func(n string) bool { return !slices.Contains(list, n) })
	if len(names) == 0 {
		return nil
	}
	fail := func(err error) []*Summary {
		for _, n := range names {
			out = append(out, &Summary{Name: n + "+webhook", Concurrency: e.conc, Error: err.Error()})
		}
		return out
	}
	rcv, err := startWebhookReceiver()
	if err != nil {
		return fail(err)
	}
	defer rcv.close()
	desc := "couponbench " + e.runID
	a, created := call(ctx, func(ctx context.Context) (*couponclient.WebhookCreatedAnswer, error) {
		return e.c.admin.CreateWebhook(ctx, couponclient.CreateWebhookRequest{URL: rcv.url, Description: &desc})
	}, func(w *couponclient.WebhookCreatedAnswer) string { return w.Result })
	if err := mustOK("register the webhook receiver (the service needs COUPON_WEBHOOK_ALLOW_PRIVATE=1)", a, 201); err != nil {
		return fail(err)
	}
	if created.Endpoint.ID == 0 {
		return fail(fmt.Errorf("register the webhook receiver: no endpoint id in the answer"))
	}
	defer e.c.admin.DeleteWebhook(context.WithoutCancel(ctx), created.Endpoint.ID)
	runID := e.runID
	e.runID = runID + "wh"
	defer func() { e.runID = runID }()
	for _, name := range names {
		sctx, cancel := context.WithTimeout(ctx, timeout)
		var s *Summary
		if name == "claim" {
			s = e.runClaim(sctx)
		} else {
			s = e.runRedeem(sctx)
		}
		cancel()
		s.Name = name + "+webhook"
		out = append(out, s)
		printSummary(stdout, s)
	}
	// The deliveries trail the load; say how far they got.
	before := rcv.got.Load()
	time.Sleep(2 * time.Second)
	fmt.Fprintf(stdout, "webhook receiver: %d deliveries (%d in the 2 s after the load)\n", rcv.got.Load(), rcv.got.Load()-before)
	return out
}

// webhookRatios are the outbox's cost: a scenario with a webhook endpoint
// registered over the same scenario without, in one run. The claim's must
// stay at 0.85 or more (the outbox costs at most 15% of claim throughput).
func (r *Report) webhookRatios() {
	if c, w := r.find("claim"), r.find("claim+webhook"); c != nil && w != nil && c.OKPerSecond > 0 {
		r.Ratios = append(r.Ratios, newRatio("claim+webhook/claim (claims/s)", w.OKPerSecond/c.OKPerSecond, 0.85, false,
			fmt.Sprintf("%.0f/s vs %.0f/s", w.OKPerSecond, c.OKPerSecond)))
	}
	if d, w := r.find("redeem"), r.find("redeem+webhook"); d != nil && w != nil && d.OKPerSecond > 0 {
		r.Ratios = append(r.Ratios, newRatio("redeem+webhook/redeem (redemptions/s)", w.OKPerSecond/d.OKPerSecond, 0, false,
			fmt.Sprintf("%.0f/s vs %.0f/s", w.OKPerSecond, d.OKPerSecond)))
	}
}
