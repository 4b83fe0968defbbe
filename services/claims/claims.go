package claims

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/events"

	"github.com/couponsvc/couponsvc/lua"
	"github.com/couponsvc/couponsvc/models"

	mysqldriver "github.com/go-sql-driver/mysql"
)

// ClaimRequest asks for one coupon of a template for a user.
type ClaimRequest struct {
	TemplateID     int64
	UserID         string
	IdempotencyKey string
	// Admit, when set, is asked once the claim is known to need Redis (the
	// per-user rate limit): a claim that this instance answers sold_out from
	// memory (docs/soldout.md) costs no round trip for it either. Its error
	// is returned as it is, wrapped in an AdmitError.
	Admit func(ctx context.Context) error
	// ImportCode, when set, is the coupon's code (an imported one) instead of a
	// fresh random code.
	ImportCode string
	// Anonymous is an anonymous shopper's claim with a shared code at
	// checkout (docs/shared-codes.md): UserID is empty, and the claim takes
	// stock and budget but no ordinal, so no per-user limit applies.
	Anonymous bool
}

// AdmitError is the refusal of a ClaimRequest's Admit, returned by Claim.
type AdmitError struct{ Err error }

// Error returns the refusal's message.
func (e *AdmitError) Error() string { return e.Err.Error() }

// Unwrap returns the refusal, so that models.ErrorCode sees its code.
func (e *AdmitError) Unwrap() error { return e.Err }

// ClaimResult is the answer to a claim. Duplicate is set for a replay of a
// claim already done: Coupon is then the coupon of the first answer.
type ClaimResult struct {
	Duplicate bool
	Coupon    *models.Coupon
	// Currency is the template's: that of the coupon's value.
	Currency  string
	Remaining int64
}

// MaxClaimAttempts bounds how often one claim starts again after the database
// refused a slot or ordinal that Redis handed out (Redis had lost a write).
const MaxClaimAttempts = 5

// Reservation is what coupon_deduct.lua handed out.
type Reservation struct {
	slot, ordinal, remaining int64
	// budgetLeft is the campaign's budget after a reservation, -1 when it
	// has none or the script did not say.
	budgetLeft int64
	Member     string // the pending zset member
	// holds, on a refusal, says the user holds a coupon of the template.
	holds bool
}

// pendingMember is the member coupon_deduct.lua wrote for this reservation.
func (r Reservation) pendingMember(t *models.Template, req ClaimRequest) string {
	return core.PendingMember{TemplateID: t.ID, UserID: req.UserID, Slot: r.slot, Ordinal: r.ordinal,
		ValueCents: t.ValueCents(), RequestID: req.IdempotencyKey}.String()
}

// Claim reserves a coupon in Redis, writes its row to the database, then
// confirms the reservation. The caller sees "claimed" only once the row is
// committed. Errors: CodeInvalidRequest, CodeNotFound, CodeNotClaimable,
// CodeSoldOut, CodeUserLimitReached, CodeBudgetExhausted,
// CodeIdempotencyMismatch, CodeInProgress, CodeUnavailable.
func (s *Claims) Claim(ctx context.Context, req ClaimRequest) (res *ClaimResult, err error) {
	core.Note(ctx, "template", req.TemplateID, "user", req.UserID)
	defer func() {
		// ClaimUncounted returns an AdmitError as it is, never wrapped.
		if _, admit := err.(*AdmitError); !admit {
			s.Meter.Claims.WithLabelValues(claimResult(res, err)).Inc()
		}
	}()
	return s.ClaimUncounted(ctx, req)
}

// ReplayClaim answers a claim that was refused before it ran (a rate limit)
// when it is the replay of a claim already done: a replay asks for nothing
// new, so it gets the first answer whatever the limits say. It reads the
// database, which holds the key as long as the coupon exists, also after
// Redis forgot it. Errors: CodeNotFound when no coupon was issued under the
// key (a new claim, or the first request is still running),
// CodeIdempotencyMismatch, CodeInvalidRequest, CodeUnavailable.
func (s *Claims) ReplayClaim(ctx context.Context, req ClaimRequest) (*ClaimResult, error) {
	if err := models.ValidateUserID("user_id", req.UserID); err != nil {
		return nil, err
	}
	if err := models.ValidateIdempotencyKey(req.IdempotencyKey); err != nil {
		return nil, err
	}
	res, err := s.replayFromDB(ctx, req)
	if err == nil {
		s.Meter.Claims.WithLabelValues(models.CodeDuplicate.Word()).Inc()
	}
	return res, err
}

