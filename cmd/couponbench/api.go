package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// apiCoupon is the part of a coupon that couponbench reads.
type apiCoupon struct {
	ID         int64   `json:"id"`
	Code       string  `json:"code"`
	TemplateID int64   `json:"template_id"`
	UserID     string  `json:"user_id"`
	Status     string  `json:"status"`
	OrderID    *string `json:"order_id"`
}

// apiTemplate is the part of a template that couponbench reads.
type apiTemplate struct {
	ID           int64 `json:"id"`
	CampaignID   int64 `json:"campaign_id"`
	TotalStock   int64 `json:"total_stock"`
	PerUserLimit int64 `json:"per_user_limit"`
}

// reconcileRow is one template of a reconcile report (see docs/flows.md).
type reconcileRow struct {
	TemplateID     int64           `json:"template_id"`
	TotalStock     int64           `json:"total_stock"`
	RedisRemaining int64           `json:"redis_remaining"`
	DBLive         int64           `json:"db_live"`
	Drift          int64           `json:"drift"`
	UsersDrifted   json.RawMessage `json:"users_drifted"`
	Repaired       json.RawMessage `json:"repaired"`
}

// usersDrifted reads users_drifted as a count, whether the service sends a
// number or a list of users.
func (r reconcileRow) usersDrifted() int64 {
	raw := bytes.TrimSpace(r.UsersDrifted)
	if len(raw) == 0 || string(raw) == "null" {
		return 0
	}
	var n int64
	if json.Unmarshal(raw, &n) == nil {
		return n
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		return int64(len(list))
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil {
		return int64(len(m))
	}
	return -1
}

// apiResp is every answer body: the result fields (docs/result-codes.md) and
// whichever payload the endpoint adds.
type apiResp struct {
	Code      *int                `json:"code"`
	Result    string              `json:"result"`
	Error     string              `json:"error"`
	Campaign  *struct{ ID int64 } `json:"campaign"`
	Template  *apiTemplate        `json:"template"`
	Remaining *int64              `json:"remaining"`
	Coupon    *apiCoupon          `json:"coupon"`
	Coupons   []apiCoupon         `json:"coupons"`
	Token     string              `json:"token"`
	Templates []reconcileRow      `json:"templates"`
}

// answer is one HTTP exchange as couponbench saw it.
type answer struct {
	status int
	body   apiResp
	raw    []byte
	d      time.Duration
	err    error // transport or decoding failure
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
	raw := strings.TrimSpace(string(a.raw))
	if len(raw) > 300 {
		raw = raw[:300] + "..."
	}
	return fmt.Sprintf("HTTP %d %s", a.status, raw)
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

// client talks to a running couponsvc over keep-alive connections.
type client struct {
	base  string
	hc    *http.Client
	admin string
	app   string
}

// newClient builds the one HTTP client of a run, with enough idle connections
// per host that every worker keeps its own connection alive.
func newClient(base, admin string, conc int) *client {
	tr := &http.Transport{
		Proxy:               nil, // loopback only: never through a proxy
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        2 * conc,
		MaxIdleConnsPerHost: 2 * conc,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
	return &client{
		base:  strings.TrimRight(base, "/"),
		hc:    &http.Client{Transport: tr, Timeout: 30 * time.Second},
		admin: admin,
	}
}

// close drops the idle connections.
func (c *client) close() { c.hc.CloseIdleConnections() }

// do sends one request with a JSON body (nil for none) and reads the whole
// answer so that the connection goes back to the pool. The duration covers the
// exchange only.
func (c *client) do(ctx context.Context, method, path, token string, body any, idemKey string) answer {
	var rd io.Reader
	if body != nil {
		buf, err := json.Marshal(body)
		if err != nil {
			return answer{err: err}
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return answer{err: err}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	start := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		return answer{err: err, d: time.Since(start)}
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	resp.Body.Close()
	a := answer{status: resp.StatusCode, raw: raw, d: time.Since(start)}
	if err != nil {
		a.err = err
		return a
	}
	if len(bytes.TrimSpace(raw)) > 0 && json.Unmarshal(raw, &a.body) != nil && resp.StatusCode < 300 {
		a.err = fmt.Errorf("HTTP %d: body is not JSON: %.200s", resp.StatusCode, raw)
	}
	return a
}

// mustOK returns an error unless the answer has one of the given statuses.
func mustOK(what string, a answer, statuses ...int) error {
	if a.err == nil {
		for _, s := range statuses {
			if a.status == s {
				return nil
			}
		}
	}
	return fmt.Errorf("%s: %s", what, a.brief())
}

// setupApp creates the app token the load runs with.
func (c *client) setupApp(ctx context.Context, runID string) error {
	a := c.do(ctx, "POST", "/api/v1/tokens", c.admin, map[string]any{"role": "app", "name": "couponbench-" + runID}, "")
	if err := mustOK("create app token", a, 201, 200); err != nil {
		return err
	}
	if a.body.Token == "" {
		return fmt.Errorf("create app token: no token in %s", a.brief())
	}
	c.app = a.body.Token
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
}

// createTemplate creates a campaign without a budget and one fixed-value
// template in it, and returns the template's id.
func (c *client) createTemplate(ctx context.Context, spec templateSpec) (int64, error) {
	a := c.do(ctx, "POST", "/api/v1/campaigns", c.admin, map[string]any{"name": spec.name, "budget_cents": 0}, "")
	if err := mustOK("create campaign", a, 201, 200); err != nil {
		return 0, err
	}
	if a.body.Campaign == nil || a.body.Campaign.ID == 0 {
		return 0, fmt.Errorf("create campaign: no campaign id in %s", a.brief())
	}
	policy := spec.refundPolicy
	if policy == "" {
		policy = "restore"
	}
	body := map[string]any{
		"campaign_id":      a.body.Campaign.ID,
		"name":             spec.name,
		"kind":             "fixed",
		"face_value_cents": spec.faceValue,
		"min_order_cents":  0,
		"total_stock":      spec.stock,
		"per_user_limit":   spec.limit,
		"valid_days":       30,
		"refund_policy":    policy,
	}
	if spec.sharedCode != "" {
		body["code_mode"], body["shared_code"] = "shared", spec.sharedCode
	}
	a = c.do(ctx, "POST", "/api/v1/templates", c.admin, body, "")
	if err := mustOK("create template", a, 201, 200); err != nil {
		return 0, err
	}
	if a.body.Template == nil || a.body.Template.ID == 0 {
		return 0, fmt.Errorf("create template: no template id in %s", a.brief())
	}
	return a.body.Template.ID, nil
}

// claim claims a coupon of template tid for user with an idempotency key.
func (c *client) claim(ctx context.Context, tid int64, user, key string) answer {
	return c.do(ctx, "POST", fmt.Sprintf("/api/v1/templates/%d/claim", tid), c.app, map[string]string{"user_id": user}, key)
}

// redeem redeems a coupon for an order.
func (c *client) redeem(ctx context.Context, code, order string, amount int) answer {
	return c.do(ctx, "POST", "/api/v1/redemptions", c.app, map[string]any{
		"coupon_code": code, "order_id": order, "order_amount_cents": amount,
	}, "")
}

// refund gives a coupon back from an order.
func (c *client) refund(ctx context.Context, code, order string) answer {
	return c.do(ctx, "POST", "/api/v1/refunds", c.app, map[string]any{"coupon_code": code, "order_id": order}, "")
}

// remaining reads a template's total stock and the stock the service reports
// as remaining.
func (c *client) remaining(ctx context.Context, tid int64) (total, remaining int64, err error) {
	a := c.do(ctx, "GET", fmt.Sprintf("/api/v1/templates/%d", tid), c.admin, nil, "")
	if err := mustOK("get template", a, 200); err != nil {
		return 0, 0, err
	}
	if a.body.Template == nil || a.body.Remaining == nil {
		return 0, 0, fmt.Errorf("get template: no template or remaining in %s", a.brief())
	}
	return a.body.Template.TotalStock, *a.body.Remaining, nil
}

// userCoupons lists the coupons of a user.
func (c *client) userCoupons(ctx context.Context, user string) ([]apiCoupon, error) {
	a := c.do(ctx, "GET", "/api/v1/users/"+user+"/coupons", c.app, nil, "")
	if err := mustOK("list coupons of "+user, a, 200); err != nil {
		return nil, err
	}
	return a.body.Coupons, nil
}

// errNotAvailable marks an endpoint that answers 404: not built yet.
var errNotAvailable = fmt.Errorf("not available")

// reconcile asks for a report (no repair) on one template.
func (c *client) reconcile(ctx context.Context, tid int64) (reconcileRow, error) {
	a := c.do(ctx, "POST", "/api/v1/reconcile", c.admin, map[string]any{"template_id": tid, "repair": false}, "")
	if a.err == nil && (a.status == 404 || a.status == 405) {
		return reconcileRow{}, errNotAvailable
	}
	if err := mustOK("reconcile", a, 200); err != nil {
		return reconcileRow{}, err
	}
	for _, row := range a.body.Templates {
		if row.TemplateID == tid {
			return row, nil
		}
	}
	return reconcileRow{}, fmt.Errorf("reconcile: template %d not in %s", tid, a.brief())
}

// warmUp opens conc keep-alive connections before the first scenario, so
// that no scenario pays for the handshakes.
func (c *client) warmUp(ctx context.Context, conc int) {
	drive(ctx, conc, conc, func(ctx context.Context, _, _ int) sample {
		a := c.do(ctx, "GET", "/healthz", "", nil, "")
		return sample{kind: a.kind(), d: a.d}
	})
}

// waitReady polls /readyz until it answers 200, for at most d.
func (c *client) waitReady(ctx context.Context, d time.Duration) error {
	deadline := time.Now().Add(d)
	var last string
	for time.Now().Before(deadline) {
		a := c.do(ctx, "GET", "/readyz", "", nil, "")
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

// hold holds one coupon for an order for ttl seconds.
func (c *client) hold(ctx context.Context, order, code, user string, amount, ttl int) answer {
	return checkoutAnswer(c.do(ctx, "POST", "/api/v1/holds", c.app, map[string]any{
		"order_id": order, "order_amount_cents": amount, "coupon_codes": []string{code}, "user_id": user, "ttl_seconds": ttl,
	}, ""))
}

// cartLine is one line of a cart in a checkout body.
type cartLine struct {
	LineID         string   `json:"line_id"`
	SKU            string   `json:"sku"`
	ProductID      string   `json:"product_id,omitempty"`
	CategoryIDs    []string `json:"category_ids,omitempty"`
	Quantity       int64    `json:"quantity"`
	UnitPriceCents int64    `json:"unit_price_cents"`
	// Discountable is left out for the default (true).
	Discountable *bool `json:"discountable,omitempty"`
}

// holdCart holds one coupon for an order with a cart of lines (and
// shipping) instead of an amount.
func (c *client) holdCart(ctx context.Context, order, code, user string, lines []cartLine, shippingCents int64, ttl int) answer {
	return checkoutAnswer(c.do(ctx, "POST", "/api/v1/holds", c.app, map[string]any{
		"order_id": order, "coupon_codes": []string{code}, "user_id": user, "ttl_seconds": ttl,
		"lines": lines, "shipping_cents": shippingCents,
	}, ""))
}

// confirmCart confirms an order's hold with its cart, as a client that
// sends the cart it is about to charge does.
func (c *client) confirmCart(ctx context.Context, order string, lines []cartLine, shippingCents int64) answer {
	return checkoutAnswer(c.do(ctx, "POST", "/api/v1/holds/"+url.PathEscape(order)+"/confirm", c.app, map[string]any{
		"lines": lines, "shipping_cents": shippingCents,
	}, ""))
}

// settle confirms or releases an order's hold (what: "confirm" or "release").
func (c *client) settle(ctx context.Context, order, what string) answer {
	return checkoutAnswer(c.do(ctx, "POST", "/api/v1/holds/"+url.PathEscape(order)+"/"+what, c.app, nil, ""))
}

// checkoutAnswer reads the result fields of a checkout answer only: its
// coupons list carries per-coupon results, not coupons.
func checkoutAnswer(a answer) answer {
	if len(bytes.TrimSpace(a.raw)) == 0 || (a.err != nil && a.status == 0) {
		return a
	}
	var b struct {
		Code   *int   `json:"code"`
		Result string `json:"result"`
		Error  string `json:"error"`
	}
	if err := json.Unmarshal(a.raw, &b); err != nil {
		if a.status < 300 {
			a.err = fmt.Errorf("HTTP %d: body is not JSON: %.200s", a.status, a.raw)
		}
		return a
	}
	a.err, a.body = nil, apiResp{Code: b.Code, Result: b.Result, Error: b.Error}
	return a
}
