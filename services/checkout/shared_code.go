package checkout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/couponsvc/couponsvc/services/claims"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/events"

	"github.com/couponsvc/couponsvc/models"

	"gorm.io/gorm"
)

// sharedClaim is a shared code of a checkout resolved for one user and
// order (docs/shared-codes.md): the template, and the coupon the code names
// for that order. A fresh claim was just reserved in Redis by
// coupon_deduct.lua and its coupon is not in the database yet: the hold or
// redemption writes it in its own transaction, then confirms the
// reservation, or gives the reservation back when it fails.
type sharedClaim struct {
	code   string
	t      *models.Template
	coupon *models.Coupon
	// rid is the claim's idempotency key (see sharedRequestID).
	rid   string
	fresh bool
	r     claims.Reservation
	// refusal is why a validation found that the code cannot be claimed
	// now (the claim script would refuse it); nil otherwise.
	refusal error
}

// sharedRequestID is the idempotency key of the claim a shared code makes
// for a user in an order: keyed on template, user and order, so that a
// repeat of a hold or redemption meets its first claim (coupon_deduct.lua
// answers duplicate, the database's unique request_id refuses a second
// row). gen counts the claims of that template, user and order given back
// before (released, expired): after a give-back the order may claim again.
// The user and order are hashed to keep the key short.
func sharedRequestID(tid int64, user, order string, gen int64) string {
	return sharedRequestPrefix(tid, user, order) + strconv.FormatInt(gen, 10)
}

// sharedRequestPrefix is what the keys of every generation of a template,
// user and order's claims with a shared code start with.
func sharedRequestPrefix(tid int64, user, order string) string {
	h := sha256.Sum256([]byte(user + "\x00" + order))
	return "shared:" + strconv.FormatInt(tid, 10) + ":" + hex.EncodeToString(h[:16]) + ":"
}

// sharedTemplate returns the template that is not archived whose shared
// code is code (upper case). The answer, either way, is reused for
// TemplateCacheTTL as the template itself is: every checkout with a typed
// code asks it once or twice, and most of them are refused by Redis
// without any other read. Errors: CodeNotFound, CodeUnavailable.
func (s *Checkout) sharedTemplate(ctx context.Context, code string) (*models.Template, error) {
	notFound := models.Errorf(models.CodeNotFound, "no coupon and no shared code %s", code)
	if id, ok := s.Templates.GetShared(code, s.Clock()); ok {
		if id == 0 {
			return nil, notFound
		}
		if t, ok := s.Templates.Get(id, s.Clock()); ok && t.CodeMode == models.CodeModeShared &&
			t.SharedCode == code && t.Status != models.TemplateArchived {
			return &t, nil
		}
	}
	var t models.Template
	err := s.DB.WithContext(ctx).Where("shared_code = ? AND code_mode = ? AND status <> ?",
		code, models.CodeModeShared, models.TemplateArchived).Limit(1).Find(&t).Error
	if err != nil {
		return nil, core.DBError("template", err)
	}
	now := s.Clock()
	s.Templates.PutShared(code, t.ID, now)
	if t.ID == 0 {
		return nil, notFound
	}
	s.Templates.Put(t, now)
	return &t, nil
}

// readsAsShared decides how a typed code is read at checkout. A code of the
// random coupon form is a coupon code. Any other well-formed shared code is
// a shared code when a live template has it; otherwise it is read as a
// coupon code, since imported and patterned coupon codes share its
// alphabet (docs/shared-codes.md). parseErr is the code's error as a
// coupon code: with one, the code can only be a shared code.
// Errors: CodeUnavailable.
func (s *Checkout) readsAsShared(ctx context.Context, raw string, parseErr error) (bool, error) {
	if models.LooksLikeCouponCode(raw) || !models.IsSharedCode(raw) {
		return false, nil
	}
	if parseErr != nil {
		return true, nil
	}
	code, _ := models.ParseSharedCode("coupon_code", raw)
	_, err := s.sharedTemplate(ctx, code)
	switch {
	case err == nil:
		return true, nil
	case models.IsCode(err, models.CodeNotFound):
		return false, nil
	}
	return false, err
}

// anonymousCode checks a code that was read as a shared code: nil when it
// is the shared code of a live template (without a user_id the claim is
// then an anonymous shopper's, docs/shared-codes.md), else the coupon
// code's own error naming field (a mistyped or malformed coupon code), the
// same with a user_id or without.
func (s *Checkout) anonymousCode(ctx context.Context, field, code string) error {
	_, err := s.sharedTemplate(ctx, code)
	switch {
	case err == nil:
		return nil
	case models.IsCode(err, models.CodeNotFound):
		_, perr := models.ParseCouponCode(field, code)
		if perr == nil {
			return err
		}
		return perr
	}
	return err
}