// claimResult is the result word of a claim, for the metrics.
func claimResult(res *ClaimResult, err error) string {
	switch {
	case err != nil:
		return models.ErrorCode(err).Word()
	case res.Duplicate:
		return models.CodeDuplicate.Word()
	}
	return "claimed"
}

func (s *Claims) ClaimUncounted(ctx context.Context, req ClaimRequest) (*ClaimResult, error) {
	if req.TemplateID <= 0 {
		return nil, models.Invalid("template_id", "must be a positive id")
	}
	if err := models.ValidateUserID("user_id", req.UserID); err != nil {
		return nil, err
	}
	if err := models.ValidateIdempotencyKey(req.IdempotencyKey); err != nil {
		return nil, err
	}
	// Whether the template takes claims now is decided by the claim script,
	// from the rule every instance reads in Redis, not from this instance's
	// cached copy, which may predate a pause or a change of the claim window.
	t, err := s.Template(ctx, req.TemplateID)
	if err != nil {
		return nil, err
	}
	if t.CodeMode == models.CodeModeAutomatic {
		// Checkout claims it for the cart (docs/automatic-offers.md).
		return nil, models.Errorf(models.CodeNotClaimable, "this offer applies by itself at checkout to every cart it admits; it is never claimed")
	}
	if s.SoldOut.Refuse(t, req.UserID, req.IdempotencyKey, s.Clock()) {
		s.Meter.SoldOutFromMemory.Inc()
		return nil, core.SoldOutRefusal()
	}
	if req.Admit != nil {
		if err := req.Admit(ctx); err != nil {
			s.SoldOut.ProbeDone(t.ID)
			return nil, &AdmitError{Err: err}
		}
	}
	for attempt := 1; ; attempt++ {
		res, err := s.claimOnce(ctx, t, req)
		if !errors.Is(err, ErrSlotTaken) {
			return res, err
		}
		// Redis handed out a slot or ordinal the database holds: Redis lost
		// writes. Rebuild the campaign from the database, also before giving
		// up: the reservation just given back named a slot the database
		// holds, and Redis must not go on counting it free. Then start again.
		s.Log.Warn("database refused a reservation; resynchronising the campaign", "campaign", t.CampaignID,
			"template", t.ID, "attempt", attempt, "err", err)
		if rerr := s.Resync(ctx, t.CampaignID); rerr != nil {
			return nil, rerr
		}
		if attempt == MaxClaimAttempts {
			return nil, models.Unavailable("the claim", err)
		}
		if fresh, err := s.GetTemplate(ctx, t.ID); err == nil {
			t = fresh
		}
	}
}

// replayRefused answers a refused claim (not claimable, sold out, limit
// reached, budget used up) from the database when it is the replay of a
// claim already done whose idempotency key Redis no longer has (Redis
// restarted or flushed; the embedded Redis after a restart): the user's
// first claim counts against the limit and the stock now, so the script
// refuses before the insert that would meet the unique request_id; and a
// template paused or closed since still answers the replay of a claim made
// while it was open. Only a user who holds a coupon of the template can be
// replaying one (the script says so with the refusal), so a flash sale's
// many refusals cost no extra read of Redis or the database.
func (s *Claims) replayRefused(ctx context.Context, r Reservation, req ClaimRequest, refusal error) (*ClaimResult, bool) {
	switch models.ErrorCode(refusal) {
	case models.CodeNotClaimable, models.CodeSoldOut, models.CodeUserLimitReached, models.CodeBudgetExhausted:
	default:
		return nil, false
	}
	if !r.holds {
		return nil, false
	}
	res, err := s.replayFromDB(ctx, req)
	return res, err == nil
}

