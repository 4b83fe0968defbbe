package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// fakeService is an in-memory couponsvc with the JSON API, just enough
// for couponbench's scenarios, with faults to inject: a run against a faulty
// service must fail.
type fakeService struct {
	mu        sync.Mutex
	oversell  bool // hands out one coupon more than the stock
	double    bool // a conflicting order redeems a used coupon
	reconcile bool // POST /api/v1/reconcile exists
	otherCart bool // takes every confirm with a cart for another cart
	// soldOutRedis, when set, is sent one EXISTS per sold_out answer (a
	// service that asks Redis before refusing).
	soldOutRedis *redis.Client
	drift        int64

	nextID    int64
	templates map[int64]*fakeTemplate
	coupons   map[string]*fakeCoupon
	byUser    map[string][]*fakeCoupon
	// held is the coupon each order holds, carts the cart it was held
	// with (its lines and shipping, "" for an amount).
	held  map[string]*fakeCoupon
	carts map[string]string
}

type fakeTemplate struct {
	id, stock, remaining, limit int64
	idem                        map[string]*fakeCoupon
	held                        map[string]int64
}

type fakeCoupon struct {
	id         int64
	code, user string
	tid        int64
	status     string
	order      string
}

func newFakeService() *fakeService {
	return &fakeService{templates: map[int64]*fakeTemplate{}, coupons: map[string]*fakeCoupon{}, byUser: map[string][]*fakeCoupon{}, reconcile: true,
		held: map[string]*fakeCoupon{}, carts: map[string]string{}}
}

func (f *fakeService) view(c *fakeCoupon) map[string]any {
	v := map[string]any{"id": c.id, "code": c.code, "template_id": c.tid, "user_id": c.user, "status": c.status}
	if c.order != "" {
		v["order_id"] = c.order
	}
	return v
}

