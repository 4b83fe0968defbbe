package codes

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/lua"
	"github.com/couponsvc/couponsvc/models"

	"gorm.io/gorm"
)

// MaxGenerateCount bounds the codes of one generation job.
const MaxGenerateCount = 1_000_000

// maxCodeDraws bounds how often a batch is written again with fresh codes
// after one collided with an existing code (likely only with patterns near
// 40 bits and millions of codes).
const maxCodeDraws = 5

// insertRows is the rows of one multi-row INSERT of bearer coupons: 7
// parameters a row, far below MySQL's and SQLite's limits on parameters.
const insertRows = 1000

// StartGenerate queues a job that makes count bearer coupons (docs/jobs.md),
// each from pattern (empty: the plain random code). The stock and budget
// must cover them now; claims that take stock while the job runs may leave
// the last rows refused (counted in errors, the reason in the job's message).
// Errors: CodeInvalidRequest (count, pattern), CodeNotFound,
// CodeNotClaimable (the template is archived or its coupons expired, see
// mintRefusal), CodeSoldOut, CodeBudgetExhausted, CodeUnavailable.
func (s *Codes) StartGenerate(ctx context.Context, actor string, tid, count int64, pattern string) (*models.Job, error) {
	if count < 1 || count > MaxGenerateCount {
		return nil, models.Invalid("count", "must be between 1 and %d", MaxGenerateCount)
	}
	if _, err := models.ParsePattern("pattern", pattern); err != nil {
		return nil, err
	}
	t, err := s.liveTemplate(ctx, tid)
	if err != nil {
		return nil, err
	}
	if err := s.checkStockFor(ctx, t, count); err != nil {
		return nil, err
	}
	return s.createJob(ctx, &models.Job{Kind: models.JobGenerate, TemplateID: tid, Params: pattern, Total: count, Actor: actor}, nil)
}

// checkStockFor refuses a job that needs more stock or budget than is left.
func (s *Codes) checkStockFor(ctx context.Context, t *models.Template, n int64) error {
	if err := s.EnsureLoaded(ctx, t.CampaignID, t.ID); err != nil {
		return err
	}
	remaining, err := s.Rdb.HGet(ctx, s.Keys.Template(t.CampaignID, t.ID), "remaining").Int64()
	if core.IsRedisNil(err) {
		// The counters just loaded are gone: most likely the template was
		// deleted meanwhile, which the database says.
		if _, gone := s.GetTemplate(ctx, t.ID); gone != nil {
			return gone
		}
	}
	if err != nil {
		return core.RedisError(err)
	}
	if n > remaining {
		return models.Errorf(models.CodeSoldOut, "only %d coupons of this template are left; add stock first", remaining)
	}
	budget, err := s.Rdb.Get(ctx, s.Keys.Budget(t.CampaignID)).Int64()
	if err != nil {
		return core.RedisError(err)
	}
	if v := t.ValueCents(); budget >= 0 && v > 0 && n > budget/v {
		return models.Errorf(models.CodeBudgetExhausted, "the campaign's budget is left for %d coupons of this template", budget/v)
	}
	return nil
}

// takeSlots takes up to n slots of t's stock in Redis (coupon_take.lua).
// why says what ran out when fewer came back. Call it under lockBatch.
func (s *Codes) takeSlots(ctx context.Context, t *models.Template, n int) (slots []int64, why string, err error) {
	ks := []string{s.Keys.Budget(t.CampaignID), s.Keys.Template(t.CampaignID, t.ID), s.Keys.Free(t.CampaignID, t.ID)}
	vals, err := lua.Take.Run(ctx, s.Rdb, ks, n, t.ValueCents()).Slice()
	if err != nil {
		return nil, "", core.RedisError(err)
	}
	switch code, _ := vals[0].(int64); code {
	case lua.TakeDone:
	case lua.TakeNotLoaded:
		// Lost since lockBatch checked: the job stops, and resumes once
		// the claim path or the reconciler reloaded them.
		return nil, "", models.Unavailable("Redis", fmt.Errorf("campaign counters lost during a job"))
	default:
		return nil, "", fmt.Errorf("coupon_take.lua answered %v", vals)
	}
	why, _ = vals[3].(string)
	first, _ := vals[4].(int64)
	last, _ := vals[5].(int64)
	slots = make([]int64, 0, n)
	for _, v := range vals[6:] {
		slot, _ := v.(int64)
		slots = append(slots, slot)
	}
	for slot := first; slot <= last; slot++ {
		slots = append(slots, slot)
	}
	return slots, why, nil
}

// lockBatch loads t's counters if Redis lost them, then takes the
// campaign's load lock for one batch, from the slots it takes in Redis to
// the commit of its rows: no load of the counters from the database (a
// resync, a repair) can run in between and free the slots the batch holds
// but has not written yet (docs/jobs.md).
func (s *Codes) lockBatch(ctx context.Context, t *models.Template) (unlock func(), err error) {
	if err := s.EnsureLoaded(ctx, t.CampaignID, t.ID); err != nil {
		return nil, err
	}
	lock, err := s.LockCampaign(ctx, t.CampaignID, nil)
	if err != nil {
		return nil, err
	}
	return func() { _ = lock.Release(context.WithoutCancel(ctx)) }, nil
}

// refusalWord is the reason of rows refused for want of stock or budget.
func refusalWord(why string) string {
	if why == "budget_exhausted" {
		return why
	}
	return "over_stock"
}