// ErrCodeTaken refuses a claim with a given code (an import's) that another
// coupon has.
var ErrCodeTaken = models.Errorf(models.CodeInvalidRequest, "the code is taken by another coupon")

// ErrSlotTaken marks a reservation the database refused because its slot or
// ordinal is held by another coupon, or is out of range.
var ErrSlotTaken = errors.New("slot or ordinal already held in the database")

func (s *Claims) claimOnce(ctx context.Context, t *models.Template, req ClaimRequest) (*ClaimResult, error) {
	r, dup, err := s.Reserve(ctx, t, req)
	if err != nil {
		if res, ok := s.replayRefused(ctx, r, req, err); ok {
			return res, nil
		}
		return nil, err
	}
	if dup != "" {
		res, err := s.replayFromDB(ctx, req)
		if models.IsCode(err, models.CodeNotFound) {
			// The first request reserved but has not written its row yet.
			return nil, &models.Error{Code: models.CodeInProgress, Message: "the first request with this Idempotency-Key is still running; retry shortly", RetryAfterSeconds: 1}
		}
		return res, err
	}
	s.Meter.ReservationsPending.Inc()
	defer s.Meter.ReservationsPending.Dec()
	start := time.Now()
	c, err := s.insertCoupon(ctx, t, req, r)
	core.Observe(ctx, s.Meter.DBSeconds.WithLabelValues("insert_coupon"), "insert", start)
	if err == nil {
		s.ConfirmCommitted(ctx, t.CampaignID, req.IdempotencyKey, r.Member)
		return &ClaimResult{Coupon: c, Currency: t.Currency, Remaining: r.remaining}, nil
	}
	var index string
	var unique bool
	if !errors.Is(err, ErrSlotTaken) {
		index, unique = core.UniqueViolation(err)
	}
	switch {
	case unique && index == core.UniqueRequest:
		// The key was used before in a claim Redis no longer remembers
		// (expired, flushed, or another campaign): the database answers.
		s.ReleaseReservation(ctx, t.CampaignID, t.ID, req.IdempotencyKey, r.Member)
		return s.replayFromDB(ctx, req)
	case unique && index == core.UniqueCode && req.ImportCode != "":
		s.ReleaseReservation(ctx, t.CampaignID, t.ID, req.IdempotencyKey, r.Member)
		return nil, ErrCodeTaken
	case errors.Is(err, ErrSlotTaken) || unique && (index == core.UniqueSlot || index == core.UniqueUserOrdinal):
		s.ReleaseReservation(ctx, t.CampaignID, t.ID, req.IdempotencyKey, r.Member)
		return nil, fmt.Errorf("%w: %v", ErrSlotTaken, err)
	}
	// The write failed. Unless it surely did not run, ask the database (even
	// if the caller has gone) whether the row is there; if it cannot tell, the
	// reservation stays pending and the sweeper settles it once the database
	// is back. A row that is surely absent gives the reservation back now.
	if !notExecuted(err) {
		check, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.Cfg.DBTimeout)
		res, rerr := s.replayFromDB(check, req)
		cancel()
		if rerr == nil {
			s.ConfirmCommitted(ctx, t.CampaignID, req.IdempotencyKey, r.Member)
			res.Duplicate = false
			res.Remaining = r.remaining
			return res, nil
		}
		if !models.IsCode(rerr, models.CodeNotFound) {
			return nil, core.DBError("coupon", err)
		}
	}
	s.ReleaseReservation(ctx, t.CampaignID, t.ID, req.IdempotencyKey, r.Member)
	return nil, core.DBError("coupon", err)
}

// notExecuted reports a database error after which the statement surely did
// not run: the server answered with an error, or it was never sent (the pool
// is closed, no connection could be made, the driver refused a bad one).
func notExecuted(err error) bool {
	var me *mysqldriver.MySQLError
	var op *net.OpError
	return errors.As(err, &me) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.As(err, &op) && op.Op == "dial" || strings.Contains(err.Error(), "sql: database is closed")
}