// sharedKey finds the idempotency key of the order's claim with the code
// and the claim's coupon when it is still live (not given back). The live
// claim is looked for by the key, and among the user's claims for the order
// of the templates that had t's code before it (archived, the code given to
// t): a step retried after the code moved is a replay of the first claim,
// not a new one (docs/shared-codes.md, "When the code moves").
func (s *Checkout) sharedKey(ctx context.Context, t *models.Template, user, order string) (rid string, live *models.Coupon, err error) {
	var gen int64
	if err := s.DB.WithContext(ctx).Model(&models.Coupon{}).
		Where("claim_order_id = ? AND template_id = ? AND user_id = ? AND status = ?", order, t.ID, user, models.CouponRevoked).
		Count(&gen).Error; err != nil {
		return "", nil, core.DBError("coupons", err)
	}
	rid = sharedRequestID(t.ID, user, order, gen)
	var c models.Coupon
	if err := s.DB.WithContext(ctx).Where(`claim_order_id = ? AND user_id = ? AND status <> ? AND (request_id = ?
		OR template_id IN (SELECT id FROM templates WHERE shared_code = ? AND code_mode = ? AND id <> ?))`,
		order, user, models.CouponRevoked, rid, t.SharedCode, models.CodeModeShared, t.ID).
		Order("id").Limit(1).Find(&c).Error; err != nil {
		return "", nil, core.DBError("coupon", err)
	}
	if c.ID == 0 {
		return rid, nil, nil
	}
	return rid, &c, nil
}

// claimTemplate resolves template t (the template a shared code names, or
// an automatic offer, code its place-holder: docs/automatic-offers.md) for
// the user and order; user "" is
// an anonymous shopper, whose claim holds no ordinal (docs/shared-codes.md). When the
// order already has a live claim with it (a repeat), that coupon is
// answered. Otherwise, with take, the claim is reserved through
// coupon_deduct.lua (stock, budget, per-user limit, idempotency) and its
// coupon built, not written; without take (a validation) nothing changes:
// the coupon is what a claim would make now, and refusal says why a claim
// would be refused. Errors: CodeNotFound, the claim's refusals (with take),
// CodeInProgress, CodeUnavailable.
func (s *Checkout) claimTemplate(ctx context.Context, t *models.Template, code, user, order string, take bool) (*sharedClaim, error) {
	var err error
	sc := &sharedClaim{code: code, t: t}
	if take && order != "" && s.SoldOut.Refuse(t, user, sharedRequestPrefix(t.ID, user, order), s.Clock()) {
		// Sold out, and this user never claimed with the code for this
		// order (or the memory would know the key's prefix): the script
		// would refuse it too. No database read, no Redis call.
		s.Meter.SoldOutFromMemory.Inc()
		return nil, core.SoldOutRefusal()
	}
	if order != "" {
		var live *models.Coupon
		if sc.rid, live, err = s.sharedKey(ctx, t, user, order); err != nil {
			return nil, err
		}
		if live != nil {
			sc.coupon = live
			return sc, nil
		}
	}
	now := s.Clock().Truncate(time.Microsecond)
	from, until := t.ValidityFor(now, s.Cfg.Location)
	sc.coupon = &models.Coupon{Code: code, TemplateID: t.ID, CampaignID: t.CampaignID, UserID: user,
		Status: models.CouponIssued, ValueCents: t.ValueCents(), ClaimedAt: now, ValidFrom: from, ValidUntil: until,
		RequestID: sc.rid, UpdatedAt: now}
	if !take {
		sc.refusal, err = s.wouldClaim(ctx, t, user, now)
		return sc, err
	}
	// Without a user the shopper is anonymous: stock and budget, no
	// ordinal (docs/shared-codes.md).
	req := claims.ClaimRequest{TemplateID: t.ID, UserID: user, IdempotencyKey: sc.rid, Anonymous: user == ""}
	r, dup, err := s.claims.Reserve(ctx, t, req)
	if err != nil {
		return nil, err
	}
	if dup != "" {
		// Another request of this order is claiming with the code right now.
		return nil, &models.Error{Code: models.CodeInProgress, RetryAfterSeconds: 1,
			Message: fmt.Sprintf("another request of order %s is using the code %s; retry shortly", order, code)}
	}
	sc.fresh, sc.r = true, r
	c, err := s.claims.BuildCoupon(ctx, t, req, r)
	if err != nil {
		s.claims.ReleaseReservation(ctx, t.CampaignID, t.ID, sc.rid, r.Member)
		return nil, err
	}
	c.ClaimOrderID = &order
	sc.coupon = c
	return sc, nil
}