// runGenerate writes the job's remaining codes, a batch per transaction.
func (s *Codes) runGenerate(ctx context.Context, run *jobRun) error {
	j, t := run.job, run.t
	p, err := models.ParsePattern("pattern", j.Params)
	if err != nil {
		return err
	}
	random := make([]byte, s.cfg.JobBatch*p.Random())
	for j.Done < j.Total {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		n := int(min(int64(s.cfg.JobBatch), j.Total-j.Done))
		if err := s.checkLive(ctx, run); err != nil {
			return err
		}
		unlock, err := s.lockBatch(ctx, t)
		if err != nil {
			return err
		}
		slots, why, err := s.takeSlots(ctx, t, n)
		if err != nil {
			unlock()
			return err
		}
		rows := make([]bearerRow, len(slots))
		var refused int64
		message := ""
		if len(slots) < n {
			// Claims took the stock meanwhile: what is left of the job
			// cannot be made.
			refused = j.Total - j.Done - int64(len(slots))
			message = fmt.Sprintf("%d codes not made: %s", refused, refusalWord(why))
		}
		var result []byte
		for draw := 1; ; draw++ {
			result, err = s.fillCodes(p, random, rows, slots, j)
			if err != nil {
				unlock()
				return err
			}
			err = s.commitBearer(ctx, run, rows, int64(len(rows))+refused, refused, result, message)
			if index, ok := core.UniqueViolation(err); ok && index == core.UniqueCode && draw < maxCodeDraws {
				continue // a code collided: draw the batch's codes again
			}
			break
		}
		unlock()
		if err != nil {
			return s.batchFailed(ctx, t, err)
		}
		if err := s.committed(run, int64(len(rows))+refused, refused, result, message); err != nil {
			return err
		}
	}
	return nil
}

// batchFailed settles a batch that did not commit: the slots it took in
// Redis go back by rebuilding the campaign's counters from the database
// when another runner has the job or the job ends for its template no
// longer being live; otherwise the job stops, and the pass that resumes it
// rebuilds them.
func (s *Codes) batchFailed(ctx context.Context, t *models.Template, err error) error {
	if err == errLeaseLost || isNotLive(err) {
		if rerr := s.Resync(context.WithoutCancel(ctx), t.CampaignID); rerr != nil {
			s.Log.Warn("resynchronise after a lost job lease; reconciliation will", "campaign", t.CampaignID, "err", rerr)
		}
		return err
	}
	return core.DBError("coupons", err)
}

// fillCodes draws a code for each row from p and returns the batch's result
// CSV (one code a line).
func (s *Codes) fillCodes(p models.Pattern, random []byte, rows []bearerRow, slots []int64, j *models.Job) ([]byte, error) {
	random = random[:len(rows)*p.Random()]
	if _, err := io.ReadFull(s.cfg.Rand, random); err != nil {
		return nil, fmt.Errorf("randomness: %w", err)
	}
	out := make([]byte, 0, len(rows)*(p.Len()+1))
	for i := range rows {
		start := len(out)
		out = p.Fill(out, random[i*p.Random():(i+1)*p.Random()])
		rows[i] = bearerRow{code: string(out[start:]), slot: slots[i], requestID: jobRequestID(j.ID, j.Done+int64(i)+1)}
		out = append(out, '\n')
	}
	return out, nil
}

// jobRequestID is the request id of a job's row: unique, and the same when
// a resumed job writes the row again (it cannot: the batch is committed
// with the job's progress, and the unique index would refuse it).
func jobRequestID(job, row int64) string {
	return "job" + strconv.FormatInt(job, 10) + ":" + strconv.FormatInt(row, 10)
}

// bearerRow is one bearer coupon to insert.
type bearerRow struct {
	code      string
	slot      int64
	requestID string
}

// commitBearer writes a batch of bearer coupons and its progress in one
// transaction: the template is read live under its lock first (lockLive),
// then the rows are inserted (insertBearer) and the batch recorded
// (commitBatch: rows done, errs refused, the result CSV and message).
func (s *Codes) commitBearer(ctx context.Context, run *jobRun, rows []bearerRow, done, errs int64, result []byte, message string) error {
	s.beforeJobCommit(run.job.ID)
	return s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.lockLive(tx, run); err != nil {
			return err
		}
		if err := s.insertBearer(tx, run.t, rows); err != nil {
			return err
		}
		return s.commitBatch(tx, run, done, errs, result, message)
	})
}

// insertBearer writes bearer coupons (user_id ”, no user ordinal) of t in
// multi-row INSERTs inside tx: the fastest way to write many rows that both
// databases share, and all or none with the transaction.
func (s *Codes) insertBearer(tx *gorm.DB, t *models.Template, rows []bearerRow) error {
	now := s.Clock()
	from, until := t.ValidityFor(now, s.Cfg.Location)
	head := "INSERT INTO user_coupons (code, template_id, campaign_id, user_id, status, slot, request_id, value_cents, " +
		"claimed_at, valid_from, valid_until, version, updated_at) VALUES "
	rowSQL := "(?," + strconv.FormatInt(t.ID, 10) + "," + strconv.FormatInt(t.CampaignID, 10) + ",'','" +
		models.CouponIssued + "',?,?," + strconv.FormatInt(t.ValueCents(), 10) + ",?,?,?,0,?)"
	var sql strings.Builder
	args := make([]any, 0, 7*min(len(rows), insertRows))
	for start := 0; start < len(rows); start += insertRows {
		part := rows[start:min(start+insertRows, len(rows))]
		sql.Reset()
		sql.Grow(len(head) + len(part)*(len(rowSQL)+1))
		sql.WriteString(head)
		args = args[:0]
		for i, r := range part {
			if i > 0 {
				sql.WriteByte(',')
			}
			sql.WriteString(rowSQL)
			args = append(args, r.code, r.slot, r.requestID, now, from, until, now)
		}
		if err := tx.Exec(sql.String(), args...).Error; err != nil {
			return err
		}
	}
	return nil
}