// Reserve runs coupon_deduct.lua, loading the campaign's counters when the
// script reports them missing. dup is "P" or "C" for a replay.
func (s *Claims) Reserve(ctx context.Context, t *models.Template, req ClaimRequest) (r Reservation, dup string, err error) {
	keys := s.Keys.DeductKeys(t.CampaignID, t.ID, req.IdempotencyKey)
	var cc core.CampaignCap
	if !req.Anonymous {
		// The campaign's per-customer cap counts the user's coupons of
		// all its templates (docs/automatic-offers.md).
		if cc, err = s.CampaignCapOf(ctx, t.CampaignID); err != nil {
			return r, "", err
		}
		if cc.Limit > 0 {
			keys = append(keys, s.Keys.CapKeys(t.CampaignID, t.ID, cc)...)
		}
	}
	// attempt tells this request's reservation from another request's with
	// the same key, when go-redis runs the script again after a lost reply.
	attempt := rand.Text()
	for loaded := false; ; loaded = true {
		start := time.Now()
		args := []any{t.ID, req.UserID, req.IdempotencyKey, s.Clock().UnixMilli(), int64(s.cfg.IdempotencyTTL.Seconds()), attempt}
		if req.Anonymous {
			args = append(args, "anon")
		} else if cc.Limit > 0 {
			args = append(args, "", cc.Limit)
		}
		vals, err := lua.Deduct.Run(ctx, s.Hot, keys, args...).Slice()
		core.Observe(ctx, s.Meter.ScriptSeconds.WithLabelValues("deduct"), "deduct", start)
		if err != nil {
			s.SoldOut.ProbeDone(t.ID)
			return r, "", core.RedisError(err)
		}
		code, _ := vals[0].(int64)
		s.observeDeduct(t, code, vals)
		r.slot, _ = vals[1].(int64)
		r.ordinal, _ = vals[2].(int64)
		r.remaining, _ = vals[3].(int64)
		detail, _ := vals[4].(string)
		r.holds = detail == "H"
		switch code {
		case lua.DeductReserved:
			r.Member = r.pendingMember(t, req)
			r.budgetLeft = -1
			if len(vals) > 5 {
				r.budgetLeft, _ = vals[5].(int64)
			}
			return r, "", nil
		case lua.DeductDuplicate:
			if own, _ := vals[len(vals)-1].(string); detail == "P" && own == attempt {
				// This request's own reservation, answered twice.
				r.Member = r.pendingMember(t, req)
				r.remaining, _ = s.Rdb.HGet(ctx, s.Keys.Template(t.CampaignID, t.ID), "remaining").Int64()
				r.budgetLeft = -1
				return r, "", nil
			}
			return r, detail, nil
		case lua.DeductNotClaimable:
			// The script puts the time the refusal refers to where a slot goes.
			at, why := r.slot, ""
			r.slot = 0
			if len(vals) > 5 {
				why, _ = vals[5].(string)
			}
			return r, "", models.NotClaimable(why, time.UnixMilli(at).UTC())
		case lua.DeductSoldOut:
			return r, "", models.Errorf(models.CodeSoldOut, "this coupon is sold out")
		case lua.DeductUserLimit:
			return r, "", models.Errorf(models.CodeUserLimitReached, "you already hold the most coupons of this kind you may (%d)", t.PerUserLimit)
		case lua.DeductBudgetExhausted:
			return r, "", models.Errorf(models.CodeBudgetExhausted, "the campaign's budget is used up")
		case lua.DeductCampaignLimit:
			return r, "", core.CampaignLimitRefusal(cc.Limit)
		case lua.DeductIdempotencyMismatch:
			return r, "", models.Errorf(models.CodeIdempotencyMismatch, "this Idempotency-Key was used for another template or user")
		case lua.DeductNotLoaded:
			if loaded {
				// A template deleted since this claim read it has no
				// counters, and a load does not make them
				// (docs/flows.md#delete): not_found, as for an unknown id.
				if _, err := s.GetTemplate(ctx, t.ID); err != nil {
					return r, "", err
				}
				return r, "", models.Unavailable("Redis", errors.New("campaign counters missing right after a load"))
			}
			if err := s.LoadCampaign(ctx, t.CampaignID, core.LoadMissing, append([]int64{t.ID}, cc.TemplateIDs...)...); err != nil {
				return r, "", err
			}
		default:
			return r, "", fmt.Errorf("coupon_deduct.lua answered %d %q", code, detail)
		}
	}
}

