package admin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/couponsvc/couponsvc/models"

	"github.com/redis/go-redis/v9"
)

// How the memory of revoked tokens follows its channel: a quiet
// subscription is pinged every revocationsPing, so that a connection that
// died without a word is noticed; a lost one is made again after
// revocationsRetry, doubled at each failure up to revocationsRetryMax; New
// waits at most revocationsFirstWait for the first load.
const (
	revocationsPing      = 5 * time.Second
	revocationsRetry     = 50 * time.Millisecond
	revocationsRetryMax  = 2 * time.Second
	revocationsFirstWait = 5 * time.Second
)

// revokedTokens is this instance's memory of the revoked API tokens: the
// ids of the tokens the database shows revoked, loaded in full every time
// the subscription to the revocations channel is made (again), plus the ids
// published there since (docs/flows.md, "Revoke an API token"). It is sure
// only from a load to the loss of the subscription that preceded it; a
// bearer request is refused as unavailable while it is not.
type revokedTokens struct {
	mu   sync.RWMutex
	ids  map[int64]struct{}
	sure bool
	// cause is why the memory is not sure: the subscription's last error.
	cause error

	stop context.CancelFunc
	done chan struct{}
	ps   *redis.PubSub // the live subscription, closed by stop
}

// state reports whether token id is revoked, or, when the memory cannot
// tell, the refusal to answer (CodeUnavailable, with the subscription's
// last error as its cause).
func (r *revokedTokens) state(id int64) (bool, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if !r.sure {
		return false, &models.Error{Code: models.CodeUnavailable, RetryAfterSeconds: 1, Err: r.cause,
			Message: "this instance cannot tell revoked API tokens now (Redis is unavailable), try again shortly"}
	}
	_, revoked := r.ids[id]
	return revoked, nil
}

func (r *revokedTokens) add(id int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids[id] = struct{}{}
}

// reset replaces the memory with a full load and makes it sure.
func (r *revokedTokens) reset(ids []int64) {
	m := make(map[int64]struct{}, len(ids))
	for _, id := range ids {
		m[id] = struct{}{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids, r.sure = m, true
}

func (r *revokedTokens) lost(cause error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sure, r.cause = false, cause
}

func (r *revokedTokens) setPubSub(ps *redis.PubSub) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done == nil { // stopped
		return false
	}
	r.ps = ps
	return true
}

// startRevocations follows the revocations channel until Close, and returns
// once the first load is done or has failed (at most revocationsFirstWait),
// so that an instance that starts with its backends up answers bearer
// requests at once.
func (s *Admin) startRevocations() {
	ctx, cancel := context.WithCancel(context.Background())
	s.revoked.stop, s.revoked.done = cancel, make(chan struct{})
	first := make(chan struct{})
	go func() {
		defer close(s.revoked.done)
		s.followRevocations(ctx, sync.OnceFunc(func() { close(first) }))
	}()
	select {
	case <-first:
	case <-time.After(revocationsFirstWait):
	}
}

// Close stops following the revocations channel. Call it after the last
// request has finished.
func (s *Admin) Close() {
	s.revoked.mu.Lock()
	done, ps := s.revoked.done, s.revoked.ps
	s.revoked.done, s.revoked.sure, s.revoked.cause = nil, false, errors.New("the service is closed")
	s.revoked.mu.Unlock()
	if done == nil {
		return
	}
	s.revoked.stop()
	if ps != nil {
		_ = ps.Close() // wakes a Receive
	}
	<-done
}

// followRevocations subscribes, loads and applies what is published, again
// after every loss of the subscription, until ctx ends. tried is called
// after the first attempt, loaded or not.
func (s *Admin) followRevocations(ctx context.Context, tried func()) {
	wait := revocationsRetry
	for ctx.Err() == nil {
		loaded, err := s.followOnce(ctx, tried)
		s.revoked.lost(fmt.Errorf("the subscription to token revocations: %w", err))
		tried()
		if ctx.Err() != nil || errors.Is(err, redis.ErrClosed) { // closed: nothing to follow any more
			return
		}
		if loaded {
			wait = revocationsRetry
		}
		s.Log.Warn("the subscription to token revocations was lost: bearer requests are refused until it is made again",
			"retry_in", wait, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, revocationsRetryMax)
	}
}

// followOnce makes one subscription and follows it until it is lost. It
// subscribes before it loads, so that a revocation committed during the
// load is either in the load or published to this subscription.
func (s *Admin) followOnce(ctx context.Context, loaded func()) (bool, error) {
	ps := s.Rdb.Subscribe(ctx, s.Keys.RevokedTokens())
	defer ps.Close()
	if !s.revoked.setPubSub(ps) {
		return false, ctx.Err()
	}
	if _, err := ps.ReceiveTimeout(ctx, revocationsPing); err != nil { // the subscription's confirmation
		return false, err
	}
	var ids []int64
	lctx, cancel := context.WithTimeout(ctx, s.Cfg.DBTimeout)
	err := s.DB.WithContext(lctx).Model(&models.APIToken{}).Where("revoked_at IS NOT NULL").Pluck("id", &ids).Error
	cancel()
	if err != nil {
		return false, err
	}
	s.revoked.reset(ids)
	loaded()
	for {
		msg, err := ps.ReceiveTimeout(ctx, revocationsPing)
		var ne net.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout():
			if err := ps.Ping(ctx); err != nil {
				return true, err
			}
			continue
		case err != nil:
			return true, err
		}
		if m, ok := msg.(*redis.Message); ok {
			id, err := strconv.ParseInt(m.Payload, 10, 64)
			if err != nil || id <= 0 {
				s.Log.Warn("a token revocation with no token id was published, ignored", "payload", m.Payload)
				continue
			}
			s.revoked.add(id)
		}
	}
}
