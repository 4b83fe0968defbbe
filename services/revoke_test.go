package services_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/testenv"
)

func TestRevoke(t *testing.T) {
	t.Run("OKReturnStock", revokeOKReturnStock)
	t.Run("OKKeepStock", revokeOKKeepStock)
	t.Run("ExpiredCoupon", revokeExpiredCoupon)
	t.Run("ErrAlreadyUsed", revokeErrAlreadyUsed)
	t.Run("BadInput", revokeBadInput)
}

func revokeOKReturnStock(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{TotalStock: 2, PerUserLimit: 1})
	c := f.claim("u1")
	f.claim("u2")
	res, err := f.Admin.Revoke(f.Ctx, "admin-ann", strings.ToLower(c.Code), true, "  printed by mistake ")
	if err != nil || !res.StockReturned || res.Coupon.Status != models.CouponRevoked {
		t.Fatalf("revoke %+v, %v", res, err)
	}
	got := f.coupon(c.ID)
	if got.Status != models.CouponRevoked || got.Slot != nil || got.UserOrdinal != nil || got.Version != 1 {
		t.Fatalf("coupon %+v", got)
	}
	var audit []models.AuditEntry
	f.Env.Backends.DB.Where("action = ?", "coupon.revoke").Find(&audit)
	if len(audit) != 1 || audit[0].Actor != "admin-ann" || audit[0].Target != fmt.Sprintf("coupon:%d", c.ID) ||
		!strings.Contains(audit[0].Detail, `reason="printed by mistake"`) || !strings.Contains(audit[0].Detail, "return_stock=true") ||
		audit[0].CreatedAt.IsZero() {
		t.Fatalf("audit %+v", audit)
	}
	if f.remaining() != 1 {
		t.Fatalf("remaining %d", f.remaining())
	}
	f.checkStock()
	f.claim("u1") // the slot and u1's ordinal are back
	f.checkStock()
}

func revokeOKKeepStock(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{TotalStock: 2, PerUserLimit: 1})
	c := f.claim("u1")
	res, err := f.Admin.Revoke(f.Ctx, "admin", c.Code, false, "abuse")
	if err != nil || res.StockReturned || res.Coupon.Slot == nil {
		t.Fatalf("revoke %+v, %v", res, err)
	}
	if f.remaining() != 1 {
		t.Fatalf("remaining %d", f.remaining())
	}
	f.checkStock()
	// The revoked coupon still counts against u1's limit.
	_, err = f.Claim(f.tmpl.ID, "u1", "again")
	wantCode(t, err, models.CodeUserLimitReached)

	// Revoking again is refused, saying when, by whom and why; asking for
	// the stock back returns it.
	_, err = f.Admin.Revoke(f.Ctx, "admin", c.Code, false, "abuse")
	wantCode(t, err, models.CodeRevoked)
	var first models.AuditEntry
	if err := f.Env.Backends.DB.Where("action = ?", "coupon.revoke").First(&first).Error; err != nil {
		t.Fatal(err)
	}
	if want := "this coupon was already revoked on " + first.CreatedAt.UTC().Format(time.RFC3339) + " by admin: abuse"; err.(*models.Error).Message != want {
		t.Fatalf("second revoke says %q, want %q", err.(*models.Error).Message, want)
	}
	if f.remaining() != 1 || f.coupon(c.ID).Version != 1 {
		t.Fatal("the refused revoke changed something")
	}
	res, err = f.Admin.Revoke(f.Ctx, "admin", c.Code, true, "give the stock back")
	if err != nil || !res.StockReturned || res.Coupon.Slot != nil {
		t.Fatalf("return stock %+v, %v", res, err)
	}
	if f.remaining() != 2 {
		t.Fatalf("remaining %d", f.remaining())
	}
	_, err = f.Admin.Revoke(f.Ctx, "admin", c.Code, true, "give the stock back")
	wantCode(t, err, models.CodeRevoked)
	if f.remaining() != 2 || f.coupon(c.ID).Version != 2 {
		t.Fatal("the refused revoke changed something")
	}
	f.checkStock()
	f.claim("u1")
}

func revokeExpiredCoupon(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{ValidDays: 1})
	c := f.claim("u1")
	f.Clock.Advance(48 * time.Hour)
	res, err := f.Admin.Revoke(f.Ctx, "admin", c.Code, true, "expired, clean up")
	if err != nil || res.Coupon.Status != models.CouponRevoked {
		t.Fatalf("revoke %+v, %v", res, err)
	}
	f.checkStock()
}