// wouldClaim tells, without taking anything, whether coupon_deduct.lua
// would give the user a coupon of t now: the claim rule, the budget, the
// stock and the user's limit (none for an anonymous shopper, user ""), in
// the script's order, read from the counters. It returns the refusal (nil when the claim would pass); its
// error is a fault.
func (s *Checkout) wouldClaim(ctx context.Context, t *models.Template, user string, now time.Time) (refusal, err error) {
	if err := t.Claimable(now); err != nil {
		return err, nil // refused before any counter is read
	}
	if err := s.EnsureLoaded(ctx, t.CampaignID, t.ID); err != nil {
		return nil, err
	}
	budget := s.Rdb.Get(ctx, s.Keys.Budget(t.CampaignID))
	remaining := s.Rdb.HGet(ctx, s.Keys.Template(t.CampaignID, t.ID), "remaining")
	var held string
	if user != "" {
		h, err := s.Rdb.HGet(ctx, s.Keys.Users(t.CampaignID, t.ID), user).Result()
		if err != nil && !core.IsRedisNil(err) {
			return nil, core.RedisError(err)
		}
		held = h
	}
	b, err := budget.Int64()
	if err != nil {
		return nil, core.RedisError(err)
	}
	left, err := remaining.Int64()
	if err != nil {
		return nil, core.RedisError(err)
	}
	c := core.ClaimCounters{Budget: b, Remaining: left, Value: t.ValueCents(),
		Limit: t.PerUserLimit, Held: core.CountOrdinals(held), Anonymous: user == ""}
	if user != "" {
		cc, err := s.CampaignCapOf(ctx, t.CampaignID)
		if err != nil {
			return nil, err
		}
		if c.CampaignLimit = cc.Limit; cc.Limit > 0 {
			if c.CampaignHeld, err = s.HeldInCampaign(ctx, t.CampaignID, cc, user); err != nil {
				return nil, err
			}
		}
	}
	return core.ClaimDecision(t, false, c, now), nil
}

// claimSharedCodes resolves every shared code of a checkout request for
// its user and order (see claimTemplate), in the request's order. A code
// that names a live claim of the order is replaced in req.CouponCodes by
// that coupon's code, as if it had been typed; a fresh claim's new code
// takes its place too, and its claim is returned at its index. An
// automatic offer (req.auto) is claimed the same way; one whose claim is
// refused is left out of the request (docs/automatic-offers.md). On an
// error every fresh claim made so far is given back.
func (s *Checkout) claimSharedCodes(ctx context.Context, req *CheckoutRequest, take bool) ([]*sharedClaim, error) {
	claims := make([]*sharedClaim, len(req.CouponCodes))
	var drop []bool
	var refused error
	for i, code := range req.CouponCodes {
		if i >= len(req.shared) || !req.shared[i] {
			continue
		}
		t := req.autoAt(i)
		auto := t != nil
		if !auto {
			// A code no live template has is answered as the coupon code it
			// then is (a mistyped code is 400 naming coupon_codes), for an
			// anonymous shopper and a user alike (docs/result-codes.md).
			err := s.anonymousCode(ctx, "coupon_codes", code)
			if err == nil {
				t, err = s.sharedTemplate(ctx, code)
			}
			if err != nil {
				s.dropClaims(ctx, claims)
				return nil, err
			}
		}
		sc, err := s.claimTemplate(ctx, t, code, req.UserID, req.OrderID, take)
		if auto && (claimRefused(err) || err == nil && sc.refusal != nil) {
			if refused = err; err == nil {
				refused = sc.refusal
			}
			// An offer the claim refuses is left out of the cart
			// (docs/automatic-offers.md).
			if drop == nil {
				drop = make([]bool, len(req.CouponCodes))
			}
			drop[i] = true
			req.notApplied = append(req.notApplied, notApplied(t, refused))
			continue
		}
		if err != nil {
			s.dropClaims(ctx, claims)
			return nil, err
		}
		if sc.fresh || !take && sc.coupon.ID == 0 {
			claims[i] = sc
		}
		req.CouponCodes[i] = sc.coupon.Code
	}
	if drop != nil {
		claims = req.dropRefusedOffers(claims, drop)
		if err := noneLeft(req, s.MaxCouponCodes(), refused); err != nil {
			s.dropClaims(ctx, claims)
			return nil, withNotApplied(err, req.notApplied)
		}
	}
	return claims, nil
}

