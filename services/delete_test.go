package services_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	claimsvc "github.com/couponsvc/couponsvc/services/claims"
)

// TestDeleteTemplate: a template that never issued a coupon is deleted
// (row, counters and rule gone, audited with its name); one with a coupon,
// a code job or a claim under way is refused in_use with a message saying to
// archive it, and still takes claims afterwards; an unknown id is not_found.
// A campaign is deleted only without templates.
func TestDeleteTemplate(t *testing.T) {
	f := newClaimFixture(t, services.Config{})
	c := f.Campaign(0)
	unused := f.template(c.ID, 10, 1, 100)
	used := f.template(c.ID, 10, 1, 100)
	f.MustClaim(used.ID, "u1", "k1")

	err := f.Admin.DeleteTemplate(f.Ctx, "admin-ann", used.ID)
	assertClaimCode(t, err, models.CodeInUse)
	if msg := err.(*models.Error).Message; msg != fmt.Sprintf("template %d has issued coupons: it cannot be deleted; archive it instead", used.ID) {
		t.Fatalf("refusal says %q", msg)
	}
	f.MustClaim(used.ID, "u2", "k2") // the rule was written back

	// A reservation not yet written: refused, and the rule written back.
	f.deductDirect(c.ID, unused.ID, "u9", "pending-key")
	err = f.Admin.DeleteTemplate(f.Ctx, "admin-ann", unused.ID)
	assertClaimCode(t, err, models.CodeInUse)
	if msg := err.(*models.Error).Message; msg != fmt.Sprintf("template %d has a claim under way: it may issue a coupon; archive it instead", unused.ID) {
		t.Fatalf("refusal says %q", msg)
	}
	if n := f.Env.Backends.Redis.ZCard(f.Ctx, f.Key(c.ID, "pending")).Val(); n != 1 {
		t.Fatalf("pending = %d, want the one reservation", n)
	}
	f.Env.Backends.Redis.ZRemRangeByRank(f.Ctx, f.Key(c.ID, "pending"), 0, -1)

	// A code job: refused.
	jobbed := f.template(c.ID, 10, 1, 100)
	if _, err := f.Codes.StartGenerate(f.Ctx, "admin-ann", jobbed.ID, 2, ""); err != nil {
		t.Fatal(err)
	}
	assertClaimCode(t, f.Admin.DeleteTemplate(f.Ctx, "admin-ann", jobbed.ID), models.CodeInUse)

	before := f.couponCount()
	if err := f.Admin.DeleteTemplate(f.Ctx, "admin-ann", unused.ID); err != nil {
		t.Fatalf("delete of a never-issued template: %v", err)
	}
	var n int64
	f.Env.Backends.DB.Model(&models.Template{}).Where("id = ?", unused.ID).Count(&n)
	if n != 0 {
		t.Fatalf("template row still there")
	}
	if keys := f.Env.Backends.Redis.Keys(f.Ctx, f.TemplateKey(c.ID, unused.ID)+"*").Val(); len(keys) != 0 {
		t.Fatalf("keys left of the deleted template: %v", keys)
	}
	_, err = f.Claim(unused.ID, "u3", "k3")
	assertClaimCode(t, err, models.CodeNotFound)
	if f.couponCount() != before {
		t.Fatalf("coupons changed by a delete and a refused claim")
	}
	assertClaimCode(t, f.Admin.DeleteTemplate(f.Ctx, "admin-ann", unused.ID), models.CodeNotFound)

	entries, err := f.Admin.ListAudit(f.Ctx, 50)
	if err != nil {
		t.Fatal(err)
	}
	deletes := 0
	for _, e := range entries {
		if e.Action == "template.delete" {
			deletes++
			want := fmt.Sprintf("name=%q campaign=%d", unused.Name, c.ID)
			if e.Target != fmt.Sprintf("template:%d", unused.ID) || e.Detail != want || e.Actor != "admin-ann" {
				t.Fatalf("audit = %+v, want detail %s", e, want)
			}
		}
	}
	if deletes != 1 {
		t.Fatalf("%d template.delete entries, want 1 (refusals are not audited)", deletes)
	}

	// Campaigns: one with templates is refused; an empty one is deleted.
	err = f.Admin.DeleteCampaign(f.Ctx, "admin-ann", c.ID)
	assertClaimCode(t, err, models.CodeInUse)
	empty := f.Campaign(500)
	if err := f.Admin.DeleteCampaign(f.Ctx, "admin-ann", empty.ID); err != nil {
		t.Fatalf("delete of an empty campaign: %v", err)
	}
	assertClaimCode(t, f.Admin.DeleteCampaign(f.Ctx, "admin-ann", empty.ID), models.CodeNotFound)
	if _, err := f.Core.GetCampaign(f.Ctx, empty.ID); !models.IsCode(err, models.CodeNotFound) {
		t.Fatalf("deleted campaign read back: %v", err)
	}
}

