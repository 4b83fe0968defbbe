package services_test

import (
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/core"

	"gorm.io/gorm/schema"
)

// CouponColumns names every column of models.Coupon, in the order of its
// fields, so that ScanCoupon fills the whole coupon: a field added to the
// model and not to the read fails here.
func TestCouponColumnsAreTheModels(t *testing.T) {
	s, err := schema.Parse(&models.Coupon{}, &sync.Map{}, schema.NamingStrategy{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range s.Fields {
		if f.DBName != "" {
			want = append(want, f.DBName)
		}
	}
	var got []string
	for _, c := range strings.Split(core.CouponColumns, ",") {
		got = append(got, strings.TrimSpace(c))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("CouponColumns %q, the model's columns %q", got, want)
	}
}

// CouponByCode, scanning the row itself, reads exactly what gorm's First
// reads: an issued coupon (NULL order, hold, use), a held one, a used one,
// and a code no coupon has is not_found.
func TestCouponByCodeReadsWhatGormReads(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.tmpl("", 500, 0, 0)
	issued, held, used := f.claim(tp, "u1"), f.claim(tp, "u2"), f.claim(tp, "u3")
	if _, err := f.hold("read-held", 10_000, 600, held); err != nil {
		t.Fatal(err)
	}
	if _, err := f.redeem(used, "read-used", 10_000); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*models.Coupon{issued, held, used} {
		var want models.Coupon
		if err := f.Backends.DB.Where("code = ?", c.Code).First(&want).Error; err != nil {
			t.Fatal(err)
		}
		got, err := f.Core.CouponByCode(f.Ctx, c.Code)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(*got, want) {
			t.Errorf("coupon %s (%s):\n read %+v\n gorm %+v", c.Code, want.Status, *got, want)
		}
	}
	var statuses []string
	for _, c := range []*models.Coupon{issued, held, used} {
		got, _ := f.Core.CouponByCode(f.Ctx, c.Code)
		statuses = append(statuses, got.Status)
		if got.Status != models.CouponIssued && (got.OrderID == nil || got.UsedAt == nil && got.HoldExpiresAt == nil) {
			t.Errorf("coupon %s %s: order %v, used %v, hold %v", got.Code, got.Status, got.OrderID, got.UsedAt, got.HoldExpiresAt)
		}
	}
	if strings.Join(statuses, ",") != "issued,held,used" {
		t.Errorf("statuses %v, want issued, held, used", statuses)
	}
	if _, err := f.Core.CouponByCode(f.Ctx, models.NewCouponCode()); !models.IsCode(err, models.CodeNotFound) {
		t.Errorf("a code no coupon has: %v, want not_found", err)
	}
}
