package codes

import (
	"bufio"
	"context"
	"database/sql"
	"io"
	"strconv"
	"time"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"
)

// exportPage is the coupons read from the database at once by an export:
// the export holds one page in memory, whatever the template's size.
const exportPage = 1000

// ExportFilter narrows an export: Status is an effective status (issued,
// held, used, revoked, expired; empty: all), From and To bound claimed_at
// (From included, To excluded; zero: open).
type ExportFilter struct {
	Status   string
	From, To time.Time
}

// ExportHeader is the first line of a coupons export.
const ExportHeader = "code,user_id,status,slot,claimed_at,valid_from,valid_until,used_at,order_id"

// CheckExport validates an export before anything is written, so that a bad
// request is answered 400 rather than with a cut file. Errors:
// CodeInvalidRequest (status, to), CodeNotFound, CodeUnavailable.
func (s *Codes) CheckExport(ctx context.Context, tid int64, f ExportFilter) error {
	switch f.Status {
	case "", models.CouponIssued, models.CouponHeld, models.CouponUsed, models.CouponRevoked, models.CouponExpired:
	default:
		return models.Invalid("status", "must be issued, held, used, revoked or expired")
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.To.After(f.From) {
		return models.Invalid("to", "must be after from")
	}
	_, err := s.GetTemplate(ctx, tid)
	return err
}

// ExportCoupons writes every coupon of the template that the filter keeps
// to w as CSV (ExportHeader first), in id order. It reads the database a
// page at a time by id (keyset), and flushes each page to w, so its memory
// stays the same for ten coupons or ten million (docs/jobs.md). Call
// CheckExport first. Errors: CodeUnavailable; an error after the first page
// leaves w with a cut file, which the caller can only end. The export takes
// at most Config.ExportBudget: past it, CodeUnavailable saying so.
func (s *Codes) ExportCoupons(ctx context.Context, tid int64, f ExportFilter, w io.Writer) (int64, error) {
	ctx, cancel := core.WithBudget(ctx, s.cfg.ExportBudget)
	defer cancel()
	n, err := s.exportCoupons(ctx, tid, f, w)
	return n, core.BudgetError(ctx, err, "export", s.cfg.ExportBudget)
}

// exportCoupons is ExportCoupons within its budget.
func (s *Codes) exportCoupons(ctx context.Context, tid int64, f ExportFilter, w io.Writer) (int64, error) {
	now := s.Clock()
	bw := bufio.NewWriterSize(w, 64<<10)
	cw := core.NewCSVWriter(bw)
	if _, err := bw.WriteString(ExportHeader + "\n"); err != nil {
		return 0, err
	}
	where, extra := f.where(now)
	query := "SELECT id, code, user_id, status, slot, claimed_at, valid_from, valid_until, used_at, order_id " +
		"FROM user_coupons WHERE " + where + " ORDER BY id LIMIT " + strconv.Itoa(exportPage)
	var (
		after, n int64
		rec      = make([]string, 9)
		c        models.Coupon
		slot     sql.NullInt64
		usedAt   sql.NullTime
		orderID  sql.NullString
	)
	for {
		rows, err := s.DB.WithContext(ctx).Raw(query, append([]any{tid, after}, extra...)...).Rows()
		if err != nil {
			return n, core.DBError("coupons", err)
		}
		got := 0
		for rows.Next() {
			if err := rows.Scan(&c.ID, &c.Code, &c.UserID, &c.Status, &slot, &c.ClaimedAt, &c.ValidFrom, &c.ValidUntil,
				&usedAt, &orderID); err != nil {
				rows.Close()
				return n, core.DBError("coupons", err)
			}
			got++
			after = c.ID
			rec[0], rec[1], rec[2] = c.Code, c.UserID, c.EffectiveStatus(now)
			rec[3] = ""
			if slot.Valid {
				rec[3] = strconv.FormatInt(slot.Int64, 10)
			}
			rec[4], rec[5], rec[6] = stamp(c.ClaimedAt), stamp(c.ValidFrom), stamp(c.ValidUntil)
			rec[7], rec[8] = "", orderID.String
			if usedAt.Valid {
				rec[7] = stamp(usedAt.Time)
			}
			if err := cw.Write(rec); err != nil {
				rows.Close()
				return n, err
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return n, core.DBError("coupons", err)
		}
		n += int64(got)
		cw.Flush()
		if err := cw.Error(); err != nil {
			return n, err
		}
		if err := bw.Flush(); err != nil {
			return n, err
		}
		if got < exportPage {
			return n, nil
		}
	}
}

// where is the condition of the coupons of a template (first argument)
// above an id (second) that the filter keeps at now (the rest of extra):
// status is the effective status, so an issued coupon past valid_until is
// expired.
func (f ExportFilter) where(now time.Time) (where string, extra []any) {
	where = "template_id = ? AND id > ?"
	switch f.Status {
	case "":
	case models.CouponIssued:
		where += " AND status = ? AND valid_until > ?"
		extra = append(extra, models.CouponIssued, now)
	case models.CouponExpired:
		where += " AND status = ? AND valid_until <= ?"
		extra = append(extra, models.CouponIssued, now)
	default:
		where += " AND status = ?"
		extra = append(extra, f.Status)
	}
	if !f.From.IsZero() {
		where += " AND claimed_at >= ?"
		extra = append(extra, f.From.UTC())
	}
	if !f.To.IsZero() {
		where += " AND claimed_at < ?"
		extra = append(extra, f.To.UTC())
	}
	return where, extra
}

// ListCoupons is one cursor page of a template's coupons that the filter
// keeps (docs/paging.md): those whose id is above after, in increasing id,
// at most limit, each with its effective status and the template's
// currency; next is the after of the next page, 0 on the last. One SELECT
// of at most limit+1 rows, by the primary key, whatever the template's size.
// Errors: CodeInvalidRequest (status, to), CodeNotFound, CodeUnavailable.
func (s *Codes) ListCoupons(ctx context.Context, tid int64, f ExportFilter, after int64, limit int) (page []models.CouponView, next int64, err error) {
	if err := s.CheckExport(ctx, tid, f); err != nil {
		return nil, 0, err
	}
	t, err := s.GetTemplate(ctx, tid)
	if err != nil {
		return nil, 0, err
	}
	now := s.Clock()
	where, extra := f.where(now)
	var cs []models.Coupon
	if err := s.DB.WithContext(ctx).Where(where, append([]any{tid, after}, extra...)...).
		Order("id").Limit(limit + 1).Find(&cs).Error; err != nil {
		return nil, 0, core.DBError("coupons", err)
	}
	if len(cs) > limit {
		cs = cs[:limit]
		next = cs[limit-1].ID
	}
	page = make([]models.CouponView, len(cs))
	for i := range cs {
		page[i] = cs[i].View(now, t.Currency)
	}
	return page, next, nil
}

// stamp formats a time of an export (RFC 3339, UTC).
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
