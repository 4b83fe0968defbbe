package faulttest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/client"
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
	ctx := context.Background()
	status := 0
	created, err := admin.CreateToken(ctx, client.CreateTokenRequest{Role: client.TokenRoleApp, Name: "revoked shop"}, client.Status(&status))
	wantStatus(t, "create the revoked token", status, err, 201)
	id, token := created.TokenInfo.ID, created.Token
	kept, err := admin.CreateToken(ctx, client.CreateTokenRequest{Role: client.TokenRoleApp, Name: "kept shop"}, client.Status(&status))
	wantStatus(t, "create the kept token", status, err, 201)
	other := kept.Token
	shop := newClient(urls[1], token)
	// listCoupons reads user u1's coupons through c.
	listCoupons := func(c *apiClient) answer {
		status := 0
		got, err := c.ListUserCoupons(ctx, "u1", client.ListUserCouponsParams{}, client.Status(&status))
		return outcome(status, err, func() string { return got.Result })
	}

	var revoked atomic.Bool
	var acceptedBefore, acceptedAfter, refused atomic.Int64
	var odd sync.Map
	// send sends one request with the token through instance 2 and counts
	// its answer; false when it was not accepted.
	send := func() bool {
		after := revoked.Load()
		a := listCoupons(shop)
		switch {
		case a.err == nil && a.status == 200 && after:
			acceptedAfter.Add(1)
		case a.err == nil && a.status == 200:
			acceptedBefore.Add(1)
		case a.err == nil && a.status == 401 && a.result == "unauthorized":
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
	_, err = admin.RevokeToken(ctx, id, client.Status(&status))
	wantStatus(t, "revoke the token", status, err, 200)
	// The revocation reaches instance 2 pushed, by Redis pub/sub
	// (docs/flows.md): each worker stops at its first refusal, which must
	// come within two seconds; from then on nothing is accepted.
	stopped := make(chan struct{})
	go func() { wg.Wait(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(2 * time.Second):
		t.Fatalf("instance 2 still accepts the token 2 s after its revocation answered")
	}
	revoked.Store(true)
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
	if a := listCoupons(newClient(urls[0], token)); a.err != nil || a.status != 401 {
		t.Errorf("instance 1 after the revocation: %s, want 401", a)
	}
	for _, u := range urls {
		if a := listCoupons(newClient(u, other)); a.err != nil || a.status != 200 {
			t.Fatalf("the kept token on %s: %s, want 200", u, a)
		}
	}
	report(t, "%s; %d requests accepted before the revocation, %d refused, %d accepted after it",
		mode, acceptedBefore.Load(), refused.Load(), acceptedAfter.Load())
}
