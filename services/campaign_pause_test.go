package services_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/admin"
	claimsvc "github.com/couponsvc/couponsvc/services/claims"
)

// TestCampaignPause: a paused campaign's templates refuse claims with
// not_claimable (taking nothing), through another instance that has them
// cached too, also after Redis lost the rules; they leave the offers; a
// resume gives each template its own rule back (a template paused on its
// own stays paused); each change is audited; exact counts throughout.
func TestCampaignPause(t *testing.T) {
	f := newClaimFixture(t, services.Config{})
	b := f.Env.NewService(services.Config{CoreConfig: services.CoreConfig{Now: f.Clock.Now, TemplateCacheTTL: time.Hour}})
	c := f.Campaign(0)
	open := f.template(c.ID, 100, 50, 100)
	own := f.template(c.ID, 100, 50, 100)
	other := f.template(f.Campaign(0).ID, 100, 50, 100)
	claims := 0
	claim := func(tid int64, user string) error {
		claims++
		_, err := b.Claim(f.Ctx, claimsvc.ClaimRequest{TemplateID: tid, UserID: user, IdempotencyKey: fmt.Sprintf("k%d", claims)})
		return err
	}
	mustClaim := func(tid int64) {
		t.Helper()
		if err := claim(tid, "u1"); err != nil {
			t.Fatalf("claim of template %d: %v", tid, err)
		}
	}
	refused := func(tid int64, msg string) {
		t.Helper()
		before, coupons := f.redisState(), f.couponCount()
		for _, user := range []string{"u1", "u2"} {
			err := claim(tid, user)
			assertClaimCode(t, err, models.CodeNotClaimable)
			if e := err.(*models.Error); e.Message != msg {
				t.Fatalf("refusal says %q, want %q", e.Message, msg)
			}
		}
		f.assertNothingTaken(before, coupons)
	}
	offers := func() []int64 {
		t.Helper()
		vs, err := f.Core.ListTemplates(f.Ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, v := range vs {
			ids = append(ids, v.ID)
		}
		return ids
	}
	mustClaim(open.ID) // the other instance caches the open templates
	mustClaim(own.ID)
	pausedT := models.TemplatePaused
	f.mustPatch(f.Svc, own.ID, admin.TemplatePatch{Status: &pausedT})

	paused, active := models.CampaignPaused, models.CampaignActive
	got, err := f.Admin.UpdateCampaign(f.Ctx, "admin-ann", c.ID, admin.CampaignPatch{Status: &paused})
	if err != nil || got.Status != models.CampaignPaused {
		t.Fatalf("pause = %+v, %v", got, err)
	}
	refused(open.ID, "this coupon's campaign is paused")
	refused(own.ID, "this coupon is paused")
	mustClaim(other.ID) // another campaign goes on
	if ids := offers(); fmt.Sprint(ids) != fmt.Sprint([]int64{other.ID}) {
		t.Fatalf("offers while paused = %v, want only %d", ids, other.ID)
	}
	if _, err := f.Core.ViewOffer(f.Ctx, open.ID); !models.IsCode(err, models.CodeNotFound) {
		t.Fatalf("view of a paused campaign's offer: %v, want not_found", err)
	}

	// Redis lost everything: the rules come back from the database, paused.
	f.Env.FlushRedis(t)
	if err := claim(open.ID, "u3"); !models.IsCode(err, models.CodeNotClaimable) {
		t.Fatalf("claim after a flush while paused: %v, want not_claimable", err)
	}

	// Renaming a paused campaign keeps it paused.
	name := "renamed"
	if got, err := f.Admin.UpdateCampaign(f.Ctx, "admin-ann", c.ID, admin.CampaignPatch{Name: &name}); err != nil ||
		got.Status != models.CampaignPaused || got.Name != "renamed" {
		t.Fatalf("rename = %+v, %v", got, err)
	}
	refused(open.ID, "this coupon's campaign is paused")

	if _, err := f.Admin.UpdateCampaign(f.Ctx, "admin-ann", c.ID, admin.CampaignPatch{Status: &active}); err != nil {
		t.Fatal(err)
	}
	mustClaim(open.ID)
	refused(own.ID, "this coupon is paused")
	if n := f.couponCount(); n != 4 {
		t.Fatalf("%d coupons, want 4 (2 before the pause, 1 of the other campaign, 1 after the resume)", n)
	}

	var actions []string
	if err := f.Env.Backends.DB.Model(&models.AuditEntry{}).Where("target = ?", fmt.Sprintf("campaign:%d", c.ID)).
		Order("id").Pluck("action", &actions).Error; err != nil {
		t.Fatal(err)
	}
	if want := "[campaign.create campaign.pause campaign.update campaign.resume]"; fmt.Sprint(actions) != want {
		t.Fatalf("audit %v, want %s", actions, want)
	}
	f.assertAgree(c, open)
}

// TestCampaignUpdateInvalid: a bad status or name is refused naming each
// field at fault, and changes nothing; an unknown campaign is not found.
func TestCampaignUpdateInvalid(t *testing.T) {
	f := newClaimFixture(t, services.Config{})
	c := f.Campaign(0)
	bad, blank := "stopped", "  "
	_, err := f.Admin.UpdateCampaign(f.Ctx, "admin", c.ID, admin.CampaignPatch{Name: &blank, Status: &bad})
	fields := models.FieldsOf(err)
	if models.ErrorCode(err) != models.CodeInvalidRequest || fmt.Sprint(fields) != "[{name must be 1 to 100 characters} {status must be \"active\" or \"paused\"}]" {
		t.Fatalf("error %v, fields %v", err, fields)
	}
	got, err := f.Core.GetCampaign(f.Ctx, c.ID)
	if err != nil || got.Name != c.Name || got.Status != models.CampaignActive {
		t.Fatalf("campaign %+v, %v; want unchanged", got, err)
	}
	paused := models.CampaignPaused
	if _, err := f.Admin.UpdateCampaign(f.Ctx, "admin", c.ID+1000, admin.CampaignPatch{Status: &paused}); !models.IsCode(err, models.CodeNotFound) {
		t.Fatalf("unknown campaign: %v, want not_found", err)
	}
}