// observeDeduct tells the sold-out memory what the claim script said about
// template t (docs/soldout.md).
func (s *Claims) observeDeduct(t *models.Template, code int64, vals []any) {
	switch code {
	case lua.DeductSoldOut:
		gen := ""
		if len(vals) > 5 {
			gen, _ = vals[5].(string)
		}
		if s.SoldOut.Observe(t.ID, true, gen, s.Clock()) {
			go s.LearnSoldOut(t)
		}
	case lua.DeductReserved, lua.DeductUserLimit, lua.DeductBudgetExhausted, lua.DeductNotClaimable, lua.DeductCampaignLimit:
		s.SoldOut.Observe(t.ID, false, "", s.Clock())
	default:
		s.SoldOut.ProbeDone(t.ID)
	}
}

// insertCoupon writes the coupon row of a reservation. The unique indexes on
// (template_id, slot) and (template_id, user_id, user_ordinal) make the
// database refuse what Redis should not have handed out.
func (s *Claims) insertCoupon(ctx context.Context, t *models.Template, req ClaimRequest, r Reservation) (*models.Coupon, error) {
	c, err := s.BuildCoupon(ctx, t, req, r)
	if err != nil {
		return nil, err
	}
	if req.ImportCode != "" {
		c.Code = req.ImportCode
	}
	return c, s.writer.write(ctx, c, t.Currency, req.ImportCode != "", ClaimSideEvents(t, r))
}

// BuildCoupon makes the coupon row of a reservation, with a fresh code, and
// refuses (errSlotTaken) a slot or ordinal out of the template's range.
func (s *Claims) BuildCoupon(ctx context.Context, t *models.Template, req ClaimRequest, r Reservation) (*models.Coupon, error) {
	if r.slot < 1 || !req.Anonymous && (r.ordinal < 1 || r.ordinal > t.PerUserLimit) {
		return nil, ErrSlotTaken
	}
	if r.slot > t.TotalStock {
		// Stock may have been added since the template was cached.
		fresh, err := s.GetTemplate(ctx, t.ID)
		if err != nil {
			return nil, err
		}
		if r.slot > fresh.TotalStock {
			return nil, ErrSlotTaken
		}
	}
	now := s.Clock()
	from, until := t.ValidityFor(now, s.Cfg.Location)
	slot, ordinal := r.slot, &r.ordinal
	if req.Anonymous {
		ordinal = nil // no user's limit counts it (docs/shared-codes.md)
	}
	c := &models.Coupon{
		TemplateID:  t.ID,
		CampaignID:  t.CampaignID,
		UserID:      req.UserID,
		Status:      models.CouponIssued,
		Slot:        &slot,
		UserOrdinal: ordinal,
		RequestID:   req.IdempotencyKey,
		ValueCents:  t.ValueCents(),
		ClaimedAt:   now,
		ValidFrom:   from,
		ValidUntil:  until,
		UpdatedAt:   now,
	}
	c.Code = s.Cfg.NewCode()
	return c, nil
}

// ClaimSideEvents are the events a claim writes besides its coupon.claimed
// (docs/events.md): template.sold_out when it took the template's last
// coupon, campaign.budget_exhausted when it left the campaign's budget
// below the template's value (so that the template's next claim is refused).
func ClaimSideEvents(t *models.Template, r Reservation) []events.NewEvent {
	var evs []events.NewEvent
	if r.remaining == 0 {
		evs = append(evs, events.NewEvent{Typ: models.EventTemplateSoldOut, Data: models.TemplateEvent{TemplateID: t.ID,
			CampaignID: t.CampaignID, Name: t.Name, Status: t.Status, TotalStock: t.TotalStock}})
	}
	if v := t.ValueCents(); r.budgetLeft >= 0 && r.budgetLeft < v {
		evs = append(evs, events.NewEvent{Typ: models.EventCampaignBudgetExhausted, Data: models.BudgetEvent{CampaignID: t.CampaignID,
			TemplateID: t.ID, RemainingBudgetCents: r.budgetLeft, ValueCents: v, Currency: t.Currency}})
	}
	return evs
}