// TestDeleteTemplateRace: claims of two instances against a delete, many
// rounds. Either the delete wins and every claim is refused (not_claimable
// while the gate is closed, not_found after), or a claim wins and the delete
// answers in_use; never a coupon of a deleted template, never a fault.
func TestDeleteTemplateRace(t *testing.T) {
	f := newClaimFixture(t, services.Config{})
	other := f.Env.NewService(services.Config{CoreConfig: services.CoreConfig{Now: f.Clock.Now, TemplateCacheTTL: time.Hour}})
	c := f.Campaign(0)
	wins := map[string]int{}
	for round := 0; round < 30; round++ {
		tp := f.template(c.ID, 50, 1, 100)
		// The other instance caches the template, as a busy shop does.
		if _, err := other.Core.Template(f.Ctx, tp.ID); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		codes := make([]models.Code, 8)
		var delErr error
		for i := range codes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				svc := f.Svc
				if i%2 == 1 {
					svc = other
				}
				// Half the rounds give the delete a head start, half the
				// claims; within a round the claims are spread out.
				if round%2 == 0 {
					time.Sleep(time.Duration(5+i*2) * time.Millisecond)
				} else if i >= 4 {
					time.Sleep(time.Duration(i) * time.Millisecond)
				}
				_, err := svc.Claim(f.Ctx, claimsvc.ClaimRequest{TemplateID: tp.ID, UserID: fmt.Sprintf("u%d", i),
					IdempotencyKey: fmt.Sprintf("r%d-%d", round, i)})
				codes[i] = models.ErrorCode(err)
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if round%2 == 1 {
				time.Sleep(time.Duration(round%5) * time.Millisecond)
			}
			delErr = f.Admin.DeleteTemplate(f.Ctx, "admin-ann", tp.ID)
		}()
		close(start)
		wg.Wait()

		var rows int64
		f.Env.Backends.DB.Model(&models.Coupon{}).Where("template_id = ?", tp.ID).Count(&rows)
		var left int64
		f.Env.Backends.DB.Model(&models.Template{}).Where("id = ?", tp.ID).Count(&left)
		claimed := 0
		for i, code := range codes {
			switch code {
			case models.CodeOK:
				claimed++
			case models.CodeNotClaimable, models.CodeNotFound:
			default:
				t.Fatalf("round %d: claim %d answered %s", round, i, code.Word())
			}
		}
		switch {
		case delErr == nil:
			wins["delete"]++
			if claimed != 0 || rows != 0 || left != 0 {
				t.Fatalf("round %d: delete won but %d claims succeeded, %d rows, template rows %d", round, claimed, rows, left)
			}
		case models.IsCode(delErr, models.CodeInUse):
			wins["claims"]++
			if left != 1 || int64(claimed) != rows {
				t.Fatalf("round %d: delete refused; template rows %d, %d claimed, %d coupon rows", round, left, claimed, rows)
			}
			// The template takes claims again: its rule was written back.
			if _, err := f.Claim(tp.ID, "late", fmt.Sprintf("late-%d", round)); err != nil {
				t.Fatalf("round %d: claim after a refused delete: %v", round, err)
			}
		default:
			t.Fatalf("round %d: delete answered %v", round, delErr)
		}
	}
	t.Logf("outcomes over 30 rounds: %v", wins)
}
