package testsupport

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/claims"
)

// ClaimFor claims a coupon for a user through the service (another shopper,
// elsewhere).
func (e *PageEnv) ClaimFor(t *testing.T, templateID int64, user string) *models.Coupon {
	t.Helper()
	res, err := e.Service.Claim(context.Background(), claims.ClaimRequest{TemplateID: templateID, UserID: user,
		IdempotencyKey: fmt.Sprintf("test-%d-%s", templateID, user)})
	if err != nil {
		t.Fatalf("claim template %d for %s: %v", templateID, user, err)
	}
	return res.Coupon
}

// UserCoupons lists a user's coupons from the database.
func (e *PageEnv) UserCoupons(t *testing.T, user string) []models.CouponView {
	t.Helper()
	cs, err := e.Service.ListUserCoupons(context.Background(), user)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// CountTemplates counts the templates in the database.
func (e *PageEnv) CountTemplates(t *testing.T) int64 {
	t.Helper()
	var n int64
	if err := e.Backends.DB.Model(&models.Template{}).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// HoldFor holds the user's coupons for an online order through the service.
func (e *PageEnv) HoldFor(t *testing.T, orderID string, amount int64, user string, codes ...string) *checkout.CheckoutResult {
	t.Helper()
	res, err := e.Service.Hold(context.Background(), checkout.CheckoutRequest{OrderID: orderID, OrderAmountCents: amount,
		CouponCodes: codes, UserID: user, TTLSeconds: 600, Actor: "test"})
	if err != nil || res.Result != "held" {
		t.Fatalf("hold %s: %+v %v", orderID, res, err)
	}
	return res
}

// Combinable creates a combinable fixed-amount template of the demo
// campaign: face cents off an order of at least minOrder.
func (e *PageEnv) Combinable(t *testing.T, name string, face, minOrder int64) *models.Template {
	t.Helper()
	tp, err := e.Service.CreateTemplate(context.Background(), "test", models.Template{CampaignID: e.Demo.Campaign.ID,
		Name: name, Kind: models.KindFixed, FaceValueCents: face, MinOrderCents: minOrder, TotalStock: 50,
		PerUserLimit: 5, ValidDays: 30, Stacking: models.StackingCombinable})
	if err != nil {
		t.Fatalf("template %s: %v", name, err)
	}
	return tp
}

// GetTemplate reads a template from the database.
func (e *PageEnv) GetTemplate(t *testing.T, id int64) *models.Template {
	t.Helper()
	tp, err := e.Service.GetTemplate(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// TemplateStatus reads a template's status from the database.
func (e *PageEnv) TemplateStatus(t *testing.T, id int64) string {
	t.Helper()
	return e.GetTemplate(t, id).Status
}

// CouponStatus reads a coupon's stored status.
func (e *PageEnv) CouponStatus(t *testing.T, code string) string {
	t.Helper()
	var c models.Coupon
	if err := e.Backends.DB.Where("code = ?", code).First(&c).Error; err != nil {
		t.Fatal(err)
	}
	return c.Status
}

// HiddenOffers creates, beside the demo's open templates, one template for
// each way of not being on offer, and returns them by name.
func (e *PageEnv) HiddenOffers(t *testing.T) map[string]*models.Template {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	at := func(d time.Duration) *time.Time { v := now.Add(d); return &v }
	out := map[string]*models.Template{}
	for name, edit := range map[string]func(*models.Template){
		"paused":  func(tp *models.Template) { tp.Status = models.TemplatePaused },
		"not yet": func(tp *models.Template) { tp.ClaimStartsAt = now.Add(24 * time.Hour) },
		"closed":  func(tp *models.Template) { tp.ClaimStartsAt, tp.ClaimEndsAt = now.Add(-2*time.Hour), at(-time.Hour) },
		"expiring": func(tp *models.Template) {
			tp.ValidDays, tp.ValidFrom, tp.ValidUntil = 0, at(-time.Hour), at(time.Hour)
		},
	} {
		tp := models.Template{CampaignID: e.Demo.Campaign.ID, Name: "Secret " + name, Kind: models.KindFixed,
			FaceValueCents: 100, TotalStock: 7, PerUserLimit: 1, ValidDays: 5}
		edit(&tp)
		created, err := e.Service.CreateTemplate(ctx, "test", tp)
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		out[name] = created
	}
	// The coupons of "expiring" stop being valid: no claim may be taken.
	if err := e.Backends.DB.Model(&models.Template{}).Where("id = ?", out["expiring"].ID).
		Update("valid_until", now.Add(-time.Minute)).Error; err != nil {
		t.Fatal(err)
	}
	out["expired"] = out["expiring"]
	delete(out, "expiring")
	// What Redis holds of the old validity goes: claims read the database's.
	e.FlushRedis(t)
	return out
}

// FieldErrorOf is the error shown beside the field with the given id.
func FieldErrorOf(body, id string) string {
	m := regexp.MustCompile(`(?s)id="` + id + `".*?<p class="field-error"[^>]*>([^<]*)</p>`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return m[1]
}
