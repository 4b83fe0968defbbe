package services_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/admin"
)

const archivedStop = "not_claimable: the template is archived: it makes no more coupons; the job stopped and makes nothing more"

// archive archives template tid as an admin does.
func (f *jobFixture) archive(tid int64) {
	f.T.Helper()
	st := models.TemplateArchived
	if _, err := f.Admin.UpdateTemplate(f.Ctx, "admin", tid, admin.TemplatePatch{Status: &st}); err != nil {
		f.T.Fatalf("archive template %d: %v", tid, err)
	}
}

// archiveAfterRows archives template tid once the running job has done rows
// rows (between two batches).
func (f *jobFixture) archiveAfterRows(tid, rows int64) {
	f.Svc.SetJobHook(func(_, done int64) bool {
		if done == rows {
			f.archive(tid)
		}
		return false
	})
}

// archiveBeforeCommit archives template tid while the job's nth batch is
// done but not yet committed.
func (f *jobFixture) archiveBeforeCommit(tid int64, n int) {
	batches := 0
	f.Svc.SetJobCommitHook(func(int64) {
		if batches++; batches == n {
			f.archive(tid)
		}
	})
}

// couponsOf counts the coupons of template tid in the database.
func (f *jobFixture) couponsOf(tid int64) int64 {
	f.T.Helper()
	var n int64
	if err := f.Backends.DB.Model(&models.Coupon{}).Where("template_id = ?", tid).Count(&n).Error; err != nil {
		f.T.Fatal(err)
	}
	return n
}

// assertStopped checks that job id failed after done rows with message,
// and that the template holds want coupons, as Redis counts them too.
func (f *jobFixture) assertStopped(id, tid, done, want int64, message string) {
	f.T.Helper()
	j := f.job(id)
	if j.State != models.JobFailed || j.Done != done || j.Message != message {
		f.T.Fatalf("job = %+v, want failed at row %d with %q", j, done, message)
	}
	if n := f.couponsOf(tid); n != want {
		f.T.Fatalf("template %d has %d coupons, want %d", tid, n, want)
	}
	f.assertNoDrift(tid, want)
	if got := f.auditActions(id); strings.Join(got, ",") != "job.create,job.start,job.failed" {
		f.T.Fatalf("audit = %v, want job.create, job.start, job.failed", got)
	}
}

