package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	couponclient "github.com/couponsvc/couponsvc/client"
)

// apiCoupon is a coupon as the API lists it.
type apiCoupon = couponclient.CouponView

// reconcileRow is one template of a reconcile report (see docs/flows.md).
type reconcileRow = couponclient.TemplateDrift

// apiResp is the part of an answer the scenarios read.
type apiResp struct {
	Result string
	// Coupon is the coupon a claim answered, nil for other answers.
	Coupon *apiCoupon
}

// answer is one call to the service as couponbench saw it: the HTTP status
// and result word of the answer, or the transport or decoding failure.
type answer struct {
	status int
	body   apiResp
	// message is the error answer's text, for messages.
	message string
	// checkout is the typed answer of a validate, hold or confirm.
	checkout *couponclient.CheckoutAnswer
	d        time.Duration
	err      error // transport or decoding failure
}

// kind is the result word of the answer as the load tables count it: the
// `result` word, or "error" when the exchange failed, or "http_<status>" when
// the body carried no result word.
func (a *answer) kind() string {
	switch {
	case a.err != nil:
		return "error"
	case a.body.Result == "":
		return fmt.Sprintf("http_%d", a.status)
	default:
		return a.body.Result
	}
}

// brief describes an unexpected answer for a message.
func (a *answer) brief() string {
	if a.err != nil {
		return a.err.Error()
	}
	msg := strings.TrimSpace(a.message)
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	return fmt.Sprintf("HTTP %d %s %s", a.status, a.body.Result, msg)
}

// statusOf is the HTTP status of each result word (docs/result-codes.md);
// words with several statuses list them all.
var statusOf = map[string][]int{
	"claimed": {201}, "redeemed": {200}, "refunded": {200}, "ok": {200, 201},
	"duplicate": {200}, "sold_out": {409}, "invalid_request": {400, 415},
	"user_limit_reached": {409}, "budget_exhausted": {409}, "not_claimable": {409},
	"already_used": {409}, "not_valid_now": {409}, "below_minimum": {422},
	"not_found": {404}, "busy": {429}, "idempotency_mismatch": {422},
	"not_redeemed": {409}, "held": {201}, "released": {200}, "unauthorized": {401}, "forbidden": {403},
	"unavailable": {503}, "rate_limited": {429}, "revoked": {409}, "in_progress": {409},
}

// consistent reports whether the HTTP status is the one docs/result-codes.md
// gives the result word.
func (a *answer) consistent() bool {
	if a.err != nil {
		return false
	}
	want, ok := statusOf[a.body.Result]
	if !ok {
		return false
	}
	for _, s := range want {
		if s == a.status {
			return true
		}
	}
	return false
}

// exchange is where statusTransport writes the HTTP status of the call
// whose context carries it.
type exchange struct{ status int }

type exchangeKey struct{}

// statusTransport records each answer's HTTP status in the exchange of its
// request's context: the Go client returns a success answer's payload only,
// and couponbench checks that the status matches the result word.
type statusTransport struct{ next http.RoundTripper }

func (t statusTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if x, ok := r.Context().Value(exchangeKey{}).(*exchange); ok && resp != nil {
		x.status = resp.StatusCode
	}
	return resp, err
}

// client calls a running couponsvc through the Go client (client/), over
// keep-alive connections, with retries off: couponbench counts every answer
// as it came.
type client struct {
	hc         *http.Client
	base       string
	adminToken string
	admin      *couponclient.Client
	app        *couponclient.Client
}

