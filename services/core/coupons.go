package core

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/couponsvc/couponsvc/lua"
	"github.com/couponsvc/couponsvc/models"

	"github.com/bsm/redislock"
	"gorm.io/gorm"
)

// The coupon lock (redeem, refund, revoke) is tried lockRetries more times,
// lockRetryInterval apart, before the request is answered busy: long enough to
// queue behind one checkout, short enough that a cashier is never kept waiting.
// lockWait bounds the whole wait, Redis round trips included.
const (
	lockRetries       = 10
	lockRetryInterval = 20 * time.Millisecond
	lockWait          = time.Second
)

// MaxCouponAttempts bounds how often one redeem, refund or revoke reads the
// coupon again and decides anew after its guarded write changed nothing (the
// coupon changed under it), hit a deadlock, or hit the use log's unique index.
const MaxCouponAttempts = 5

// returnKeyTTL is how long coupon_return.lua remembers that a coupon's slot
// went back. The database changes a slot to NULL once, so the key only has to
// outlive retries of the script call itself.
const returnKeyTTL = 24 * time.Hour

// MaxUserCoupons bounds the coupons ListUserCoupons returns (newest first).
const MaxUserCoupons = 1000

// ErrRetry asks a coupon operation's loop to read the coupon again and decide
// anew: the guarded UPDATE matched no row, the transaction deadlocked, or a
// unique index refused a row. The transaction was rolled back as a whole.
var ErrRetry = errors.New("the coupon changed under this request")

// ErrRaced is returned inside a transaction whose guarded UPDATE matched no
// row, so that the transaction rolls back.
var ErrRaced = errors.New("guarded update matched no row")

// CouponDetail is a coupon, with its effective status, and its template.
type CouponDetail struct {
	Coupon   models.CouponView `json:"coupon"`
	Template models.Template   `json:"template"`
}

// GetCoupon returns the coupon with that code and its template. The code is
// checked (field "code") before any lookup.
// Errors: CodeInvalidRequest, CodeNotFound, CodeUnavailable.
func (s *Core) GetCoupon(ctx context.Context, code string) (*CouponDetail, error) {
	code, err := models.ParseCouponCode("code", code)
	if err != nil {
		return nil, err
	}
	c, err := s.CouponByCode(ctx, code)
	if err != nil {
		return nil, err
	}
	t, err := s.GetTemplate(ctx, c.TemplateID)
	if err != nil {
		return nil, err
	}
	return &CouponDetail{Coupon: c.View(s.Clock(), t.Currency), Template: *t}, nil
}

// ListUserCoupons returns a user's coupons, newest first (at most 1000), each
// with its effective status: an issued coupon past valid_until is "expired".
// Errors: CodeInvalidRequest, CodeUnavailable.
func (s *Core) ListUserCoupons(ctx context.Context, userID string) ([]models.CouponView, error) {
	if err := models.ValidateUserID("user_id", userID); err != nil {
		return nil, err
	}
	var cs []models.Coupon
	err := s.DB.WithContext(ctx).Where("user_id = ?", userID).
		Order("claimed_at DESC, id DESC").Limit(MaxUserCoupons).Find(&cs).Error
	if err != nil {
		return nil, DBError("coupons", err)
	}
	currencies, err := s.TemplateCurrencies(ctx, cs)
	if err != nil {
		return nil, err
	}
	now := s.Clock()
	out := make([]models.CouponView, len(cs))
	for i := range cs {
		out[i] = cs[i].View(now, currencies[cs[i].TemplateID])
	}
	return out, nil
}

// TemplateCurrency is the currency of a template's amounts (a template's
// currency never changes: its campaign's changes only while it has no
// template), read through the template cache.
// Errors: CodeNotFound, CodeUnavailable.
func (s *Core) TemplateCurrency(ctx context.Context, templateID int64) (string, error) {
	t, err := s.Template(ctx, templateID)
	if err != nil {
		return "", err
	}
	return t.Currency, nil
}

// TemplateCurrencies is the currency of each template of the coupons, by
// template id, in one read.
// Errors: CodeUnavailable.
func (s *Core) TemplateCurrencies(ctx context.Context, cs []models.Coupon) (map[int64]string, error) {
	out, err := TemplateCurrenciesIn(s.DB.WithContext(ctx), cs)
	if err != nil {
		return nil, DBError("templates", err)
	}
	return out, nil
}

