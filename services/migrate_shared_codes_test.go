package services_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/testenv"
)

// TestMigrateFoldsSharedCodes: a database at 0009 holds shared codes with
// dashes, as they were stored before. 0011 stores each in its normal form
// (dashes dropped) so that the unique index of live codes covers every
// spelling. When two live templates' codes fold to one form, Migrate stops
// before changing anything, naming both, with the version clean; once one
// of them is archived it runs.
func TestMigrateFoldsSharedCodes(t *testing.T) {
	ctx := context.Background()
	fresh := testenv.NewFresh(t)
	db, dialect := openUnmigrated(t, fresh, t.TempDir())
	applyLikeOldRunner(t, db, dialect, "0001_init", "0002_settings", "0003_binary_identities", "0004_checkout",
		"0005_checkout_backfill", "0006_shared_codes", "0007_jobs", "0008_events", "0009_campaign_status")

	p := &preCheckout{t: t, db: db, now: time.Now().UTC().Truncate(time.Second)}
	p.exec(`INSERT INTO campaigns (name, budget_cents, created_at) VALUES ('old', 0, ?)`, p.now)
	p.cid = p.lastID("campaigns")
	shared := func(code, status string) int64 {
		tp := p.template(models.StackingExclusive, 100, 0, 0)
		p.exec("UPDATE templates SET code_mode = 'shared', shared_code = ?, status = ? WHERE id = ?", code, status, tp.ID)
		return tp.ID
	}
	summer := shared("SUMMER-8931", models.TemplateActive)
	spring := shared("SPRING-26", models.TemplatePaused)
	spring2 := shared("SPRING26", models.TemplateActive)
	oldWinter := shared("WIN-TER", models.TemplateArchived)
	winter := shared("WINTER", models.TemplateActive)
	plain := shared("AUTUMN", models.TemplateActive)

	codes := func() map[int64]string {
		var rows []struct {
			ID         int64
			SharedCode string
		}
		if err := db.Raw("SELECT id, shared_code FROM templates").Scan(&rows).Error; err != nil {
			t.Fatal(err)
		}
		out := map[int64]string{}
		for _, r := range rows {
			out[r.ID] = r.SharedCode
		}
		return out
	}

	err := core.Migrate(ctx, db, dialect)
	if err == nil || !strings.Contains(err.Error(), "SPRING-26") || !strings.Contains(err.Error(), "SPRING26") ||
		strings.Contains(err.Error(), "WINTER") || strings.Contains(err.Error(), "SUMMER") {
		t.Fatalf("migrate with a clash: %v, want the refusal naming SPRING-26 and SPRING26 only", err)
	}
	if st := migrationStatus(t, db, dialect); st.Version != 9 || st.Dirty {
		t.Fatalf("status after the refusal = %+v, want version 9, clean", st)
	}
	if got := codes(); got[summer] != "SUMMER-8931" || got[spring] != "SPRING-26" {
		t.Fatalf("the refusal changed codes: %v", got)
	}

	// The operator archives the paused one of the pair.
	p.exec("UPDATE templates SET status = 'archived' WHERE id = ?", spring)
	if err := core.Migrate(ctx, db, dialect); err != nil {
		t.Fatal(err)
	}
	if st := migrationStatus(t, db, dialect); st.Version != st.Latest || st.Dirty || len(st.Pending) != 0 {
		t.Fatalf("status after = %+v", st)
	}
	want := map[int64]string{summer: "SUMMER8931", spring: "SPRING26", spring2: "SPRING26", oldWinter: "WINTER",
		winter: "WINTER", plain: "AUTUMN"}
	if got := codes(); len(got) != len(want) {
		t.Fatalf("codes = %v, want %v", got, want)
	} else {
		for id, code := range want {
			if got[id] != code {
				t.Errorf("template %d has %q, want %q", id, got[id], code)
			}
		}
	}

	// The service finds the folded code however it is typed, and refuses
	// another live template with any spelling of it.
	svc := backfillService(t, fresh, db, dialect)
	for _, typed := range []string{"SUMMER-8931", "summer 8931", "Summer8931"} {
		res, err := svc.Validate(ctx, checkout.CheckoutRequest{OrderAmountCents: 1_000, CouponCodes: []string{typed}, UserID: "ann"})
		if err != nil || res.Result != "ok" || len(res.Coupons) != 1 || res.Coupons[0].TemplateID != summer ||
			res.Coupons[0].SharedCode != "SUMMER8931" {
			t.Fatalf("validate %q: %+v %v", typed, res, err)
		}
	}
	_, err = svc.CreateTemplate(ctx, "admin", models.Template{CampaignID: p.cid, Name: "again", Kind: models.KindFixed,
		FaceValueCents: 100, TotalStock: 5, PerUserLimit: 1, ValidDays: 3, CodeMode: models.CodeModeShared, SharedCode: "summer-89-31"})
	assertClaimCode(t, err, models.CodeInvalidRequest, "shared_code")
}
