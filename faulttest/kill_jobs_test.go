package faulttest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/client"
	"github.com/couponsvc/couponsvc/models"
)

// waitJob polls a job until until says so, or fails the test after d. d
// only guards against a job that is stuck: it is minutes, since a job under
// the race detector on a busy CI machine writes a few hundred codes a second
// (speed is measured by couponbench, not here).
func waitJob(t *testing.T, c *apiClient, id int64, d time.Duration, until func(job *client.JobAnswer) bool) *client.JobAnswer {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		status := 0
		job, err := c.GetJob(context.Background(), id, client.Status(&status))
		wantStatus(t, fmt.Sprintf("job %d", id), status, err, 200)
		if until(job) {
			return job
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d after %v: %+v", id, d, job)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestKillDuringGenerateJob: couponsvc is generating 100,000 bearer codes
// and is killed with SIGKILL mid-job (between two batches or inside one: a
// batch may have taken its slots in Redis and not committed). A new process
// resumes the job once its lease ran out: exactly 100,000 coupons with
// 100,000 distinct codes and slots, the job done with no error, and zero
// drift between Redis and the database.
func TestKillDuringGenerateJob(t *testing.T) {
	const count = 100_000
	ps := newProcs(t, "COUPON_JOB_LEASE=2s")
	b := ps.b

	p1, admin := ps.start("couponsvc#1")
	tmpls := []*tmplSpec{{stock: count, limit: 1, policy: models.RefundRestore}}
	setUp(t, admin, 0, tmpls)
	tid := tmpls[0].id
	status := 0
	out, err := admin.GenerateCodes(context.Background(), tid, client.GenerateRequest{Count: count, Pattern: client.Ptr("KILL-####-####-##")},
		client.Status(&status))
	wantStatus(t, "generate codes", status, err, 202)
	id := out.Job.ID
	mid := waitJob(t, admin, id, 4*time.Minute, func(j *client.JobAnswer) bool { return j.Done >= 20_000 })
	p1.kill()
	report(t, "killed at %d of %d codes", mid.Done, count)

	_, admin2 := ps.start("couponsvc#2")
	job := waitJob(t, admin2, id, 8*time.Minute, func(j *client.JobAnswer) bool { return j.State == "done" || j.State == "failed" })
	if job.State != "done" || job.Done != count || job.Errors != 0 {
		t.Fatalf("job after the restart: %+v", job)
	}
	var fig struct{ N, Codes, Slots, MaxSlot int64 }
	if err := b.db.Raw("SELECT COUNT(*) AS n, COUNT(DISTINCT code) AS codes, COUNT(DISTINCT slot) AS slots, MAX(slot) AS max_slot "+
		"FROM user_coupons WHERE template_id = ?", tid).Scan(&fig).Error; err != nil {
		t.Fatal(err)
	}
	if fig.N != count || fig.Codes != count || fig.Slots != count || fig.MaxSlot != count {
		t.Fatalf("database: %+v, want %d coupons, codes and slots", fig, count)
	}
	rows, err := reconcileReport(admin2)
	if err != nil {
		t.Fatal(err)
	}
	if stock, users := drift(rows); stock != 0 || users != 0 {
		t.Fatalf("drift after the resumed job: stock %d, users %d\n%s", stock, users, showRows(rows))
	}
	var resumed int64
	b.db.Raw("SELECT COUNT(*) FROM audit_log WHERE action = 'job.resume' AND target = ?", fmt.Sprintf("job:%d", id)).Scan(&resumed)
	if resumed != 1 {
		t.Fatalf("%d job.resume audit entries, want 1", resumed)
	}
}

// TestKillDuringIssueJob: couponsvc is issuing coupons to 3,000 users and is
// killed with SIGKILL mid-job (claims of a batch may be done while the
// batch's progress is not committed). The resumed job gives each user
// exactly one coupon: the claims' idempotency keys (job and user) make the
// batch that runs again find the coupons it made.
func TestKillDuringIssueJob(t *testing.T) {
	const users = 3000
	ps := newProcs(t, "COUPON_JOB_LEASE=2s")
	b := ps.b

	p1, admin := ps.start("couponsvc#1")
	tmpls := []*tmplSpec{{stock: users, limit: 5, policy: models.RefundRestore}}
	setUp(t, admin, 0, tmpls)
	tid := tmpls[0].id
	list := make([]string, users)
	for i := range list {
		list[i] = fmt.Sprintf("ki-u%05d", i)
	}
	status := 0
	out, err := admin.IssueCoupons(context.Background(), tid, client.IssueRequest{UserIds: list}, client.Status(&status))
	wantStatus(t, "issue coupons", status, err, 202)
	id := out.Job.ID
	mid := waitJob(t, admin, id, 4*time.Minute, func(j *client.JobAnswer) bool { return j.Done >= 500 })
	p1.kill()
	report(t, "killed at %d of %d users", mid.Done, users)

	_, admin2 := ps.start("couponsvc#2")
	job := waitJob(t, admin2, id, 8*time.Minute, func(j *client.JobAnswer) bool { return j.State == "done" || j.State == "failed" })
	if job.State != "done" || job.Done != users || job.Errors != 0 {
		t.Fatalf("job after the restart: %+v", job)
	}
	var fig struct{ N, Users, MaxPerUser int64 }
	if err := b.db.Raw("SELECT COUNT(*) AS n, COUNT(DISTINCT user_id) AS users, "+
		"(SELECT MAX(k) FROM (SELECT COUNT(*) AS k FROM user_coupons WHERE template_id = ? GROUP BY user_id) per) AS max_per_user "+
		"FROM user_coupons WHERE template_id = ?", tid, tid).Scan(&fig).Error; err != nil {
		t.Fatal(err)
	}
	if fig.N != users || fig.Users != users || fig.MaxPerUser != 1 {
		t.Fatalf("database: %+v, want %d coupons, one per user", fig, users)
	}
	rows, err := reconcileReport(admin2)
	if err != nil {
		t.Fatal(err)
	}
	if stock, u := drift(rows); stock != 0 || u != 0 {
		t.Fatalf("drift after the resumed job: stock %d, users %d\n%s", stock, u, showRows(rows))
	}
}