// TemplateCurrenciesIn is TemplateCurrencies read through db (inside a
// transaction: its own connection).
func TemplateCurrenciesIn(db *gorm.DB, cs []models.Coupon) (map[int64]string, error) {
	out := map[int64]string{}
	ids := make([]int64, 0, 4)
	for _, c := range cs {
		if _, seen := out[c.TemplateID]; !seen {
			out[c.TemplateID] = ""
			ids = append(ids, c.TemplateID)
		}
	}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		ID       int64
		Currency string
	}
	if err := db.Table("templates").Select("id, currency").Where("id IN ?", ids).Scan(&rows).Error; err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[r.ID] = r.Currency
	}
	return out, nil
}

// ListCashierRedemptions returns the newest redemptions a cashier made, at most
// limit (100 when limit is out of 1..1000), refunded ones included (undo_flag).
// Errors: CodeUnavailable.
func (s *Core) ListCashierRedemptions(ctx context.Context, cashier string, limit int) ([]models.UseLog, error) {
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	var out []models.UseLog
	err := s.DB.WithContext(ctx).Where("cashier = ?", ActorName(cashier)).
		Order("used_at DESC, id DESC").Limit(limit).Find(&out).Error
	return out, DBError("redemptions", err)
}

// CouponByCode reads a coupon by its (parsed) code. It is the first read
// of every hold, confirm and redemption: the row is scanned straight into
// models.Coupon (CouponColumns), without gorm's reflection of it; the one
// SELECT still runs through gorm's chain (docs/statements.md).
func (s *Core) CouponByCode(ctx context.Context, code string) (*models.Coupon, error) {
	rs, err := s.DB.WithContext(ctx).Raw(`SELECT `+CouponColumns+` FROM user_coupons WHERE code = ? LIMIT 1`, code).Rows()
	if err != nil {
		return nil, DBError("coupon", err)
	}
	defer rs.Close()
	if !rs.Next() {
		if err := rs.Err(); err != nil {
			return nil, DBError("coupon", err)
		}
		return nil, NoSuchCoupon(code, gorm.ErrRecordNotFound)
	}
	var c models.Coupon
	if err := ScanCoupon(rs, &c); err != nil {
		return nil, DBError("coupon", err)
	}
	return &c, nil
}

// CouponColumns are every column of user_coupons, in the order ScanCoupon
// reads them (TestCouponColumnsAreTheModels holds them to models.Coupon).
const CouponColumns = `id, code, template_id, campaign_id, user_id, status, slot, user_ordinal, request_id, value_cents,
	claimed_at, valid_from, valid_until, used_at, order_id, hold_expires_at, claim_order_id, version, updated_at`

// ScanCoupon reads one row of CouponColumns into c.
func ScanCoupon(rs interface{ Scan(...any) error }, c *models.Coupon) error {
	return rs.Scan(&c.ID, &c.Code, &c.TemplateID, &c.CampaignID, &c.UserID, &c.Status, &c.Slot, &c.UserOrdinal, &c.RequestID,
		&c.ValueCents, &c.ClaimedAt, &c.ValidFrom, &c.ValidUntil, &c.UsedAt, &c.OrderID, &c.HoldExpiresAt, &c.ClaimOrderID,
		&c.Version, &c.UpdatedAt)
}

// NoSuchCoupon is the answer to a code no coupon has; validation gives it
// for another user's coupon too, word for word (docs/checkout.md).
func NoSuchCoupon(code string, cause error) *models.Error {
	return &models.Error{Code: models.CodeNotFound, Message: fmt.Sprintf("no coupon has the code %s", code), Err: cause}
}

// CouponByID reads a coupon afresh (outside any transaction, so that MySQL
// answers from the latest committed state).
func (s *Core) CouponByID(ctx context.Context, id int64) (*models.Coupon, error) {
	return ByID[models.Coupon](ctx, s.DB, "coupon", id)
}

// UseLog reads the use log row of a coupon and an order; found is false when
// there is none.
func (s *Core) UseLog(ctx context.Context, couponID int64, orderID string) (lg models.UseLog, found bool, err error) {
	err = s.DB.WithContext(ctx).Where("coupon_id = ? AND order_id = ?", couponID, orderID).Limit(1).Find(&lg).Error
	if err != nil {
		return lg, false, DBError("use log", err)
	}
	return lg, lg.ID != 0, nil
}