func reply(w http.ResponseWriter, status int, code int, result string, payload map[string]any) {
	body := map[string]any{"code": code, "result": result, "error": ""}
	for k, v := range payload {
		body[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

func (f *fakeService) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) { reply(w, 200, 0, "ok", nil) })
	mux.HandleFunc("POST /api/v1/tokens", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer admin" {
			reply(w, 401, 14, "unauthorized", nil)
			return
		}
		reply(w, 201, 0, "ok", map[string]any{"token": "app"})
	})
	mux.HandleFunc("POST /api/v1/campaigns", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.nextID++
		id := f.nextID
		f.mu.Unlock()
		reply(w, 201, 0, "ok", map[string]any{"campaign": map[string]any{"id": id}})
	})
	mux.HandleFunc("POST /api/v1/templates", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Stock int64 `json:"total_stock"`
			Limit int64 `json:"per_user_limit"`
		}
		json.NewDecoder(r.Body).Decode(&in)
		f.mu.Lock()
		f.nextID++
		t := &fakeTemplate{id: f.nextID, stock: in.Stock, remaining: in.Stock, limit: in.Limit, idem: map[string]*fakeCoupon{}, held: map[string]int64{}}
		f.templates[t.id] = t
		f.mu.Unlock()
		reply(w, 201, 0, "ok", map[string]any{"template": map[string]any{"id": t.id, "total_stock": t.stock, "per_user_limit": t.limit}})
	})
	mux.HandleFunc("GET /api/v1/templates/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
		f.mu.Lock()
		defer f.mu.Unlock()
		t := f.templates[id]
		if t == nil {
			reply(w, 404, 10, "not_found", nil)
			return
		}
		reply(w, 200, 0, "ok", map[string]any{"template": map[string]any{"id": t.id, "total_stock": t.stock}, "remaining": t.remaining})
	})
	mux.HandleFunc("POST /api/v1/templates/{id}/claim", func(w http.ResponseWriter, r *http.Request) {
		id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
		var in struct {
			UserID string `json:"user_id"`
		}
		json.NewDecoder(r.Body).Decode(&in)
		key := r.Header.Get("Idempotency-Key")
		if key == "" || in.UserID == "" || r.Header.Get("Authorization") != "Bearer app" {
			reply(w, 400, 3, "invalid_request", nil)
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		t := f.templates[id]
		if c := t.idem[key]; c != nil {
			reply(w, 200, 1, "duplicate", map[string]any{"coupon": f.view(c)})
			return
		}
		floor := int64(0)
		if f.oversell {
			floor = -1
		}
		if t.remaining <= floor {
			if f.soldOutRedis != nil {
				f.soldOutRedis.Exists(r.Context(), "couponbench-test:sold-out")
			}
			reply(w, 409, 2, "sold_out", nil)
			return
		}
		if t.held[in.UserID] >= t.limit {
			reply(w, 409, 4, "user_limit_reached", nil)
			return
		}
		t.remaining--
		t.held[in.UserID]++
		f.nextID++
		c := &fakeCoupon{id: f.nextID, code: fmt.Sprintf("C%08d", f.nextID), user: in.UserID, tid: id, status: "issued"}
		t.idem[key] = c
		f.coupons[c.code] = c
		f.byUser[c.user] = append(f.byUser[c.user], c)
		reply(w, 201, 0, "claimed", map[string]any{"coupon": f.view(c), "remaining": max(t.remaining, 0)})
	})
	mux.HandleFunc("POST /api/v1/redemptions", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Code   string `json:"coupon_code"`
			Order  string `json:"order_id"`
			Amount int64  `json:"order_amount_cents"`
		}
		json.NewDecoder(r.Body).Decode(&in)
		f.mu.Lock()
		defer f.mu.Unlock()
		c := f.coupons[in.Code]
		switch {
		case c == nil:
			reply(w, 404, 10, "not_found", nil)
		case c.status == "used" && c.order == in.Order:
			reply(w, 200, 1, "duplicate", map[string]any{"coupon": f.view(c)})
		case c.status == "used" && !f.double:
			reply(w, 409, 7, "already_used", nil)
		default:
			c.status, c.order = "used", in.Order
			reply(w, 200, 0, "redeemed", map[string]any{"coupon": f.view(c), "discount_cents": 500})
		}
	})
	mux.HandleFunc("POST /api/v1/refunds", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Code  string `json:"coupon_code"`
			Order string `json:"order_id"`
		}
		json.NewDecoder(r.Body).Decode(&in)
		f.mu.Lock()
		defer f.mu.Unlock()
		c := f.coupons[in.Code]
		if c == nil || c.status != "used" || c.order != in.Order {
			reply(w, 409, 13, "not_redeemed", nil)
			return
		}
		c.status, c.order = "issued", ""
		reply(w, 200, 0, "refunded", map[string]any{"coupon": f.view(c), "stock_returned": false})
	})
	// Holds and their confirmation, amount-only or with a cart: a confirm of
	// an order held with a cart must carry the same cart.
	mux.HandleFunc("POST /api/v1/holds", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Order    string          `json:"order_id"`
			Codes    []string        `json:"coupon_codes"`
			Amount   int64           `json:"order_amount_cents"`
			Lines    json.RawMessage `json:"lines"`
			Shipping int64           `json:"shipping_cents"`
		}
		json.NewDecoder(r.Body).Decode(&in)
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(in.Codes) != 1 || in.Order == "" || (len(in.Lines) == 0) == (in.Amount <= 0) {
			reply(w, 400, 3, "invalid_request", nil)
			return
		}
		c := f.coupons[in.Codes[0]]
		switch {
		case c == nil:
			reply(w, 404, 10, "not_found", nil)
		case c.status != "issued":
			reply(w, 409, 7, "already_used", nil)
		default:
			c.status, c.order = "held", in.Order
			f.held[in.Order] = c
			if len(in.Lines) > 0 {
				f.carts[in.Order] = fmt.Sprintf("%s+%d", in.Lines, in.Shipping)
			}
			reply(w, 201, 0, "held", map[string]any{"coupons": []map[string]any{{"coupon_code": c.code, "result": "ok", "code": 0}}})
		}
	})
	mux.HandleFunc("POST /api/v1/holds/{order}/confirm", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Lines    json.RawMessage `json:"lines"`
			Shipping int64           `json:"shipping_cents"`
		}
		json.NewDecoder(r.Body).Decode(&in)
		cart := ""
		if len(in.Lines) > 0 {
			cart = fmt.Sprintf("%s+%d", in.Lines, in.Shipping)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		ord := r.PathValue("order")
		c := f.held[ord]
		switch {
		case c == nil:
			reply(w, 404, 10, "not_found", nil)
		case cart != f.carts[ord] || (f.otherCart && cart != ""):
			reply(w, 422, 15, "idempotency_mismatch", nil)
		default:
			c.status = "used"
			delete(f.held, ord)
			reply(w, 200, 0, "redeemed", map[string]any{"coupons": []map[string]any{{"coupon_code": c.code, "result": "ok", "code": 0}}})
		}
	})
	mux.HandleFunc("GET /api/v1/users/{user}/coupons", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		list := []map[string]any{}
		for _, c := range f.byUser[r.PathValue("user")] {
			list = append(list, f.view(c))
		}
		reply(w, 200, 0, "ok", map[string]any{"coupons": list})
	})
	mux.HandleFunc("POST /api/v1/reconcile", func(w http.ResponseWriter, r *http.Request) {
		if !f.reconcile {
			http.NotFound(w, r)
			return
		}
		var in struct {
			TemplateID int64 `json:"template_id"`
		}
		json.NewDecoder(r.Body).Decode(&in)
		f.mu.Lock()
		defer f.mu.Unlock()
		t := f.templates[in.TemplateID]
		reply(w, 200, 0, "ok", map[string]any{"templates": []map[string]any{{
			"template_id": t.id, "total_stock": t.stock, "redis_remaining": t.remaining,
			"db_live": t.stock - t.remaining, "drift": f.drift, "users_drifted": 0, "repaired": false,
		}}})
	})
	return mux
}

