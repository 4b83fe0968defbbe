package admin

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"

	"gorm.io/gorm"
)

// RevokeResult is the answer to a revocation. StockReturned tells that the
// coupon no longer holds a slot of its template: its stock, budget value and
// user ordinal are back in the pool.
type RevokeResult struct {
	Coupon        models.CouponView
	StockReturned bool
}

// Revoke takes an issued (or expired) or held coupon away from its holder
// (admin); a held coupon leaves its order's hold,
// under the coupon's lock and guarded by status and version, with an audit
// entry of who, when and why.
//
// With returnStock the coupon's slot and user ordinal are set to NULL in the
// same transaction and given back to Redis after the commit (as a refund under
// recycle does), so that anyone can claim it again; without it the revoked
// coupon keeps counting against the template's stock and the holder's limit
// (for a coupon taken away for abuse).
//
// Revoking a revoked coupon again is refused with CodeRevoked, saying when,
// by whom and why it was revoked, and changes nothing, except that a
// revocation that asks for the stock back on a coupon revoked without it
// returns the stock then (with its own audit entry). A used coupon is
// refused with CodeAlreadyUsed: its order must be refunded first.
//
// Errors: CodeInvalidRequest (field code or reason), CodeNotFound,
// CodeAlreadyUsed, CodeRevoked, CodeBusy, CodeUnavailable.
func (s *Admin) Revoke(ctx context.Context, actor, code string, returnStock bool, reason string) (*RevokeResult, error) {
	return s.RevokeWith(ctx, actor, code, returnStock, models.RevokeOther, reason)
}

// RevokeWith is Revoke with the public reason the shopper is told
// (publicReason, a key of models.RevokePublicReasons), kept apart from the
// admin's note (reason), which stays in the audit log. Errors: as Revoke's,
// and CodeInvalidRequest (field public_reason).
func (s *Admin) RevokeWith(ctx context.Context, actor, code string, returnStock bool, publicReason, reason string) (*RevokeResult, error) {
	if _, ok := models.RevokePublicText(publicReason); !ok {
		return nil, models.Invalid("public_reason", "must be one of %s", strings.Join(models.RevokePublicReasonKeys(), ", "))
	}
	code, err := models.ParseCouponCode("code", code)
	if err != nil {
		return nil, err
	}
	reason = strings.TrimSpace(reason)
	if reason == "" || utf8.RuneCountInString(reason) > models.MaxReasonRunes {
		return nil, models.Invalid("reason", "is required (at most %d characters)", models.MaxReasonRunes)
	}
	if err := models.CheckText("reason", reason, models.SingleLine); err != nil {
		return nil, err
	}
	c, err := s.CouponByCode(ctx, code)
	if err != nil {
		return nil, err
	}
	var res *RevokeResult
	err = s.ChangeCoupon(ctx, c, func(cur *models.Coupon) (returned *models.Coupon, err error) {
		res, returned, err = s.revokeOnce(ctx, core.ActorName(actor), cur, returnStock, publicReason, reason)
		return returned, err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (s *Admin) revokeOnce(ctx context.Context, actor string, c *models.Coupon, returnStock bool, publicReason, reason string) (res *RevokeResult, returned *models.Coupon, err error) {
	now := s.Clock().Truncate(time.Microsecond)
	action := "coupon.revoke"
	switch c.Status {
	case models.CouponIssued, models.CouponHeld:
	case models.CouponRevoked:
		if !returnStock || c.Slot == nil {
			return nil, nil, s.alreadyRevoked(ctx, c)
		}
		action = "coupon.return_stock"
	case models.CouponUsed:
		order := ""
		if c.OrderID != nil {
			order = " by order " + *c.OrderID
		}
		return nil, nil, models.Errorf(models.CodeAlreadyUsed, "this coupon is used%s: refund the order first", order)
	default:
		return nil, nil, fmt.Errorf("coupon %d has the unknown status %q", c.ID, c.Status)
	}

	currency, err := s.TemplateCurrency(ctx, c.TemplateID)
	if err != nil {
		return nil, nil, err
	}
	before := *c
	after := *c
	after.Status = models.CouponRevoked
	after.OrderID, after.HoldExpiresAt = nil, nil
	after.Version++
	after.UpdatedAt = now
	set := "status = ?"
	if returnStock {
		after.Slot, after.UserOrdinal = nil, nil
		set += ", slot = NULL, user_ordinal = NULL"
	}
	detail := fmt.Sprintf("user=%s template=%d status_was=%s return_stock=%t public_reason=%s reason=%q",
		c.UserID, c.TemplateID, c.EffectiveStatus(now), returnStock, publicReason, reason)
	if c.Status == models.CouponHeld && c.OrderID != nil {
		// Revoking a held coupon releases its hold: the order loses it (a
		// confirm then answers hold_expired naming it).
		detail += " released_hold_of_order=" + *c.OrderID
	}
	err = s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if c.Status == models.CouponHeld && c.OrderID != nil {
			if err := core.DropOrderCoupons(tx, *c.OrderID, []int64{c.ID}, now); err != nil {
				return err
			}
		}
		res := tx.Exec(`UPDATE user_coupons SET `+set+`, order_id = NULL, hold_expires_at = NULL, version = version + 1, updated_at = ?
			WHERE id = ? AND status = ? AND version = ?`,
			models.CouponRevoked, now, c.ID, c.Status, c.Version)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return core.ErrRaced
		}
		if err := s.Audit(tx, actor, action, fmt.Sprintf("coupon:%d", c.ID), detail); err != nil {
			return err
		}
		ev := models.NewCouponEvent(&after, currency)
		// The event carries the public reason, as the wallet shows it: the
		// admin's note is for the audit log alone (docs/events.md).
		ev.StockReturned, ev.Actor, ev.Reason = after.Slot == nil, actor, publicReason
		ev.ReasonText, _ = models.RevokePublicText(publicReason)
		if c.Status == models.CouponHeld && c.OrderID != nil {
			ev.OrderID = *c.OrderID // the order whose hold the revoke released
		}
		return s.events.EmitEvent(tx, models.EventCouponRevoked, ev)
	})
	if err := core.TxOutcome("coupon", err); err != nil {
		return nil, nil, err
	}
	if returnStock {
		returned = &before
	}
	return &RevokeResult{Coupon: after.View(now, currency), StockReturned: after.Slot == nil}, returned, nil
}