// WithCouponLock runs op under the coupon's redislock mutex. op decides on the
// coupon it is given and writes with a guarded UPDATE; when it answers errRetry
// it runs again on a fresh read, at most maxCouponAttempts times. The first
// run gets c, read by the caller just before, when the lock was free at once
// (the usual checkout): a stale c is harmless, since the guarded UPDATE then
// matches nothing and op runs again on a fresh read. After waiting for the
// lock the coupon has likely changed, so even the first run reads it afresh.
//
// The lock only saves work (a queue of one checkout instead of many doomed
// transactions): correctness comes from the guarded UPDATEs and the use log's
// unique index, so a lock that expires while held, or is deleted, never leads
// to a double use. Errors: CodeBusy (lock not obtained in time, or the coupon
// kept changing), CodeUnavailable, and whatever op returns.
func (s *Core) WithCouponLock(ctx context.Context, c *models.Coupon, op func(cur *models.Coupon) error) error {
	lock, waited, err := s.LockCoupon(ctx, c)
	if err != nil {
		return err
	}
	defer func() {
		err := lock.Release(context.WithoutCancel(ctx))
		switch {
		case errors.Is(err, redislock.ErrLockNotHeld):
			s.Log.Info("a coupon lock expired before it was released; the guarded update kept the outcome exact",
				"coupon", c.ID)
		case err != nil:
			s.Log.Warn("release a coupon lock; it expires by itself", "coupon", c.ID, "err", err)
		}
	}()
	cur := c
	for attempt := 1; ; attempt++ {
		if waited || attempt > 1 {
			if cur, err = s.CouponByID(ctx, c.ID); err != nil {
				return err
			}
		}
		err = op(cur)
		if !errors.Is(err, ErrRetry) {
			return err
		}
		if attempt == MaxCouponAttempts {
			return &models.Error{Code: models.CodeBusy, RetryAfterSeconds: 1, Err: err,
				Message: "this coupon kept changing while the request ran, try again"}
		}
		select {
		case <-ctx.Done():
			return models.Unavailable("the database", ctx.Err())
		case <-time.After(time.Duration(attempt) * 5 * time.Millisecond):
		}
	}
}

// ChangeCoupon runs op under the coupon's lock (see withCouponLock) and, once
// it committed, gives back to Redis the stock of the coupon op returns: the
// coupon as it was before a change that freed its slot, or nil.
func (s *Core) ChangeCoupon(ctx context.Context, c *models.Coupon, op func(cur *models.Coupon) (returned *models.Coupon, err error)) error {
	var returned *models.Coupon
	err := s.WithCouponLock(ctx, c, func(cur *models.Coupon) error {
		var err error
		returned, err = op(cur)
		return err
	})
	if err != nil {
		return err
	}
	if returned != nil {
		s.ReturnStock(ctx, returned)
	}
	return nil
}

// LockCoupon takes the coupon's lock, waiting for it a bounded time; waited
// says it was held by another request when first asked for.
func (s *Core) LockCoupon(ctx context.Context, c *models.Coupon) (lock *redislock.Lock, waited bool, err error) {
	defer Observe(ctx, s.Meter.LockWaitSeconds, "lock", time.Now())
	key := s.Keys.couponLock(c.CampaignID, c.ID)
	lock, err = s.Locker.Obtain(ctx, key, s.Cfg.CouponLockTTL, nil)
	if errors.Is(err, redislock.ErrNotObtained) {
		waited = true
		obtainCtx, cancel := context.WithTimeout(ctx, lockWait)
		lock, err = s.Locker.Obtain(obtainCtx, key, s.Cfg.CouponLockTTL, &redislock.Options{
			RetryStrategy: redislock.LimitRetry(redislock.LinearBackoff(lockRetryInterval), lockRetries),
		})
		cancel()
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			err = redislock.ErrNotObtained // not obtained in the time we wait for it
		}
	}
	if err != nil {
		return nil, waited, RedisError(err) // ErrNotObtained is CodeBusy with Retry-After
	}
	return lock, waited, nil
}

// TxOutcome sorts the error of a coupon transaction: the guarded UPDATE lost
// the race, a deadlock or a unique index violation → errRetry (the whole
// transaction was rolled back; decide again on a fresh read); anything else is
// translated at the boundary.
func TxOutcome(what string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrRaced) || IsDeadlock(err) {
		return fmt.Errorf("%w: %v", ErrRetry, err)
	}
	if index, ok := UniqueViolation(err); ok && index == UniqueUseLog {
		return fmt.Errorf("%w: %v", ErrRetry, err)
	}
	return DBError(what, err)
}

