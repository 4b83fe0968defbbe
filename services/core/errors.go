package core

import (
	"errors"
	"strings"

	"github.com/couponsvc/couponsvc/models"

	"github.com/bsm/redislock"
	mysqldriver "github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"
)

// Unique indexes whose violation the services act on.
const (
	UniqueCode          = "uq_user_coupons_code"
	UniqueRequest       = "uq_user_coupons_request"
	UniqueSlot          = "uq_user_coupons_slot"
	UniqueUserOrdinal   = "uq_user_coupons_user_ordinal"
	UniqueUseLog        = "uq_use_log_coupon_order"
	UniqueUsername      = "uq_users_username"
	UniqueOrderTemplate = "uq_order_coupons_template"
	UniqueSharedCode    = "uq_templates_shared_code"
)

// sqliteUniqueColumns maps SQLite's "UNIQUE constraint failed: <columns>" to
// the index names MySQL reports.
var sqliteUniqueColumns = map[string]string{
	"user_coupons.code":                           UniqueCode,
	"user_coupons.request_id":                     UniqueRequest,
	"user_coupons.template_id, user_coupons.slot": UniqueSlot,
	"user_coupons.template_id, user_coupons.user_id, user_coupons.user_ordinal": UniqueUserOrdinal,
	"coupon_use_log.coupon_id, coupon_use_log.order_id":                         UniqueUseLog,
	"users.username": UniqueUsername,
	"order_coupons.order_id, order_coupons.template_id": UniqueOrderTemplate,
	"order_returns.order_id, order_returns.return_id":   UniqueReturn,
	"templates.shared_code":                             UniqueSharedCode,
}

// UniqueViolation returns the name of the unique index that err violated.
func UniqueViolation(err error) (string, bool) {
	if err == nil {
		return "", false
	}
	var me *mysqldriver.MySQLError
	if errors.As(err, &me) {
		if me.Number != 1062 {
			return "", false
		}
		// "Duplicate entry 'x' for key 'table.uq_name'" (the table part is newer).
		i := strings.LastIndex(me.Message, "for key '")
		if i < 0 {
			return "", true
		}
		name := strings.TrimSuffix(me.Message[i+len("for key '"):], "'")
		if j := strings.LastIndex(name, "."); j >= 0 {
			name = name[j+1:]
		}
		return name, true
	}
	msg := err.Error()
	if i := strings.Index(msg, "UNIQUE constraint failed: "); i >= 0 {
		cols := msg[i+len("UNIQUE constraint failed: "):]
		if j := strings.IndexAny(cols, "()"); j >= 0 {
			cols = strings.TrimSpace(cols[:j])
		}
		return sqliteUniqueColumns[cols], true
	}
	return "", false
}

// IsDeadlock reports a MySQL deadlock or lock wait timeout, after which the
// whole transaction may be retried. SQLite's "database is locked" counts too.
func IsDeadlock(err error) bool {
	var me *mysqldriver.MySQLError
	if errors.As(err, &me) {
		return me.Number == 1213 || me.Number == 1205
	}
	return err != nil && strings.Contains(err.Error(), "database is locked")
}

// translated reports whether err needs no translation: nil, or a domain error
// already.
func translated(err error) bool {
	var de *models.Error
	return err == nil || errors.As(err, &de)
}

// dbError translates a database error at the service boundary: not found, or
// a fault (503). Domain errors pass through.
func DBError(what string, err error) error {
	if translated(err) {
		return err
	}
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return &models.Error{Code: models.CodeNotFound, Message: what + " not found", Err: err}
	}
	return models.Unavailable("the database", err)
}

// RedisError translates a Redis error: every failure to talk to Redis is a
// fault (503), never a business answer.
func RedisError(err error) error {
	if translated(err) {
		return err
	}
	if errors.Is(err, redislock.ErrNotObtained) {
		return &models.Error{Code: models.CodeBusy, Message: "this coupon is being processed by another request, try again", RetryAfterSeconds: 1, Err: err}
	}
	return models.Unavailable("Redis", err)
}

// IsRedisNil reports a missing key.
func IsRedisNil(err error) bool { return errors.Is(err, redis.Nil) }

// UniqueReturn is the index that keeps each return of an order once.
const UniqueReturn = "uq_order_returns_return"
