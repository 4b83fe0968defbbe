package api_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/handlers"
	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/testenv"

	"github.com/redis/go-redis/v9"
)

// revokeWait bounds how long a revocation may take to reach another
// instance: it is published through Redis pub/sub, which is asynchronous
// (a few milliseconds; the bound leaves room for a loaded machine).
const revokeWait = 500 * time.Millisecond

// wantStatusSoon calls path with token on e until it answers want, within
// revokeWait; every other answer before it must be one of passing.
func wantStatusSoon(t *testing.T, e *testsupport.APIEnv, want int, path, token string, passing ...int) map[string]any {
	t.Helper()
	deadline := time.Now().Add(revokeWait)
	for {
		code, out := e.Call(t, "GET", path, token, nil, "")
		if code == want {
			return out
		}
		ok := false
		for _, p := range passing {
			ok = ok || code == p
		}
		if !ok || time.Now().After(deadline) {
			t.Fatalf("GET %s: %d %v, want %d within %s", path, code, out, want, revokeWait)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestTokenRevokeTwoInstances: two instances over the same database and
// Redis; a token revoked through one is answered 401 by the other within
// the time the revocation takes to be published (bounded by revokeWait),
// though the other had just accepted (and cached) it, and by the revoking
// one at its very next request.
func TestTokenRevokeTwoInstances(t *testing.T) {
	a := testsupport.NewAPIEnv(t)
	svcB := a.Env.NewService(services.Config{AdminConfig: services.AdminConfig{BootstrapToken: testsupport.AdminToken}})
	b := &testsupport.APIEnv{Fixture: &testsupport.Fixture{Env: a.Env, Router: handlers.NewRouter(svcB, handlers.Options{Logger: a.Env.Config.Logger})}}

	created := a.MustCall(t, 201, "POST", "/api/v1/tokens", testsupport.AdminToken, `{"role":"app","name":"shop backend"}`)
	secret := created["token"].(string)
	id := int64(created["token_info"].(map[string]any)["id"].(float64))
	kept := a.MustCall(t, 201, "POST", "/api/v1/tokens", testsupport.AdminToken, `{"role":"app","name":"shop backend 2"}`)["token"].(string)
	for i := range 3 {
		b.MustCall(t, 200, "GET", "/api/v1/users/alice/coupons", secret, "")
		b.MustCall(t, 200, "GET", "/api/v1/users/alice/coupons", kept, "")
		if i == 0 {
			a.MustCall(t, 200, "GET", "/api/v1/users/alice/coupons", secret, "")
		}
	}
	out := a.MustCall(t, 200, "POST", fmt.Sprintf("/api/v1/tokens/%d/revoke", id), testsupport.AdminToken, "")
	if out["result"] != "ok" {
		t.Fatalf("revoke: %v", out)
	}
	if got := a.MustCall(t, 401, "GET", "/api/v1/users/alice/coupons", secret, ""); got["result"] != "unauthorized" {
		t.Fatalf("the revoked token on the revoking instance: %v", got)
	}
	if got := wantStatusSoon(t, b, 401, "/api/v1/users/alice/coupons", secret, 200); got["result"] != "unauthorized" {
		t.Fatalf("the revoked token on the other instance: %v", got)
	}
	b.MustCall(t, 200, "GET", "/api/v1/users/alice/coupons", kept, "")
}

// TestTokenRevocationsSubscriptionLost: instance b's connections to Redis
// are cut and kept down. While b cannot follow the revocations it answers
// bearer requests 503 (the bootstrap token, which cannot be revoked, still
// works); a token revoked through instance a meanwhile is refused 401 by b
// once b has subscribed and loaded the revoked tokens again, and a token
// that was not revoked works again.
func TestTokenRevocationsSubscriptionLost(t *testing.T) {
	a := testsupport.NewAPIEnv(t)
	tap := newRedisTap(t, a.Env)
	b := tap.instance(t, a.Env, nil)

	revoked := a.MustCall(t, 201, "POST", "/api/v1/tokens", testsupport.AdminToken, `{"role":"app","name":"shop backend"}`)
	secret := revoked["token"].(string)
	id := int64(revoked["token_info"].(map[string]any)["id"].(float64))
	kept := a.AppToken(t)
	const path = "/api/v1/users/alice/coupons"
	b.MustCall(t, 200, "GET", path, secret, "")
	b.MustCall(t, 200, "GET", path, kept, "")

	tap.cut()
	for _, token := range []string{secret, kept} {
		out := wantStatusSoon(t, b, 503, path, token, 200)
		if out["result"] != "unavailable" {
			t.Fatalf("a token while the subscription is down: %v", out)
		}
	}
	b.MustCall(t, 200, "GET", path, testsupport.AdminToken, "")
	a.MustCall(t, 200, "POST", fmt.Sprintf("/api/v1/tokens/%d/revoke", id), testsupport.AdminToken, "")
	// b hears nothing of it: its connections stay cut.
	for range 3 {
		b.MustCall(t, 503, "GET", path, secret, "")
	}

	tap.restore()
	deadline := time.Now().Add(5 * time.Second) // b retries at most every 2s
	for {
		code, out := b.Call(t, "GET", path, kept, nil, "")
		if code == 200 {
			break
		}
		if code != 503 || time.Now().After(deadline) {
			t.Fatalf("the kept token after Redis came back: %d %v", code, out)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if out := b.MustCall(t, 401, "GET", path, secret, ""); out["result"] != "unauthorized" {
		t.Fatalf("the token revoked during the outage: %v", out)
	}
	if n := tap.count("SUBSCRIBE"); n != 2 {
		t.Fatalf("instance b subscribed %d times, want 2 (at start, after the outage)", n)
	}
}

// TestSoldOutAnswerSendsNoRedisCommand: once an instance has learnt that a
// template is sold out (docs/soldout.md), an authenticated claim on it is
// answered from memory: neither the token's check nor the claim sends a
// Redis command, with the claim rate limits of production on. The clock
// stands still, so that the script's last sold_out stays under a second
// old (after a second, one claim goes to the script again).
func TestSoldOutAnswerSendsNoRedisCommand(t *testing.T) {
	a := testsupport.NewAPIEnv(t)
	tap := newRedisTap(t, a.Env)
	a.MustCall(t, 201, "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"Spring","budget_cents":0}`)
	a.MustCall(t, 201, "POST", "/api/v1/templates", testsupport.AdminToken,
		strings.Replace(testsupport.ValidTemplate, `"total_stock":10`, `"total_stock":1`, 1))
	now := time.Now().UTC().Truncate(time.Microsecond)
	b := tap.instance(t, a.Env, func() time.Time { return now })
	app := a.AppToken(t)
	claim := func(key, user string) (int, map[string]any) {
		return b.Call(t, "POST", "/api/v1/templates/1/claim", app, map[string]string{"Idempotency-Key": key}, `{"user_id":"`+user+`"}`)
	}
	if code, out := claim("first", "alice"); code != 201 {
		t.Fatalf("the last coupon: %d %v", code, out)
	}
	// The first sold-out answers come from the script, and the instance then
	// learns the template's possible replays in the background.
	learnt := false
	for i := 0; i < 200 && !learnt; i++ {
		before := len(tap.commands())
		if code, out := claim("warm"+strconv.Itoa(i), "warm"+strconv.Itoa(i)); code != 409 || out["result"] != "sold_out" {
			t.Fatalf("sold-out claim %d: %d %v", i, code, out)
		}
		learnt = len(tap.commands()) == before
		time.Sleep(5 * time.Millisecond)
	}
	if !learnt {
		t.Fatalf("every one of 200 sold-out answers sent Redis commands: %v", tap.commands())
	}

	before := tap.commands()
	const answers = 20
	for i := range answers {
		code, out := claim("k"+strconv.Itoa(i), "user"+strconv.Itoa(i))
		if code != 409 || out["result"] != "sold_out" {
			t.Fatalf("sold-out claim %d: %d %v", i, code, out)
		}
	}
	var sent []string
	for _, c := range tap.commands()[len(before):] {
		if c != "PING" { // the subscription's health check, not a request's
			sent = append(sent, c)
		}
	}
	if len(sent) != 0 {
		t.Fatalf("%d sold-out answers sent %d Redis commands, want 0: %v", answers, len(sent), sent)
	}
}

// redisTap dials the test's Redis for one instance: it records the name of
// every command the instance sends, and can cut the instance's connections
// and refuse new ones until restored, as a network failure would. Unlike
// CLIENT KILL TYPE pubsub, it touches only this instance, not the other
// tests sharing the Redis server.
type redisTap struct {
	addr string
	mu   sync.Mutex
	down bool
	open map[net.Conn]bool
	cmds []string
}

func newRedisTap(t *testing.T, env *testenv.Env) *redisTap {
	t.Helper()
	if testenv.IsCluster() {
		t.Skip("the tap dials a single Redis server")
	}
	addr := os.Getenv("COUPON_TEST_REDIS_ADDR")
	if env.Mini != nil {
		addr = env.Mini.Addr()
	}
	return &redisTap{addr: addr, open: map[net.Conn]bool{}}
}

// instance returns a router over a second App that reaches Redis through
// the tap, with production's claim limits and the clock now (nil: the
// system's).
func (r *redisTap) instance(t *testing.T, env *testenv.Env, now func() time.Time) *testsupport.APIEnv {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: r.addr, Dialer: r.dial, MaxRetries: -1})
	svc := services.New(&core.Backends{DB: env.Backends.DB, Dialect: env.Backends.Dialect, Redis: rdb},
		services.Config{CoreConfig: services.CoreConfig{KeyPrefix: env.Prefix, Logger: env.Config.Logger, Now: now}, AdminConfig: services.AdminConfig{BootstrapToken: testsupport.AdminToken}})
	t.Cleanup(func() {
		svc.Close()
		rdb.Close()
	})
	router := handlers.NewRouter(svc, handlers.Options{Logger: env.Config.Logger,
		Limits: handlers.Limits{ClaimsPerUser: 20, ClaimsPerAddr: 120, BadTokensPerAddr: 30, MaxInflightClaims: 512}})
	return &testsupport.APIEnv{Fixture: &testsupport.Fixture{Env: env, Router: router}}
}

func (r *redisTap) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	r.mu.Lock()
	down := r.down
	r.mu.Unlock()
	if down {
		return nil, errors.New("the test cut the connections to Redis")
	}
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	tc := &tappedConn{Conn: c, tap: r}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down {
		c.Close()
		return nil, errors.New("the test cut the connections to Redis")
	}
	r.open[tc] = true
	return tc, nil
}

// cut closes every connection of the instance and refuses new ones.
func (r *redisTap) cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down = true
	for c := range r.open {
		c.(*tappedConn).Conn.Close()
	}
	clear(r.open)
}

func (r *redisTap) restore() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down = false
}

// commands returns the names of the commands sent so far, in order.
func (r *redisTap) commands() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.cmds...)
}