// runFake runs couponbench against a fake service and returns its exit code
// and output.
func runFake(t *testing.T, f *fakeService, scenario string) (int, string, Report) {
	t.Helper()
	return runFakeOn(t, f, scenario, "127.0.0.1:1")
}

// runFakeOn is runFake with couponbench reading the Redis at redisAddr.
func runFakeOn(t *testing.T, f *fakeService, scenario, redisAddr string) (int, string, Report) {
	t.Helper()
	srv := httptest.NewServer(f.handler())
	t.Cleanup(srv.Close)
	jsonPath := t.TempDir() + "/out.json"
	var out, errb bytes.Buffer
	code := run([]string{"-url", srv.URL, "-token", "admin", "-scenario", scenario, "-short", "-concurrency", "16",
		"-redis-addr", redisAddr, "-mysql-dsn", "root@tcp(127.0.0.1:1)/none", "-json", jsonPath}, &out, &errb)
	var rep Report
	if raw, err := os.ReadFile(jsonPath); err == nil {
		json.Unmarshal(raw, &rep)
	}
	return code, out.String() + errb.String(), rep
}

func TestScenariosAgainstFake(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		code, out, rep := runFake(t, newFakeService(), "flash,claim,redeem,mixed")
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		flash := rep.find("flash")
		if flash == nil || flash.OK != 200 || flash.Requests != 2000 {
			t.Errorf("flash: %+v", flash)
		}
		redeem := rep.find("redeem")
		if redeem == nil || redeem.OK != 400 || redeem.Results["duplicate"] != 40 || redeem.Results["already_used"] != 20 {
			t.Errorf("redeem: %+v", redeem)
		}
		mixed := rep.find("mixed")
		if mixed == nil || mixed.Results["redeemed"] == 0 || mixed.Results["refunded"] == 0 || mixed.Results["claimed"] == 0 {
			t.Errorf("mixed: %+v", mixed)
		}
		if !strings.Contains(out, "redis memory: not measured") {
			t.Errorf("memory note missing:\n%s", out)
		}
	})
	t.Run("CartCheckoutAndPricing", func(t *testing.T) {
		code, out, rep := runFake(t, newFakeService(), "pricing,cartcheckout")
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		// -short: 200 orders of each half, 4000 carts priced.
		a, l, p := rep.find("cartcheckout-amount"), rep.find("cartcheckout-lines"), rep.find("pricing")
		if a == nil || a.OK != 200 || a.Requests != 200 || l == nil || l.OK != 200 || l.Requests != 200 {
			t.Fatalf("cartcheckout: %+v\n%+v", a, l)
		}
		if p == nil || p.OK != 4000 || p.Pricing == nil || p.Pricing.Lines != 100 || p.Pricing.Coupons != 5 {
			t.Fatalf("pricing: %+v", p)
		}
		names := map[string]bool{}
		for _, x := range rep.Ratios {
			names[x.Name] = true
		}
		if !names["cartcheckout lines/amount (held+confirmed orders/s)"] || !strings.Contains(out, "check skip order lines: no database") {
			t.Fatalf("ratios %v:\n%s", names, out)
		}
	})
	t.Run("ErrCartNotConfirmed", func(t *testing.T) {
		f := newFakeService()
		f.otherCart = true
		code, out, _ := runFake(t, f, "cartcheckout")
		if code == 0 || !strings.Contains(out, "idempotency_mismatch") || !strings.Contains(out, "check FAIL orders confirmed") {
			t.Fatalf("refused confirms passed, exit %d:\n%s", code, out)
		}
	})
	t.Run("ReconcileNotAvailable", func(t *testing.T) {
		f := newFakeService()
		f.reconcile = false
		code, out, _ := runFake(t, f, "claim")
		if code != 0 || !strings.Contains(out, "reconcile: not available") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})
	t.Run("ErrOversell", func(t *testing.T) {
		f := newFakeService()
		f.oversell = true
		code, out, rep := runFake(t, f, "flash")
		if code == 0 || !strings.Contains(out, "check FAIL exact stock: 201 coupons claimed, stock 200") {
			t.Fatalf("an oversell passed, exit %d:\n%s", code, out)
		}
		if rep.OK {
			t.Error("report says OK")
		}
	})
	t.Run("ErrDoubleRedemption", func(t *testing.T) {
		f := newFakeService()
		f.double = true
		code, out, _ := runFake(t, f, "redeem")
		if code == 0 || !strings.Contains(out, "check FAIL no double redemption") {
			t.Fatalf("a double redemption passed, exit %d:\n%s", code, out)
		}
	})
	t.Run("ErrDrift", func(t *testing.T) {
		f := newFakeService()
		f.drift = 3
		code, out, _ := runFake(t, f, "claim")
		if code == 0 || !strings.Contains(out, "check FAIL reconcile: drift 3") {
			t.Fatalf("a drift passed, exit %d:\n%s", code, out)
		}
	})
	t.Run("CPUProfile", func(t *testing.T) {
		prof := httptest.NewServer(http.HandlerFunc(pprof.Profile))
		t.Cleanup(prof.Close)
		srv := httptest.NewServer(newFakeService().handler())
		t.Cleanup(srv.Close)
		dir := t.TempDir()
		var out bytes.Buffer
		code := run([]string{"-url", srv.URL, "-token", "admin", "-scenario", "claim", "-short", "-concurrency", "8",
			"-redis-addr", "127.0.0.1:1", "-pprof", prof.URL, "-pprof-dir", dir}, &out, &out)
		st, err := os.Stat(dir + "/claim.cpu.pprof")
		if code != 0 || err != nil || st.Size() == 0 || !strings.Contains(out.String(), "cpu profile of the first 2s") {
			t.Fatalf("exit %d, profile %v:\n%s", code, err, out.String())
		}
	})
	t.Run("ErrServiceDown", func(t *testing.T) {
		var out, errb bytes.Buffer
		code := run([]string{"-url", "http://127.0.0.1:1", "-token", "admin", "-scenario", "claim", "-short", "-redis-addr", "127.0.0.1:1", "-ready-wait", "1s"}, &out, &errb)
		if code == 0 {
			t.Fatalf("a run without a service passed:\n%s", out.String())
		}
	})
}