func revokeErrAlreadyUsed(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{})
	c := f.claim("u1")
	f.mustRedeem(c, "o1", 10_000)
	_, err := f.Admin.Revoke(f.Ctx, "admin", c.Code, true, "too late")
	e := wantCode(t, err, models.CodeAlreadyUsed)
	if !strings.Contains(e.Message, "o1") {
		t.Fatalf("message %q", e.Message)
	}
	if got := f.coupon(c.ID); got.Status != models.CouponUsed || got.Version != 1 {
		t.Fatalf("changed %+v", got)
	}
}

func revokeBadInput(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{})
	c := f.claim("u1")
	for _, tc := range []struct {
		name, code, reason, field string
		want                      models.Code
	}{
		{"MistypedCode", mistype(c.Code), "r", "code", models.CodeInvalidRequest},
		{"NoReason", c.Code, "  ", "reason", models.CodeInvalidRequest},
		{"LongReason", c.Code, strings.Repeat("r", 501), "reason", models.CodeInvalidRequest},
		{"UnknownCode", models.NewCouponCode(), "r", "", models.CodeNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.Admin.Revoke(f.Ctx, "admin", tc.code, true, tc.reason)
			if e := wantCode(t, err, tc.want); e.Field != tc.field {
				t.Fatalf("field %q, want %q", e.Field, tc.field)
			}
		})
	}
	if got := f.coupon(c.ID); got.Status != models.CouponIssued || got.Version != 0 {
		t.Fatalf("changed %+v", got)
	}
}

// TestRevokeRaceRedeem releases revocations and redemptions of one coupon
// together: the coupon ends either used by one order or revoked, never both,
// and the stock adds up.
func TestRevokeRaceRedeem(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{TotalStock: 5})
	c := f.claim("u1")
	var mu sync.Mutex
	counts := map[string]int{}
	race(20, func(i int) {
		var err error
		var dup bool
		kind := "redeem"
		if i%2 == 0 {
			var res *checkout.RedeemResult
			res, err = f.redeem(c, fmt.Sprintf("o%d", i), 10_000)
			dup = err == nil && res.Duplicate
		} else {
			kind = "revoke"
			_, err = f.Admin.Revoke(f.Ctx, "admin", c.Code, true, "race")
		}
		mu.Lock()
		defer mu.Unlock()
		switch code := models.ErrorCode(err); {
		case err == nil && !dup:
			counts[kind]++
		case err == nil:
			counts[kind+" duplicate"]++
		case code == models.CodeBusy || code == models.CodeAlreadyUsed || code == models.CodeRevoked:
			counts[code.Word()]++
		default:
			t.Errorf("%s: %v", kind, err)
		}
	})
	t.Logf("%s: %v", testenv.BackendName(), counts)
	if counts["redeem"]+counts["revoke"] != 1 {
		t.Fatalf("results %v", counts)
	}
	got := f.coupon(c.ID)
	live := f.liveLogs(c.ID)
	switch {
	case counts["redeem"] == 1 && (got.Status != models.CouponUsed || len(live) != 1):
		t.Fatalf("redeemed, but coupon %+v, log %+v", got, live)
	case counts["revoke"] == 1 && (got.Status != models.CouponRevoked || len(live) != 0):
		t.Fatalf("revoked, but coupon %+v, log %+v", got, live)
	}
	f.checkStock()
}

// TestRevokeEventCarriesPublicReason checks that coupon.revoked carries the
// public reason the wallet shows, never the admin's note (docs/events.md).
func TestRevokeEventCarriesPublicReason(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{TotalStock: 2, PerUserLimit: 1})
	c := f.claim("u1")
	if _, err := f.Admin.RevokeWith(f.Ctx, "admin", c.Code, false, "fraud_suspected", "resold on a forum by user 77"); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	var evs []models.Event
	if err := f.Env.Backends.DB.Where("type = ?", models.EventCouponRevoked).Find(&evs).Error; err != nil || len(evs) != 1 {
		t.Fatalf("revoked events %d, %v; want 1", len(evs), err)
	}
	if strings.Contains(string(evs[0].Data), "forum") {
		t.Fatalf("event data %s carries the admin's note", evs[0].Data)
	}
	var data models.CouponEvent
	if err := json.Unmarshal(evs[0].Data, &data); err != nil {
		t.Fatal(err)
	}
	if data.Reason != "fraud_suspected" || data.ReasonText != "withdrawn after suspected misuse" || data.Actor != "admin" || data.CouponID != c.ID {
		t.Fatalf("event data %+v; want reason fraud_suspected with the wallet's words", data)
	}
}