// ReturnStock gives a coupon's slot, budget value and user ordinal back to the
// Redis pool after the database commit that set them to NULL
// (coupon_return.lua, idempotent through its own key). When Redis fails here,
// or the process dies between the commit and this call, the database already
// shows the slot free: reconciliation (and any reload of the campaign's
// counters) repairs Redis, and until then the pool holds one coupon less than
// it could, never one more.
//
// A coupon that holds no ordinal (a bearer coupon, an anonymous shopper's
// claim with a shared code: docs/shared-codes.md) gives back its slot and
// budget value and no user's ordinal (ordinal 0 to the script).
func (s *Core) ReturnStock(ctx context.Context, c *models.Coupon) {
	if c.Slot == nil {
		return
	}
	ordinal := int64(0)
	if c.UserOrdinal != nil {
		ordinal = *c.UserOrdinal
	}
	cid, tid := c.CampaignID, c.TemplateID
	ks := []string{s.Keys.Budget(cid), s.Keys.Template(cid, tid), s.Keys.Free(cid, tid), s.Keys.Users(cid, tid),
		s.Keys.returned(cid, c.ID)}
	code, err := lua.Return.Run(context.WithoutCancel(ctx), s.Rdb, ks, c.UserID, *c.Slot, ordinal,
		c.ValueCents, int64(returnKeyTTL.Seconds())).Int64()
	s.SoldOut.Forget(tid)
	if err != nil {
		s.Log.Error("give a coupon's stock back to Redis; reconciliation will repair", "coupon", c.ID,
			"template", tid, "slot", *c.Slot, "err", err)
		return
	}
	if code != lua.ReturnDone {
		s.Log.Info("coupon stock already back in Redis", "coupon", c.ID, "template", tid, "return_code", code)
	}
}

// ValidateOrderID checks an order id by the one rule, models.ValidateOrderID
// (docs/checkout.md, "Order ids").
func ValidateOrderID(s string) error {
	return models.ValidateOrderID("order_id", s)
}

// ActorName fits who acted (a username or "token:<name>") into the 100
// characters of the cashier and actor columns.
func ActorName(s string) string {
	if s == "" {
		return "unknown"
	}
	if utf8.RuneCountInString(s) <= 100 {
		return s
	}
	return string([]rune(s)[:100])
}

// FormatTime shows a time to people (UTC, RFC 3339).
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// DropOrderCoupons removes coupons from the order's live coupons and gives
// their room back, inside tx, after taking the order's row lock (lockOrder).
func DropOrderCoupons(tx *gorm.DB, orderID string, ids []int64, now time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	if err := lockOrder(tx, orderID, now); err != nil {
		return err
	}
	return DropLockedOrderCoupons(tx, orderID, ids, now)
}

// DropLockedOrderCoupons is DropOrderCoupons inside a tx that holds the
// order's row lock already: its first statement was a guarded UPDATE of
// the row (a release, an expiry), so no second UPDATE takes it again
// (docs/statements.md, "Release and expiry").
func DropLockedOrderCoupons(tx *gorm.DB, orderID string, ids []int64, now time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	res := tx.Exec(`DELETE FROM order_coupons WHERE order_id = ? AND coupon_id IN ?`, orderID, ids)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return nil
	}
	return tx.Exec(`UPDATE checkout_orders SET coupons = coupons - ?, updated_at = ? WHERE order_id = ?`,
		res.RowsAffected, now, orderID).Error
}

// lockOrder takes the order's row lock inside tx. Every transaction that
// touches an order's tables takes its checkout_orders row first, then
// order_coupons, then user_coupons, then coupon_use_log (docs/checkout.md,
// "Lock order"): two flows on one order then wait for each other instead of
// deadlocking. A flow whose first statement is a guarded UPDATE of the row
// (hold, confirm, release, expiry, a return) has the lock already; refund
// and revoke, which start from a coupon, call this first. An order without
// a row (redeemed before checkout_orders existed and not backfilled) has no
// lock to take and nothing of the order's to change.
func lockOrder(tx *gorm.DB, orderID string, now time.Time) error {
	return tx.Exec(`UPDATE checkout_orders SET updated_at = ? WHERE order_id = ?`, now, orderID).Error
}
