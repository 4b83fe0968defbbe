package services_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/admin"
	"github.com/couponsvc/couponsvc/services/checkout"
)

// TestSearchAudit filters the audit log by actor, action (and kind of
// action), object (and a coupon's code) and time, pages through it by id,
// names the coupons' codes, and refuses bad filters naming each field.
func TestSearchAudit(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{TotalStock: 50, PerUserLimit: 5})
	c1, c2 := f.claim("u1"), f.claim("u2")
	if _, err := f.redeem(c1, "O-1", 10_000); err != nil {
		t.Fatal(err)
	}
	start := f.Clock.Now()
	f.Clock.Advance(time.Hour)
	for i := range 7 {
		if _, err := f.Admin.AddStock(f.Ctx, "stocker", f.tmpl.ID, 1, fmt.Sprintf("more %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	f.Clock.Advance(time.Hour)
	if _, err := f.Admin.Revoke(f.Ctx, "admin-ann", c2.Code, false, "abuse"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Checkout.Refund(f.Ctx, checkout.RefundRequest{CouponCode: c1.Code, OrderID: "O-1", Cashier: "cashier"}); err != nil {
		t.Fatal(err)
	}
	search := func(flt admin.AuditFilter) admin.AuditPage {
		t.Helper()
		page, err := f.Admin.SearchAudit(f.Ctx, flt)
		if err != nil {
			t.Fatalf("search %+v: %v", flt, err)
		}
		return page
	}
	actions := func(p admin.AuditPage) string {
		var out []string
		for _, e := range p.Entries {
			out = append(out, e.Actor+" "+e.Action+" "+e.Target)
		}
		return strings.Join(out, ", ")
	}

	t.Run("ActorPages", func(t *testing.T) {
		var reasons []string
		before, pages := int64(0), 0
		for ; ; pages++ {
			p := search(admin.AuditFilter{Actor: "stocker", Limit: 3, Before: before})
			for _, e := range p.Entries {
				r, _ := models.DetailValue(models.ParseAuditDetail(e.Detail), "reason")
				reasons = append(reasons, r)
			}
			if p.Older == 0 {
				break
			}
			before = p.Older
		}
		if pages != 2 || strings.Join(reasons, ",") != "more 6,more 5,more 4,more 3,more 2,more 1,more 0" {
			t.Fatalf("%d more pages, reasons %v", pages, reasons)
		}
	})
	t.Run("CouponCode", func(t *testing.T) {
		p := search(admin.AuditFilter{Target: strings.ToLower(c1.Code)})
		want := fmt.Sprintf("cashier coupon.refund coupon:%d", c1.ID)
		if got := actions(p); got != want {
			t.Fatalf("entries %q, want %q", got, want)
		}
		if p.Codes[c1.ID] != c1.Code || len(p.Codes) != 1 {
			t.Fatalf("codes %v", p.Codes)
		}
	})
	t.Run("ActionKind", func(t *testing.T) {
		want := fmt.Sprintf("cashier coupon.refund coupon:%d, admin-ann coupon.revoke coupon:%d", c1.ID, c2.ID)
		if got := actions(search(admin.AuditFilter{Action: "coupon."})); got != want {
			t.Fatalf("coupon entries %q, want %q", got, want)
		}
		if got := actions(search(admin.AuditFilter{Action: "coupon.revoke"})); got != fmt.Sprintf("admin-ann coupon.revoke coupon:%d", c2.ID) {
			t.Fatalf("revocations %q", got)
		}
	})
	t.Run("Time", func(t *testing.T) {
		p := search(admin.AuditFilter{Since: start.Add(30 * time.Minute), Until: start.Add(90 * time.Minute), Limit: 100})
		if len(p.Entries) != 7 || p.Older != 0 {
			t.Fatalf("%d entries in the hour of the stock additions, want 7: %s", len(p.Entries), actions(p))
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		_, err := f.Admin.SearchAudit(f.Ctx, admin.AuditFilter{Target: "not a code", Since: start, Until: start,
			Actor: strings.Repeat("a", 101)})
		var fields []string
		for _, fe := range models.FieldsOf(err) {
			fields = append(fields, fe.Field)
		}
		if models.ErrorCode(err) != models.CodeInvalidRequest || strings.Join(fields, ",") != "actor,until,target" {
			t.Fatalf("error %v, fields %v; want actor, until and target", err, fields)
		}
	})
}

// TestListCoupons filters coupons by template, holder, effective status and
// code, pages through them by id, and gives a coupon's history with its
// uses and the reason it was revoked.
func TestListCoupons(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{TotalStock: 50, PerUserLimit: 5, ValidDays: 1})
	var cs []*models.Coupon
	for _, u := range []string{"u1", "u1", "u2", "u3", "u3"} {
		cs = append(cs, f.claim(u))
	}
	if _, err := f.redeem(cs[0], "O-1", 10_000); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Admin.Revoke(f.Ctx, "admin-ann", cs[2].Code, true, "shared publicly"); err != nil {
		t.Fatal(err)
	}
	f.Clock.Advance(72 * time.Hour) // the issued ones expire (valid to the end of the next day)
	c6 := f.claim("u4")
	list := func(flt admin.CouponFilter) string {
		t.Helper()
		p, err := f.Admin.ListCoupons(f.Ctx, flt)
		if err != nil {
			t.Fatalf("list %+v: %v", flt, err)
		}
		var out []string
		for _, c := range p.Coupons {
			out = append(out, c.UserID+":"+c.Status)
		}
		if p.Older != 0 {
			out = append(out, "…")
		}
		return strings.Join(out, " ")
	}
	for name, c := range map[string]struct {
		flt  admin.CouponFilter
		want string
	}{
		"All":       {admin.CouponFilter{TemplateID: f.tmpl.ID}, "u4:issued u3:expired u3:expired u2:revoked u1:expired u1:used"},
		"Holder":    {admin.CouponFilter{UserID: "u3"}, "u3:expired u3:expired"},
		"Issued":    {admin.CouponFilter{Status: models.CouponIssued}, "u4:issued"},
		"Expired":   {admin.CouponFilter{Status: models.CouponExpired}, "u3:expired u3:expired u1:expired"},
		"Used":      {admin.CouponFilter{Status: models.CouponUsed}, "u1:used"},
		"Code":      {admin.CouponFilter{Code: strings.ToLower(c6.Code)}, "u4:issued"},
		"Page":      {admin.CouponFilter{Limit: 2}, "u4:issued u3:expired …"},
		"NextPage":  {admin.CouponFilter{Limit: 2, Before: cs[3].ID}, "u2:revoked u1:expired …"},
		"LastPage":  {admin.CouponFilter{Limit: 2, Before: cs[1].ID}, "u1:used"},
		"Nobody":    {admin.CouponFilter{UserID: "u9"}, ""},
		"OtherTmpl": {admin.CouponFilter{TemplateID: f.tmpl.ID + 1000}, ""},
	} {
		if got := list(c.flt); got != c.want {
			t.Errorf("%s: %q, want %q", name, got, c.want)
		}
	}
	_, err := f.Admin.ListCoupons(f.Ctx, admin.CouponFilter{Status: "gone", Code: "n!", UserID: "a|b"})
	var fields []string
	for _, fe := range models.FieldsOf(err) {
		fields = append(fields, fe.Field)
	}
	if strings.Join(fields, ",") != "user_id,code,status" {
		t.Errorf("bad filters: %v, fields %v; want user_id, code and status", err, fields)
	}

	h, err := f.Admin.GetCouponHistory(f.Ctx, cs[2].Code)
	if err != nil {
		t.Fatal(err)
	}
	if h.Coupon.Status != models.CouponRevoked || h.RevokeReason != "shared publicly" || h.Revocation == nil ||
		h.Revocation.Actor != "admin-ann" || len(h.Audit) != 1 || len(h.Uses) != 0 {
		t.Fatalf("history of the revoked coupon: %+v", h)
	}
	h, err = f.Admin.GetCouponHistory(f.Ctx, cs[0].Code)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Uses) != 1 || h.Uses[0].OrderID != "O-1" || h.RevokeReason != "" || h.Revocation != nil {
		t.Fatalf("history of the used coupon: %+v", h)
	}
}