// TestJobsArchivedTemplate: only a live template makes coupons, by any job
// (docs/jobs.md): an archived template (or one whose coupons would be born
// expired) takes no job, and a job whose template is archived while it runs
// stops, failed, with the coupons of its committed batches only.
func TestJobsArchivedTemplate(t *testing.T) {
	// Each case has its fixture: its checks fail its own test.
	setup := func(t *testing.T) (*jobFixture, *models.Campaign) {
		f := newJobFixture(t, services.Config{CodesConfig: services.CodesConfig{JobBatch: 40}})
		return f, f.Campaign(0)
	}

	t.Run("RefusedAtStart", func(t *testing.T) {
		f, c := setup(t)
		tp := f.Template(models.Template{CampaignID: c.ID, TotalStock: 20})
		f.archive(tp.ID)
		_, err := f.Codes.StartGenerate(f.Ctx, "admin", tp.ID, 5, "")
		assertJobCode(t, err, models.CodeNotClaimable, "")
		_, err = f.Codes.StartImport(f.Ctx, "admin", tp.ID, strings.NewReader("code\nARCH-AAAA-0001\n"))
		assertJobCode(t, err, models.CodeNotClaimable, "")
		_, err = f.Codes.StartIssue(f.Ctx, "admin", tp.ID, []string{"alice"})
		assertJobCode(t, err, models.CodeNotClaimable, "")
		if jobs, err := f.Codes.ListJobs(f.Ctx, tp.ID, 10); err != nil || len(jobs) != 0 {
			t.Fatalf("jobs = %v, %v; want none", jobs, err)
		}
		if n := f.couponsOf(tp.ID); n != 0 {
			t.Fatalf("%d coupons, want 0", n)
		}
	})

	t.Run("GenerateArchivedBetweenBatches", func(t *testing.T) {
		f, c := setup(t)
		tp := f.Template(models.Template{CampaignID: c.ID, TotalStock: 100})
		j, err := f.Codes.StartGenerate(f.Ctx, "admin", tp.ID, 100, "")
		if err != nil {
			t.Fatal(err)
		}
		f.archiveAfterRows(tp.ID, 40)
		f.runAll(f.Svc)
		f.assertStopped(j.ID, tp.ID, 40, 40, archivedStop)
	})

	t.Run("GenerateArchivedBeforeCommit", func(t *testing.T) {
		// The archive commits after the batch checked the template and took
		// its stock, before its transaction: the batch rolls back and gives
		// its stock back.
		f, c := setup(t)
		tp := f.Template(models.Template{CampaignID: c.ID, TotalStock: 100})
		j, err := f.Codes.StartGenerate(f.Ctx, "admin", tp.ID, 100, "")
		if err != nil {
			t.Fatal(err)
		}
		f.archiveBeforeCommit(tp.ID, 2)
		f.runAll(f.Svc)
		f.assertStopped(j.ID, tp.ID, 40, 40, archivedStop)
	})

	t.Run("ImportArchivedBeforeCommit", func(t *testing.T) {
		f, c := setup(t)
		tp := f.Template(models.Template{CampaignID: c.ID, TotalStock: 100})
		var file strings.Builder
		file.WriteString("code\n")
		for i := range 100 {
			fmt.Fprintf(&file, "IMPA-%04d\n", i)
		}
		j, err := f.Codes.StartImport(f.Ctx, "admin", tp.ID, strings.NewReader(file.String()))
		if err != nil {
			t.Fatal(err)
		}
		f.archiveBeforeCommit(tp.ID, 2)
		f.runAll(f.Svc)
		f.assertStopped(j.ID, tp.ID, 40, 40, archivedStop)
		if res := f.result(j.ID); len(res) != 1 {
			t.Fatalf("report = %v, want its header only", res)
		}
	})

	t.Run("ImportArchivedBetweenBatches", func(t *testing.T) {
		f, c := setup(t)
		tp := f.Template(models.Template{CampaignID: c.ID, TotalStock: 100})
		var file strings.Builder
		file.WriteString("code,user_id\n")
		for i := range 100 {
			user := ""
			if i%2 == 1 {
				user = fmt.Sprintf("imp%d", i)
			}
			fmt.Fprintf(&file, "IMPB-%04d,%s\n", i, user)
		}
		j, err := f.Codes.StartImport(f.Ctx, "admin", tp.ID, strings.NewReader(file.String()))
		if err != nil {
			t.Fatal(err)
		}
		f.archiveAfterRows(tp.ID, 40)
		f.runAll(f.Svc)
		f.assertStopped(j.ID, tp.ID, 40, 40, archivedStop)
	})

	t.Run("IssueArchivedBetweenBatches", func(t *testing.T) {
		// An issue job's batch is 500 users; the archive comes after the
		// first.
		f, c := setup(t)
		tp := f.Template(models.Template{CampaignID: c.ID, TotalStock: 600})
		users := make([]string, 520)
		for i := range users {
			users[i] = fmt.Sprintf("iss%04d", i)
		}
		j, err := f.Codes.StartIssue(f.Ctx, "admin", tp.ID, users)
		if err != nil {
			t.Fatal(err)
		}
		f.archiveAfterRows(tp.ID, 500)
		f.runAll(f.Svc)
		f.assertStopped(j.ID, tp.ID, 500, 500, archivedStop)
	})
}

// TestJobsBornExpired: a template with absolute validity whose valid_until
// has passed makes no coupon by any job: each would be born expired and
// take stock.
func TestJobsBornExpired(t *testing.T) {
	f := newJobFixture(t, services.Config{CodesConfig: services.CodesConfig{JobBatch: 40}})
	c := f.Campaign(0)
	now := f.Clock.Now()
	from, until := now, now.Add(time.Hour)
	tp := f.Template(models.Template{CampaignID: c.ID, TotalStock: 100, ValidFrom: &from, ValidUntil: &until})
	// A job queued while the coupons were valid stops when they are not.
	j, err := f.Codes.StartGenerate(f.Ctx, "admin", tp.ID, 10, "")
	if err != nil {
		t.Fatal(err)
	}
	f.Clock.Advance(2 * time.Hour)
	want := "not_claimable: the template's coupons stopped being valid at " + until.UTC().Format(time.RFC3339) +
		": any coupon made now would be born expired"
	_, err = f.Codes.StartGenerate(f.Ctx, "admin", tp.ID, 5, "")
	assertJobCode(t, err, models.CodeNotClaimable, "")
	if err.Error() != want {
		t.Fatalf("error = %q, want %q", err, want)
	}
	_, err = f.Codes.StartImport(f.Ctx, "admin", tp.ID, strings.NewReader("code\nEXPD-AAAA-0001\n"))
	assertJobCode(t, err, models.CodeNotClaimable, "")
	_, err = f.Codes.StartIssue(f.Ctx, "admin", tp.ID, []string{"alice"})
	assertJobCode(t, err, models.CodeNotClaimable, "")
	f.runAll(f.Svc)
	got := f.job(j.ID)
	if got.State != models.JobFailed || got.Done != 0 || got.Message != want+"; the job stopped and makes nothing more" {
		t.Fatalf("job = %+v, want failed at row 0, coupons born expired", got)
	}
	if n := f.couponsOf(tp.ID); n != 0 {
		t.Fatalf("%d coupons, want 0", n)
	}
}