// newClient builds the one HTTP client of a run, with enough idle connections
// per host that every worker keeps its own connection alive.
func newClient(base, adminToken string, conc int) *client {
	tr := &http.Transport{
		Proxy:               nil, // loopback only: never through a proxy
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        2 * conc,
		MaxIdleConnsPerHost: 2 * conc,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
	c := &client{hc: &http.Client{Transport: statusTransport{next: tr}, Timeout: 30 * time.Second}, base: base, adminToken: adminToken}
	c.admin = c.with(c.hc, adminToken)
	return c
}

// with returns a Go client of the service calling through hc with token.
// The base URL was checked by parseFlags, so New cannot refuse it.
func (c *client) with(hc *http.Client, token string) *couponclient.Client {
	gc, err := couponclient.New(c.base, token, couponclient.WithHTTPClient(hc), couponclient.WithRetries(0))
	if err != nil {
		panic(err)
	}
	return gc
}

// close drops the idle connections.
func (c *client) close() { c.hc.CloseIdleConnections() }

// call runs one call of the Go client and returns what came back: the result
// word and status of a success (the payload's `result`, the status the
// transport saw) or of a *Error, or the failure. The duration covers the
// call, the decoding of the answer included.
func call[T any](ctx context.Context, op func(context.Context) (*T, error), result func(*T) string) (answer, *T) {
	x := &exchange{}
	ctx = context.WithValue(ctx, exchangeKey{}, x)
	start := time.Now()
	out, err := op(ctx)
	a := answer{status: x.status, d: time.Since(start)}
	var apiErr *couponclient.Error
	switch {
	case errors.As(err, &apiErr):
		a.status, a.message = apiErr.Status, apiErr.Message
		a.body.Result = apiErr.Result
		if strings.HasPrefix(apiErr.Result, "http_") {
			// No result word in the body: kind() names the status.
			a.body.Result = ""
		}
	case err != nil:
		a.err = err
	default:
		a.body.Result = result(out)
		return a, out
	}
	return a, nil
}

// mustOK returns an error unless the answer has one of the given statuses.
func mustOK(what string, a answer, statuses ...int) error {
	if a.err == nil && slices.Contains(statuses, a.status) {
		return nil
	}
	return fmt.Errorf("%s: %s", what, a.brief())
}

// setupApp creates the app token the load runs with.
func (c *client) setupApp(ctx context.Context, runID string) error {
	a, out := call(ctx, func(ctx context.Context) (*couponclient.TokenCreatedAnswer, error) {
		return c.admin.CreateToken(ctx, couponclient.CreateTokenRequest{Role: couponclient.TokenRoleApp, Name: "couponbench-" + runID})
	}, func(t *couponclient.TokenCreatedAnswer) string { return t.Result })
	if err := mustOK("create app token", a, 201, 200); err != nil {
		return err
	}
	if out.Token == "" {
		return fmt.Errorf("create app token: no token in the answer")
	}
	c.app = c.with(c.hc, out.Token)
	return nil
}

// templateSpec is what a scenario needs of its template.
type templateSpec struct {
	name         string
	stock        int
	limit        int
	faceValue    int
	refundPolicy string
	sharedCode   string // a shared template with this code (sharedcheckout)
	stacking     string // "combinable" or "exclusive" (the service's default)
	eligibility  string // the template's eligibility rule (validaterule)
}

// createTemplate creates a campaign without a budget and one fixed-value
// template in it, and returns the template's id.
func (c *client) createTemplate(ctx context.Context, spec templateSpec) (int64, error) {
	a, camp := call(ctx, func(ctx context.Context) (*couponclient.CampaignAnswer, error) {
		return c.admin.CreateCampaign(ctx, couponclient.CreateCampaignRequest{Name: spec.name, BudgetCents: ptr(int64(0))})
	}, func(t *couponclient.CampaignAnswer) string { return t.Result })
	if err := mustOK("create campaign", a, 201, 200); err != nil {
		return 0, err
	}
	if camp.Campaign.ID == 0 {
		return 0, fmt.Errorf("create campaign: no campaign id in the answer")
	}
	policy := couponclient.RefundPolicy(spec.refundPolicy)
	if policy == "" {
		policy = couponclient.RefundPolicyRestore
	}
	body := couponclient.CreateTemplateRequest{
		CampaignID:     camp.Campaign.ID,
		Name:           spec.name,
		Kind:           couponclient.TemplateKindFixed,
		FaceValueCents: ptr(int64(spec.faceValue)),
		MinOrderCents:  ptr(int64(0)),
		TotalStock:     int64(spec.stock),
		PerUserLimit:   int64(spec.limit),
		ValidDays:      ptr(int64(30)),
		RefundPolicy:   &policy,
	}
	if spec.sharedCode != "" {
		body.CodeMode, body.SharedCode = ptr(couponclient.CodeModeShared), &spec.sharedCode
	}
	if spec.stacking != "" {
		body.Stacking = ptr(couponclient.Stacking(spec.stacking))
	}
	if spec.eligibility != "" {
		body.Eligibility = &spec.eligibility
	}
	a, t := call(ctx, func(ctx context.Context) (*couponclient.TemplateAnswer, error) {
		return c.admin.CreateTemplate(ctx, body)
	}, func(t *couponclient.TemplateAnswer) string { return t.Result })
	if err := mustOK("create template", a, 201, 200); err != nil {
		return 0, err
	}
	if t.Template.ID == 0 {
		return 0, fmt.Errorf("create template: no template id in the answer")
	}
	return t.Template.ID, nil
}

func ptr[T any](v T) *T { return &v }

// claim claims a coupon of template tid for user with an idempotency key.
func (c *client) claim(ctx context.Context, tid int64, user, key string) answer {
	a, out := call(ctx, func(ctx context.Context) (*couponclient.ClaimAnswer, error) {
		return c.app.ClaimCoupon(ctx, tid, couponclient.ClaimRequest{UserID: &user}, couponclient.IdempotencyKey(key))
	}, func(t *couponclient.ClaimAnswer) string { return t.Result })
	if out != nil {
		a.body.Coupon = &out.Coupon
	}
	return a
}

// redeem redeems a coupon for an order.
func (c *client) redeem(ctx context.Context, code, order string, amount int) answer {
	a, _ := call(ctx, func(ctx context.Context) (*couponclient.RedeemAnswer, error) {
		return c.app.RedeemCoupon(ctx, couponclient.RedeemRequest{CouponCode: code, OrderID: order, OrderAmountCents: ptr(int64(amount))})
	}, func(t *couponclient.RedeemAnswer) string { return t.Result })
	return a
}

// refund gives a coupon back from an order.
func (c *client) refund(ctx context.Context, code, order string) answer {
	a, _ := call(ctx, func(ctx context.Context) (*couponclient.RefundAnswer, error) {
		return c.app.RefundCoupon(ctx, couponclient.RefundRequest{CouponCode: &code, OrderID: order})
	}, func(t *couponclient.RefundAnswer) string { return t.Result })
	return a
}

// partialReturn returns amount cents of an order redeemed for an amount,
// as the return returnID.
func (c *client) partialReturn(ctx context.Context, order, returnID string, amount int64) answer {
	a, _ := call(ctx, func(ctx context.Context) (*couponclient.RefundAnswer, error) {
		return c.app.RefundCoupon(ctx, couponclient.RefundRequest{OrderID: order, ReturnID: &returnID, ReturnedAmountCents: &amount})
	}, func(t *couponclient.RefundAnswer) string { return t.Result })
	return a
}

// remaining reads a template's total stock and the stock the service reports
// as remaining.
func (c *client) remaining(ctx context.Context, tid int64) (total, remaining int64, err error) {
	a, out := call(ctx, func(ctx context.Context) (*couponclient.TemplateStockAnswer, error) {
		return c.admin.GetTemplate(ctx, tid)
	}, func(t *couponclient.TemplateStockAnswer) string { return t.Result })
	if err := mustOK("get template", a, 200); err != nil {
		return 0, 0, err
	}
	if out.Remaining == nil {
		return 0, 0, fmt.Errorf("get template %d: no remaining stock in the answer", tid)
	}
	return out.Template.TotalStock, *out.Remaining, nil
}

// userCoupons lists every coupon of a user, page after page.
func (c *client) userCoupons(ctx context.Context, user string) ([]apiCoupon, error) {
	var out []apiCoupon
	for cp, err := range c.app.ListUserCouponsAll(ctx, user, couponclient.ListUserCouponsParams{}) {
		if err != nil {
			return nil, fmt.Errorf("list coupons of %s: %w", user, err)
		}
		out = append(out, cp)
	}
	return out, nil
}

// errNotAvailable marks an endpoint that answers 404: not built yet.
var errNotAvailable = fmt.Errorf("not available")

// reconcile asks for a report (no repair) on one template.
func (c *client) reconcile(ctx context.Context, tid int64) (reconcileRow, error) {
	a, out := call(ctx, func(ctx context.Context) (*couponclient.ReconcileAnswer, error) {
		return c.admin.ReconcileCounters(ctx, couponclient.ReconcileRequest{TemplateID: &tid})
	}, func(t *couponclient.ReconcileAnswer) string { return t.Result })
	if a.err == nil && (a.status == 404 || a.status == 405) {
		return reconcileRow{}, errNotAvailable
	}
	if err := mustOK("reconcile", a, 200); err != nil {
		return reconcileRow{}, err
	}
	for _, row := range out.Templates {
		if row.TemplateID == tid {
			return row, nil
		}
	}
	return reconcileRow{}, fmt.Errorf("reconcile: template %d not in the report", tid)
}

// warmUp opens conc keep-alive connections before the first scenario, so
// that no scenario pays for the handshakes.
func (c *client) warmUp(ctx context.Context, conc int) {
	drive(ctx, conc, conc, func(ctx context.Context, _, _ int) sample {
		a, _ := call(ctx, func(ctx context.Context) (*couponclient.NoPayload, error) { return c.admin.Healthz(ctx) },
			func(*couponclient.NoPayload) string { return "ok" })
		return sample{kind: a.kind(), d: a.d}
	})
}

// waitReady polls /readyz until it answers 200, for at most d.
func (c *client) waitReady(ctx context.Context, d time.Duration) error {
	deadline := time.Now().Add(d)
	var last string
	for time.Now().Before(deadline) {
		a, _ := call(ctx, func(ctx context.Context) (*couponclient.NoPayload, error) { return c.admin.Readyz(ctx) },
			func(*couponclient.NoPayload) string { return "ok" })
		if a.err == nil && a.status == 200 {
			return nil
		}
		last = a.brief()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("service not ready after %s: %s", d, last)
}

// cartLine is one line of a cart in a checkout body.
type cartLine struct {
	LineID         string
	SKU            string
	ProductID      string
	CategoryIDs    []string
	Quantity       int64
	UnitPriceCents int64
	// Discountable is left out for the default (true).
	Discountable *bool
}

// clientLines is the cart's lines as the Go client sends them.
func clientLines(lines []cartLine) []couponclient.CartLine {
	out := make([]couponclient.CartLine, len(lines))
	for i, l := range lines {
		out[i] = couponclient.CartLine{LineID: l.LineID, Sku: l.SKU, Quantity: l.Quantity, UnitPriceCents: l.UnitPriceCents,
			Discountable: l.Discountable}
		if l.ProductID != "" {
			out[i].ProductID = &l.ProductID
		}
		if len(l.CategoryIDs) > 0 {
			out[i].CategoryIds = l.CategoryIDs
		}
	}
	return out
}

// checkoutCall runs a validate, hold or confirm and keeps its typed answer.
func checkoutCall(ctx context.Context, op func(context.Context) (*couponclient.CheckoutAnswer, error)) answer {
	a, out := call(ctx, op, func(t *couponclient.CheckoutAnswer) string { return t.Result })
	a.checkout = out
	return a
}

// hold holds one coupon for an order for ttl seconds.
func (c *client) hold(ctx context.Context, order, code, user string, amount, ttl int) answer {
	return checkoutCall(ctx, func(ctx context.Context) (*couponclient.CheckoutAnswer, error) {
		return c.app.HoldCoupons(ctx, couponclient.HoldRequest{OrderID: order, OrderAmountCents: ptr(int64(amount)),
			CouponCodes: []string{code}, UserID: &user, TTLSeconds: ptr(int64(ttl))})
	})
}

// holdCart holds one coupon for an order with a cart of lines (and
// shipping) instead of an amount.
func (c *client) holdCart(ctx context.Context, order, code, user string, lines []cartLine, shippingCents int64, ttl int) answer {
	return checkoutCall(ctx, func(ctx context.Context) (*couponclient.CheckoutAnswer, error) {
		return c.app.HoldCoupons(ctx, couponclient.HoldRequest{OrderID: order, CouponCodes: []string{code}, UserID: &user,
			TTLSeconds: ptr(int64(ttl)), Lines: clientLines(lines), ShippingCents: &shippingCents})
	})
}

// confirmCart confirms an order's hold with its cart, as a client that
// sends the cart it is about to charge does.
func (c *client) confirmCart(ctx context.Context, order string, lines []cartLine, shippingCents int64) answer {
	return checkoutCall(ctx, func(ctx context.Context) (*couponclient.CheckoutAnswer, error) {
		return c.app.ConfirmHold(ctx, order, couponclient.ConfirmRequest{Lines: clientLines(lines), ShippingCents: &shippingCents})
	})
}

// validate prices a cart of lines (clientLines, made once for many
// calls) with codes for user, changing nothing.
func (c *client) validate(ctx context.Context, codes []string, user string, lines []couponclient.CartLine, shippingCents int64) answer {
	return c.validateAs(ctx, codes, user, lines, shippingCents, shopFacts{})
}

// shopFacts are what a checkout request says of its customer and channel
// (nil: nothing).
type shopFacts struct {
	customer *couponclient.CustomerFields
	channel  *couponclient.Channel
}

// validateAs is validate with the shop's facts of the customer.
func (c *client) validateAs(ctx context.Context, codes []string, user string, lines []couponclient.CartLine, shippingCents int64, f shopFacts) answer {
	return checkoutCall(ctx, func(ctx context.Context) (*couponclient.CheckoutAnswer, error) {
		return c.app.ValidateCheckout(ctx, couponclient.ValidateRequest{CouponCodes: codes, UserID: &user,
			Lines: lines, ShippingCents: &shippingCents, Customer: f.customer, Channel: f.channel})
	})
}

// settle confirms or releases an order's hold (what: "confirm" or "release").
func (c *client) settle(ctx context.Context, order, what string) answer {
	if what == "release" {
		a, _ := call(ctx, func(ctx context.Context) (*couponclient.ReleaseAnswer, error) {
			return c.app.ReleaseHold(ctx, order)
		}, func(t *couponclient.ReleaseAnswer) string { return t.Result })
		return a
	}
	return checkoutCall(ctx, func(ctx context.Context) (*couponclient.CheckoutAnswer, error) {
		return c.app.ConfirmHold(ctx, order, couponclient.ConfirmRequest{})
	})
}
