package faulttest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestTwoInstancesTokenRevoke: a shop sends requests with its token through
// one instance while an admin revokes the token through the other. No
// request sent after the revocation answered is accepted, on either
// instance, though the first had the token in its cache; another token goes
// on working. Few requests follow the revocation (each worker stops at its
// first refusal, then a handful are sent): every refused one counts against
// the address's limit of invalid tokens (30 a minute by default).
func TestTwoInstancesTokenRevoke(t *testing.T) {
	_, urls, boot, mode := startTwoInstances(t)
	admin := newClient(urls[0], boot)
	created := admin.must(t, "POST", "/api/v1/tokens", map[string]any{"role": "app", "name": "revoked shop"}, 201)
	id := num(field(created, "token_info", "id"))
	token := created["token"].(string)
	other := admin.must(t, "POST", "/api/v1/tokens", map[string]any{"role": "app", "name": "kept shop"}, 201)["token"].(string)
	shop := newClient(urls[1], token)
	const path = "/api/v1/users/u1/coupons"

	var revoked atomic.Bool
	var acceptedBefore, acceptedAfter, refused atomic.Int64
	var odd sync.Map
	// send sends one request with the token through instance 2 and counts
	// its answer; false when it was not accepted.
	send := func() bool {
		after := revoked.Load()
		a := shop.do(context.Background(), "GET", path, nil, "")
		switch {
		case a.err == nil && a.status == 200 && after:
			acceptedAfter.Add(1)
		case a.err == nil && a.status == 200:
			acceptedBefore.Add(1)
		case a.err == nil && a.status == 401 && a.body["result"] == "unauthorized":
			refused.Add(1)
			return false
		default:
			odd.Store(a.kind(), a.String())
			return false
		}
		return !after
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for send() {
			}
		}()
	}
	deadline := time.Now().Add(60 * time.Second)
	for acceptedBefore.Load() < 100 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	admin.must(t, "POST", fmt.Sprintf("/api/v1/tokens/%d/revoke", id), nil, 200)
	revoked.Store(true)
	wg.Wait()
	for range 8 {
		send()
	}
	odd.Range(func(k, v any) bool { t.Errorf("unexpected answer %s: %s", k, v); return true })
	if acceptedBefore.Load() < 100 {
		t.Fatalf("only %d requests accepted before the revocation: the load did not run long enough", acceptedBefore.Load())
	}
	if acceptedAfter.Load() != 0 {
		t.Errorf("%d requests sent after the revocation answered were accepted", acceptedAfter.Load())
	}
	if a := newClient(urls[0], token).do(context.Background(), "GET", path, nil, ""); a.err != nil || a.status != 401 {
		t.Errorf("instance 1 after the revocation: %s, want 401", a)
	}
	for _, u := range urls {
		newClient(u, other).must(t, "GET", path, nil, 200)
	}
	report(t, "%s; %d requests accepted before the revocation, %d refused, %d accepted after it",
		mode, acceptedBefore.Load(), refused.Load(), acceptedAfter.Load())
}