// replayFromDB answers a claim from the coupon the database holds for its
// idempotency key: a duplicate when template and user match, else a mismatch.
// Errors: CodeNotFound when no coupon has that key.
func (s *Claims) replayFromDB(ctx context.Context, req ClaimRequest) (*ClaimResult, error) {
	var c models.Coupon
	if err := s.DB.WithContext(ctx).Where("request_id = ?", req.IdempotencyKey).First(&c).Error; err != nil {
		return nil, core.DBError("coupon for this Idempotency-Key", err)
	}
	if c.TemplateID != req.TemplateID || c.UserID != req.UserID {
		return nil, models.Errorf(models.CodeIdempotencyMismatch, "this Idempotency-Key was used for another template or user")
	}
	currency, err := s.TemplateCurrency(ctx, c.TemplateID)
	if err != nil {
		return nil, err
	}
	res := &ClaimResult{Duplicate: true, Coupon: &c, Currency: currency}
	if v, err := s.Rdb.HGet(ctx, s.Keys.Template(c.CampaignID, c.TemplateID), "remaining").Int64(); err == nil {
		res.Remaining = v
	}
	return res, nil
}

// confirm marks a reservation whose row is committed. On failure the sweeper
// confirms it later: the row is the truth either way.
//
// It reports whether Redis had lost the reservation (flushed, or given back by
// a sweeper that took the claim for dead): the counters may then show its slot
// as free, and confirmCommitted rebuilds them.
func (s *Claims) confirm(ctx context.Context, cid int64, requestID, member string) (lost bool) {
	defer core.Observe(ctx, s.Meter.ScriptSeconds.WithLabelValues("confirm"), "confirm", time.Now())
	n, err := lua.Confirm.Run(context.WithoutCancel(ctx), s.Hot,
		[]string{s.Keys.Idem(cid, requestID), s.Keys.Pending(cid), s.Keys.Recent(cid)},
		member, s.Clock().UnixMilli(), core.RecentWindow.Milliseconds()).Int64()
	if err != nil {
		s.Log.Warn("confirm a reservation; the sweeper will", "campaign", cid, "err", err)
		return false
	}
	return n == 0
}

// ConfirmCommitted confirms the reservation of a committed coupon row. When
// Redis had lost the reservation meanwhile, it rebuilds the campaign's
// counters from the database, which now holds the row: nothing else would
// tell Redis that this slot is taken.
func (s *Claims) ConfirmCommitted(ctx context.Context, cid int64, requestID, member string) {
	if !s.confirm(ctx, cid, requestID, member) {
		return
	}
	s.Log.Warn("Redis lost a reservation while its row was written; resynchronising the campaign", "campaign", cid)
	if err := s.Resync(context.WithoutCancel(ctx), cid); err != nil {
		s.Log.Warn("resynchronise the campaign; reconciliation will", "campaign", cid, "err", err)
	}
}

// release gives back a reservation that will not be written. On failure the
// sweeper gives it back later.
// It reports whether this call gave it back (not another caller before it).
func (s *Claims) ReleaseReservation(ctx context.Context, cid, tid int64, requestID, member string) (released bool) {
	defer core.Observe(ctx, s.Meter.ScriptSeconds.WithLabelValues("release"), "release", time.Now())
	n, err := lua.Release.Run(context.WithoutCancel(ctx), s.Hot, s.Keys.ClaimKeys(cid, tid, requestID), member).Int64()
	s.SoldOut.Forget(tid)
	if err != nil {
		s.Log.Warn("give back a reservation; the sweeper will", "campaign", cid, "err", err)
	}
	return n == 1
}

// couponExists tells the sweeper whether a claim's row was written. The
// template counts: a row with the same key in another template is an earlier
// claim whose key this one reused, and this reservation was never written.
func (s *Claims) couponExists(ctx context.Context, tid int64, requestID string) (bool, error) {
	var n int64
	err := s.DB.WithContext(ctx).Model(&models.Coupon{}).Where("request_id = ? AND template_id = ?", requestID, tid).
		Count(&n).Error
	return n > 0, err
}