// dropClaims gives back the reservations of fresh claims whose coupons were
// not written.
func (s *Checkout) dropClaims(ctx context.Context, claims []*sharedClaim) {
	for _, sc := range claims {
		if sc != nil && sc.fresh {
			s.claims.ReleaseReservation(ctx, sc.t.CampaignID, sc.t.ID, sc.rid, sc.r.Member)
		}
	}
}

// keepClaims confirms the reservations of fresh claims whose coupons were
// committed.
func (s *Checkout) keepClaims(ctx context.Context, claims []*sharedClaim) {
	for _, sc := range claims {
		if sc != nil && sc.fresh {
			s.claims.ConfirmCommitted(ctx, sc.t.CampaignID, sc.rid, sc.r.Member)
		}
	}
}

// insertClaim writes a fresh claim's coupon inside tx as row says (held or
// used by the order). A unique index that refuses it is sorted: the slot
// or ordinal taken (Redis lost writes: errSlotTaken), the key already
// written (errRaced: decide again), the code taken (a new code, errRaced).
func (s *Checkout) insertClaim(tx *gorm.DB, sc *sharedClaim, row *models.Coupon) error {
	row.ID = 0
	err := tx.Create(row).Error
	if err == nil {
		// The claim's events, as a claim through the API writes them
		// (docs/events.md): coupon.claimed, then sold_out or
		// budget_exhausted when this claim caused them.
		evs := append([]events.NewEvent{{Typ: models.EventCouponClaimed, Data: models.NewCouponEvent(row, sc.t.Currency)}}, claims.ClaimSideEvents(sc.t, sc.r)...)
		return s.events.EmitEvents(tx, evs)
	}
	index, unique := core.UniqueViolation(err)
	switch {
	case !unique:
		return err
	case index == core.UniqueSlot || index == core.UniqueUserOrdinal:
		return fmt.Errorf("%w: %v", claims.ErrSlotTaken, err)
	case index == core.UniqueCode:
		sc.coupon.Code = s.Cfg.NewCode()
	}
	return fmt.Errorf("%w: %v", core.ErrRaced, err)
}

// withSharedClaims runs a checkout step that may claim with shared codes:
// claim (with take), run op, then confirm the claims when op succeeded or
// give them back when it failed. When the database refused a slot or
// ordinal that Redis handed out (Redis lost writes), the campaign is
// rebuilt from the database and the whole step starts again, a bounded
// number of times, as a claim does.
func (s *Checkout) withSharedClaims(ctx context.Context, req *CheckoutRequest, op func(claims []*sharedClaim) error) error {
	// Only a step with a shared code (or an automatic offer) claims, and
	// only a claim starts it again: the usual step of typed codes keeps
	// no copy of its request to start from.
	restartable := slices.Contains(req.shared, true)
	var codes []string
	var shared, noSuch []bool
	var auto []*models.Template
	if restartable {
		codes = append([]string(nil), req.CouponCodes...)
		shared, noSuch, auto = append([]bool(nil), req.shared...), append([]bool(nil), req.noSuch...), append([]*models.Template(nil), req.auto...)
	}
	for attempt := 1; ; attempt++ {
		if restartable {
			req.CouponCodes = append(req.CouponCodes[:0], codes...)
			req.shared, req.noSuch, req.auto = append(req.shared[:0], shared...), append(req.noSuch[:0], noSuch...), append(req.auto[:0], auto...)
		}
		taken, err := s.claimSharedCodes(ctx, req, true)
		if err != nil {
			return err
		}
		err = op(taken)
		if err == nil {
			s.keepClaims(ctx, taken)
			return nil
		}
		s.dropClaims(ctx, taken)
		if !errors.Is(err, claims.ErrSlotTaken) {
			return err
		}
		for _, sc := range taken {
			if sc == nil {
				continue
			}
			s.Log.Warn("database refused a shared-code claim; resynchronising the campaign", "campaign", sc.t.CampaignID,
				"template", sc.t.ID, "attempt", attempt, "err", err)
			if rerr := s.Resync(ctx, sc.t.CampaignID); rerr != nil {
				return rerr
			}
		}
		if attempt == claims.MaxClaimAttempts {
			return models.Unavailable("the claim", err)
		}
	}
}

// bornAt dates a fresh claim's coupon at now, the time of the transaction
// that writes it: its validity counts from then, and the step that prices
// it at now never finds it not yet valid.
func (sc *sharedClaim) bornAt(now time.Time, loc *time.Location) {
	c := sc.coupon
	c.ClaimedAt, c.UpdatedAt = now, now
	c.ValidFrom, c.ValidUntil = sc.t.ValidityFor(now, loc)
}
