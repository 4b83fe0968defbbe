package core

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/couponsvc/couponsvc/models"

	"github.com/redis/go-redis/v9"
)

// soldOutFresh is how long a sell-out that the claim script reported is
// believed without asking Redis again: the instance learns of stock coming
// back (a refund under recycle, stock added, a reservation given back, a
// reload) at most this long after it happened, by letting one claim through
// to the script once this has passed (docs/soldout.md).
const soldOutFresh = time.Second

// maxSoldOutHolders bounds the claims one template's memory holds: a template
// with more coupons is not remembered, and its refusals go to Redis as before.
const maxSoldOutHolders = 1_000_000

// soldOutMemory remembers, per template, that the claim script answered
// sold_out, so that further claims that cannot be replays of a claim of the
// template are refused without a Redis round trip. See
// docs/soldout.md for why the answers stay exact.
type soldOutMemory struct {
	mu    sync.Mutex
	items map[int64]*soldOutEntry
}

// soldOutEntry is the memory of one sold-out template.
type soldOutEntry struct {
	// gen is the template's holders' generation when holders was read (the
	// claim script adds one with every reservation, a rebuild of the
	// counters makes a new one); a sold_out answer with another generation
	// means someone reserved since (stock came back and went again): the
	// entry is learnt anew.
	gen string
	// holders are the claims of this template whose idempotency key may
	// exist, as claimKey(user, request id): the reservations pending at
	// generation gen and every coupon row of the template. nil until learnt.
	holders map[string]struct{}
	// seen is when the claim script last answered sold_out with gen.
	seen time.Time
	// learning is set while a goroutine reads holders; probing while one
	// claim goes to the script to see whether the template is still sold
	// out.
	learning, probing bool
	// learnAfter is when a read that found nothing to keep (too many
	// holders, stock back, a fault) may be tried again: not on every
	// sold_out answer.
	learnAfter time.Time
}

// claimKey names a claim in soldOutEntry.holders. A user id holds no
// newline and an idempotency key is printable ASCII, so the pair is unique.
func claimKey(user, requestID string) string { return user + "\n" + requestID }

// Refuse reports whether a claim of template t by user under requestID may
// be answered sold_out from memory at now. It never refuses a claim whose
// idempotency key may exist (a replay must get its duplicate), a template
// the cached copy says takes no claims now (the script's not_claimable
// wins), nor after soldOutFresh has passed since the script last said
// sold_out: then one claim at a time goes to the script.
func (m *soldOutMemory) Refuse(t *models.Template, user, requestID string, now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.items[t.ID]
	if e == nil || e.holders == nil {
		return false
	}
	if _, ok := e.holders[claimKey(user, requestID)]; ok {
		return false
	}
	if age := now.Sub(e.seen); age >= soldOutFresh || age < 0 {
		if !e.probing || age >= 2*soldOutFresh || age < 0 {
			// This claim asks the script; the others keep being answered
			// from memory until it has, unless the probe is lost.
			e.probing = true
			e.seen = now.Add(-soldOutFresh) // a lost probe is retried a second later
			return false
		}
	}
	if reason, _ := t.ClaimRefusal(now); reason != "" {
		return false
	}
	return true
}

// Observe records the claim script's answer for template tid: sold_out with
// the holders' generation gen, or any other answer that says the template is not
// sold out (claimed, user_limit_reached, budget_exhausted, not_claimable),
// which forgets it. It returns true when the holders of generation gen must
// be learnt; the caller then calls learn.
func (m *soldOutMemory) Observe(tid int64, soldOut bool, gen string, now time.Time) (learn bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.items == nil {
		m.items = map[int64]*soldOutEntry{}
	}
	e := m.items[tid]
	if !soldOut {
		delete(m.items, tid)
		return false
	}
	if e == nil || e.gen != gen {
		e = &soldOutEntry{gen: gen}
		m.items[tid] = e
	}
	e.seen, e.probing = now, false
	if e.holders == nil && !e.learning && !now.Before(e.learnAfter) {
		e.learning = true
		return true
	}
	return false
}

// ProbeDone ends a probe that got no answer from the script (an error).
func (m *soldOutMemory) ProbeDone(tid int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.items[tid]; e != nil {
		e.probing = false
	}
}

