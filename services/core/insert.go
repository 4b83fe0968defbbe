package core

import (
	"errors"

	"github.com/couponsvc/couponsvc/models"

	"gorm.io/gorm"
)

// InsertRow runs one INSERT of a single row inside tx and returns the id
// the database gave it. The statement is written out by its caller, so
// that the hot paths' rows (the use log, the audit entry, one event) skip
// gorm's reflection of a model on every request; it still runs through
// gorm's raw chain, where the statement logs and the transaction see it
// (docs/statements.md, "How it is counted"). It is the same SQL on SQLite
// and MySQL: both give the id of an AUTO INCREMENT / INTEGER PRIMARY KEY
// row through LastInsertId.
func InsertRow(tx *gorm.DB, sql string, args ...any) (int64, error) {
	r := gorm.WithResult()
	if err := tx.Clauses(r).Exec(sql, args...).Error; err != nil {
		return 0, err
	}
	if r.Result == nil {
		return 0, errors.New("insert: the driver returned no result")
	}
	return r.Result.LastInsertId()
}

// InsertUseLog inserts lg as a new row and sets its id: gorm's Create of
// models.UseLog, written out (InsertRow).
func InsertUseLog(tx *gorm.DB, lg *models.UseLog) error {
	id, err := InsertRow(tx, `INSERT INTO coupon_use_log
		(coupon_id, order_id, user_id, template_id, order_amount_cents, discount_cents, cashier, used_at, undo_flag, undone_at, payable_cents, actions)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		lg.CouponID, lg.OrderID, lg.UserID, lg.TemplateID, lg.OrderAmountCents, lg.DiscountCents, lg.Cashier, lg.UsedAt,
		lg.UndoFlag, lg.UndoneAt, lg.PayableCents, lg.Actions)
	if err != nil {
		return err
	}
	lg.ID = id
	return nil
}

// InsertEvent inserts one outbox row and sets its id: gorm's Create of
// models.Event, written out (InsertRow).
func InsertEvent(tx *gorm.DB, ev *models.Event) error {
	id, err := InsertRow(tx, `INSERT INTO events (type, created_at, data) VALUES (?, ?, ?)`,
		ev.Type, ev.CreatedAt, []byte(ev.Data))
	if err != nil {
		return err
	}
	ev.ID = id
	return nil
}