func (r *redisTap) count(name string) int {
	n := 0
	for _, c := range r.commands() {
		if c == name {
			n++
		}
	}
	return n
}

// tappedConn records the commands written on one connection: a client
// sends each as a RESP array of bulk strings, whose first is the name.
type tappedConn struct {
	net.Conn
	tap     *redisTap
	pending []byte
}

func (c *tappedConn) Write(p []byte) (int, error) {
	c.pending = append(c.pending, p...)
	for {
		name, n := parseCommand(c.pending)
		if n == 0 {
			break
		}
		c.pending = c.pending[n:]
		c.tap.mu.Lock()
		c.tap.cmds = append(c.tap.cmds, name)
		c.tap.mu.Unlock()
	}
	return c.Conn.Write(p)
}

// parseCommand reads one whole command at the start of b: its upper-cased
// name and its length in bytes (0 when b does not hold a whole command).
func parseCommand(b []byte) (string, int) {
	br := bytes.NewReader(b)
	r := bufio.NewReader(br)
	line := func() (string, bool) {
		s, err := r.ReadString('\n')
		return strings.TrimSuffix(s, "\r\n"), err == nil
	}
	head, ok := line()
	if !ok || !strings.HasPrefix(head, "*") {
		return "", 0
	}
	args, err := strconv.Atoi(head[1:])
	if err != nil {
		return "", 0
	}
	name := ""
	for i := range args {
		l, ok := line()
		if !ok || !strings.HasPrefix(l, "$") {
			return "", 0
		}
		size, err := strconv.Atoi(l[1:])
		if err != nil {
			return "", 0
		}
		arg := make([]byte, size+2)
		if _, err := io.ReadFull(r, arg); err != nil {
			return "", 0
		}
		if i == 0 {
			name = strings.ToUpper(string(arg[:size]))
		}
	}
	return name, len(b) - br.Len() - r.Buffered()
}