// learnt stores the holders read at generation gen, unless the entry has
// moved on meanwhile. holders nil (the read failed or was too large) lets a
// sold_out answer soldOutFresh after now try again.
func (m *soldOutMemory) learnt(tid int64, gen string, holders map[string]struct{}, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.items[tid]
	if e == nil {
		return
	}
	e.learning = false
	switch {
	case holders == nil:
		e.learnAfter = now.Add(soldOutFresh)
	case e.gen == gen:
		e.holders = holders
	default:
		// The read saw a newer generation than the answer that started
		// it: keep it, under that generation, until a sold_out answer
		// confirms or replaces it.
		e.gen, e.holders = gen, holders
	}
}

// Forget drops the memory of a template whose stock this instance changed
// (stock added, a coupon given back, a status or window change).
func (m *soldOutMemory) Forget(tid int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.items, tid)
}

// SoldOutRefusal is the answer to a claim of a sold-out template.
func SoldOutRefusal() error {
	return &models.Error{Code: models.CodeSoldOut, Message: "this coupon is sold out"}
}

// LearnSoldOut reads which claims of template t may have an idempotency key:
// the reservations pending in Redis, read with the holders' generation in one
// transaction, and the claims of every coupon row of it in the database
// (refunded and revoked ones included: their keys live on). A confirmed
// reservation's row is committed before it leaves the pending set, and a
// released one's key is deleted, so together they are every claim of t with
// a key; any reservation after the read changes the generation read with
// it. It runs in its own goroutine, started by a sold_out answer.
func (s *Core) LearnSoldOut(t *models.Template) {
	ctx, cancel := context.WithTimeout(context.Background(), s.Cfg.DBTimeout)
	defer cancel()
	gen, holders := s.readHolders(ctx, t)
	s.SoldOut.learnt(t.ID, gen, holders, s.Clock())
}

func (s *Core) readHolders(ctx context.Context, t *models.Template) (string, map[string]struct{}) {
	tpl := s.Keys.Template(t.CampaignID, t.ID)
	pipe := s.Rdb.TxPipeline()
	genCmd := pipe.HGet(ctx, tpl, "gen")
	remCmd := pipe.HGet(ctx, tpl, "remaining")
	pendCmd := pipe.ZRange(ctx, s.Keys.Pending(t.CampaignID), 0, maxSoldOutHolders)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return "", nil
	}
	if rem, err := remCmd.Int64(); err != nil || rem > 0 || pendCmd.Err() != nil || len(pendCmd.Val()) > maxSoldOutHolders {
		return "", nil
	}
	gen := genCmd.Val() // "" when the hash has no generation yet (redis.Nil)
	holders := map[string]struct{}{}
	for _, raw := range pendCmd.Val() {
		m, ok := ParsePendingMember(raw)
		if !ok {
			return "", nil // unreadable: keep nothing rather than guess
		}
		if m.TemplateID == t.ID {
			addHolder(holders, m.UserID, m.RequestID)
		}
	}
	var rows []struct{ UserID, RequestID string }
	if err := s.DB.WithContext(ctx).Model(&models.Coupon{}).Select("user_id", "request_id").
		Where("template_id = ?", t.ID).Limit(maxSoldOutHolders + 1).Find(&rows).Error; err != nil {
		return "", nil
	}
	if len(rows)+len(holders) > maxSoldOutHolders {
		return "", nil
	}
	for _, r := range rows {
		addHolder(holders, r.UserID, r.RequestID)
	}
	return gen, holders
}

// addHolder records a claim that may be replayed: its key, and for a claim
// with a shared code the prefix every generation of its order's key shares,
// which a checkout with the code asks about before it knows the generation.
func addHolder(holders map[string]struct{}, user, requestID string) {
	holders[claimKey(user, requestID)] = struct{}{}
	if prefix, ok := sharedPrefixOf(requestID); ok {
		holders[claimKey(user, prefix)] = struct{}{}
	}
}

// SoldOutLearnt reports whether s remembers template tid as sold out with
// the users who may replay a claim of it learnt, so that it answers the
// others without Redis. Tests and diagnostics read it.
func (s *Core) SoldOutLearnt(tid int64) bool {
	s.SoldOut.mu.Lock()
	defer s.SoldOut.mu.Unlock()
	e := s.SoldOut.items[tid]
	return e != nil && e.holders != nil
}
