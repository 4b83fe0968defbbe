package services_test

import (
	"sync"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
)

// jobRows counts the code jobs of template tid.
func (f *claimFixture) jobRows(tid int64) int64 {
	f.T.Helper()
	var n int64
	if err := f.Env.Backends.DB.Model(&models.Job{}).Where("template_id = ?", tid).Count(&n).Error; err != nil {
		f.T.Fatal(err)
	}
	return n
}

// templateRows counts the rows of template tid (0 once deleted).
func (f *claimFixture) templateRows(tid int64) int64 {
	f.T.Helper()
	var n int64
	if err := f.Env.Backends.DB.Model(&models.Template{}).Where("id = ?", tid).Count(&n).Error; err != nil {
		f.T.Fatal(err)
	}
	return n
}

// TestDeleteTemplateJobOrder: a template's delete and a code job's creation
// serialise on the template's rows (docs/flows.md). A delete committed after
// the job read its template refuses the job not_found and leaves no job; a
// delete that starts while the job holds the rows waits for it and answers
// in_use.
func TestDeleteTemplateJobOrder(t *testing.T) {
	t.Run("DeleteFirst", func(t *testing.T) {
		f := newClaimFixture(t, services.Config{})
		tp := f.template(f.Campaign(0).ID, 10, 1, 100)
		var delErr error
		f.Svc.SetJobCreateHooks(func(int64) { delErr = f.Admin.DeleteTemplate(f.Ctx, "admin", tp.ID) }, nil)
		_, err := f.Codes.StartGenerate(f.Ctx, "admin", tp.ID, 2, "")
		if delErr != nil {
			t.Fatalf("delete: %v", delErr)
		}
		assertClaimCode(t, err, models.CodeNotFound)
		if n := f.jobRows(tp.ID); n != 0 {
			t.Fatalf("%d jobs of the deleted template, want 0", n)
		}
	})
	t.Run("JobFirst", func(t *testing.T) {
		f := newClaimFixture(t, services.Config{})
		tp := f.template(f.Campaign(0).ID, 10, 1, 100)
		done := make(chan error, 1)
		f.Svc.SetJobCreateHooks(nil, func(int64) {
			go func() { done <- f.Admin.DeleteTemplate(f.Ctx, "admin", tp.ID) }()
			time.Sleep(100 * time.Millisecond) // the delete is now waiting for the rows
		})
		if _, err := f.Codes.StartGenerate(f.Ctx, "admin", tp.ID, 2, ""); err != nil {
			t.Fatalf("job: %v", err)
		}
		assertClaimCode(t, <-done, models.CodeInUse)
		if jobs, left := f.jobRows(tp.ID), f.templateRows(tp.ID); jobs != 1 || left != 1 {
			t.Fatalf("%d jobs, %d template rows; want 1 and 1", jobs, left)
		}
	})
}

// TestDeleteTemplateJobRace: a code job's creation and the template's
// delete released together, many rounds: exactly one wins each round, and
// never is a job left on a deleted template.
func TestDeleteTemplateJobRace(t *testing.T) {
	f := newClaimFixture(t, services.Config{})
	c := f.Campaign(0)
	wins := map[string]int{}
	for round := 0; round < 20; round++ {
		tp := f.template(c.ID, 10, 1, 100)
		var jobErr, delErr error
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			_, jobErr = f.Codes.StartGenerate(f.Ctx, "admin", tp.ID, 2, "")
		}()
		go func() {
			defer wg.Done()
			<-start
			time.Sleep(time.Duration(round%4) * time.Millisecond)
			delErr = f.Admin.DeleteTemplate(f.Ctx, "admin", tp.ID)
		}()
		close(start)
		wg.Wait()
		jobs, left := f.jobRows(tp.ID), f.templateRows(tp.ID)
		switch {
		case jobErr == nil && models.IsCode(delErr, models.CodeInUse) && jobs == 1 && left == 1:
			wins["job"]++
		case delErr == nil && models.IsCode(jobErr, models.CodeNotFound) && jobs == 0 && left == 0:
			wins["delete"]++
		default:
			t.Fatalf("round %d: job %v, delete %v, %d jobs, %d template rows", round, jobErr, delErr, jobs, left)
		}
	}
	if wins["job"]+wins["delete"] != 20 {
		t.Fatalf("wins %v, want 20 rounds", wins)
	}
}
