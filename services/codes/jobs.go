package codes

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Parts of a job's stored data (table job_chunks).
const (
	partInput  = "input"
	partResult = "result"
)

// chunkBytes bounds one stored piece of a job's input or result, well below
// MySQL's smallest max_allowed_packet in use.
const chunkBytes = 1 << 20

// errLeaseLost stops a runner whose job another instance took over (the
// lease ran out while this one stalled): nothing of its batch was committed.
var errLeaseLost = errors.New("the job's lease was lost")

// jobRun is a job as its runner holds it.
type jobRun struct {
	job *models.Job
	t   *models.Template
}

// GetJob returns a job. Errors: CodeNotFound, CodeUnavailable.
func (s *Codes) GetJob(ctx context.Context, id int64) (*models.Job, error) {
	return core.ByID[models.Job](ctx, s.DB, "job", id)
}

// ListJobs returns a template's jobs, newest first, at most limit.
// Errors: CodeUnavailable.
func (s *Codes) ListJobs(ctx context.Context, tid int64, limit int) ([]models.Job, error) {
	if limit <= 0 || limit > 100 {
		limit = 20
	}
	var out []models.Job
	err := s.DB.WithContext(ctx).Where("template_id = ?", tid).Order("id DESC").Limit(limit).Find(&out).Error
	return out, core.DBError("jobs", err)
}

// JobResultName is the file name a job's result CSV is downloaded under.
func JobResultName(j *models.Job) string {
	return fmt.Sprintf("job-%d-%s.csv", j.ID, j.Kind)
}

// WriteJobResult writes a job's result CSV to w, one stored piece at a
// time, so that a large result is never held in memory. The result grows
// while the job runs; a finished job's is complete. Errors: CodeNotFound,
// CodeUnavailable (before anything was written; after, w has a cut file).
func (s *Codes) WriteJobResult(ctx context.Context, id int64, w io.Writer) error {
	j, err := s.GetJob(ctx, id)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, jobResultHeader(j.Kind)); err != nil {
		return err
	}
	r := &chunkReader{ctx: ctx, db: s.DB, job: id, part: partResult, last: j.ResultParts}
	_, err = io.Copy(w, r)
	return err
}

// jobResultHeader is the first line of a kind's result CSV.
func jobResultHeader(kind string) string {
	switch kind {
	case models.JobGenerate:
		return "code\n"
	case models.JobImport:
		return "line,code,reason\n"
	default:
		return "user_id,result,coupon_code\n"
	}
}

// createJob inserts a queued job and its input (nil: none) in one
// transaction, with an audit entry. It first locks the template's campaign
// and template rows, in the order a template's delete locks them: a delete
// that saw no job either commits first (the job is then refused
// CodeNotFound) or waits for the job and then refuses CodeInUse
// (docs/flows.md).
func (s *Codes) createJob(ctx context.Context, j *models.Job, input [][]byte) (*models.Job, error) {
	now := s.Clock()
	j.State = models.JobQueued
	j.CreatedAt = now
	if h := s.Hooks.BeforeJobCreate; h != nil {
		h(j.TemplateID)
	}
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := lockJobTemplate(tx, j.TemplateID); err != nil {
			return err
		}
		if h := s.Hooks.JobTemplateLocked; h != nil {
			h(j.TemplateID)
		}
		if err := tx.Create(j).Error; err != nil {
			return err
		}
		for i, data := range input {
			if err := tx.Create(&models.JobChunk{JobID: j.ID, Part: partInput, Seq: int64(i), Data: data}).Error; err != nil {
				return err
			}
		}
		return s.Audit(tx, j.Actor, "job.create", jobTarget(j.ID),
			fmt.Sprintf("%s on template %d: %d rows", j.Kind, j.TemplateID, j.Total))
	})
	if err != nil {
		return nil, core.DBError("job", err)
	}
	return j, nil
}

// lockJobTemplate locks the rows of template tid and of its campaign (FOR
// UPDATE), campaign first as DeleteTemplate does. Errors: CodeNotFound when
// the template is gone.
func lockJobTemplate(tx *gorm.DB, tid int64) error {
	var cids []int64
	if err := tx.Model(&models.Template{}).Where("id = ?", tid).Limit(1).Pluck("campaign_id", &cids).Error; err != nil {
		return err
	}
	var ids []int64
	if len(cids) == 1 {
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Model(&models.Campaign{}).
			Where("id = ?", cids[0]).Pluck("id", &ids).Error; err != nil {
			return err
		}
		ids = nil
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Model(&models.Template{}).
			Where("id = ?", tid).Pluck("id", &ids).Error; err != nil {
			return err
		}
	}
	if len(ids) == 0 {
		return models.Errorf(models.CodeNotFound, "template %d not found", tid)
	}
	return nil
}

func jobTarget(id int64) string { return "job:" + strconv.FormatInt(id, 10) }

// RunJobs runs the queued jobs, and those whose runner died (their lease
// ran out), every JobPoll until ctx ends. Every instance runs it; the lease
// lets one instance at a time run a job.
func (s *Codes) RunJobs(ctx context.Context) {
	s.RunEvery(ctx, s.cfg.JobPoll, "run jobs", func(ctx context.Context) error {
		for ctx.Err() == nil {
			ran, err := s.RunJobOnce(ctx)
			if err != nil || !ran {
				return err
			}
		}
		return nil
	})
}

// RunJobOnce takes one job that needs a runner and runs it to its end, or
// until ctx ends, its lease is lost, or a fault stops it (it is then left
// for a later pass, from where it stopped). It reports whether it found a
// job. Errors: CodeUnavailable.
func (s *Codes) RunJobOnce(ctx context.Context) (bool, error) {
	run, resumed, err := s.takeJob(ctx)
	if err != nil || run == nil {
		return false, err
	}
	err = s.runJob(ctx, run, resumed)
	switch {
	case err == nil, errors.Is(err, errLeaseLost), errors.Is(err, errAbandoned):
		return true, nil
	case ctx.Err() != nil:
		// Shutting down: let another instance (or this one, restarted) go
		// on at once rather than after the lease.
		s.releaseLease(run)
		return true, nil
	case models.IsCode(err, models.CodeUnavailable):
		s.releaseLease(run)
		return true, err
	case models.IsCode(err, models.CodeInProgress), models.IsCode(err, models.CodeBusy):
		// A claim of the job's own key is still pending (a killed run's
		// reservation, settled by the sweeper) or a lock is taken: the
		// batch runs again at a later poll, where it answers as a replay.
		s.releaseLease(run)
		return true, nil
	}
	return true, s.finishJob(ctx, run, models.JobFailed, err.Error())
}

// errAbandoned is returned by a runner that a test hook stopped as a killed
// process would stop: no clean-up, the lease left to run out.
var errAbandoned = errors.New("job abandoned by a test hook")

// takeJob leases the oldest job that is queued or whose lease ran out.
// resumed tells that another runner had started it.
func (s *Codes) takeJob(ctx context.Context) (*jobRun, bool, error) {
	now := s.Clock()
	var cands []models.Job
	err := s.DB.WithContext(ctx).Where("state = ? OR (state = ? AND lease_until < ?)", models.JobQueued, models.JobRunning, now).
		Order("id").Limit(5).Find(&cands).Error
	if err != nil {
		return nil, false, core.DBError("jobs", err)
	}
	for i := range cands {
		j := &cands[i]
		resumed := j.State == models.JobRunning
		lease := now.Add(s.cfg.JobLease)
		var took bool
		err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			res := tx.Model(&models.Job{}).
				Where("id = ? AND (state = ? OR (state = ? AND lease_until < ?))", j.ID, models.JobQueued, models.JobRunning, now).
				Updates(map[string]any{"state": models.JobRunning, "owner": s.owner, "lease_until": lease,
					"started_at": gorm.Expr("COALESCE(started_at, ?)", now)})
			if res.Error != nil || res.RowsAffected == 0 {
				return res.Error
			}
			took = true
			action, detail := "job.start", fmt.Sprintf("%s on template %d: %d rows", j.Kind, j.TemplateID, j.Total)
			switch {
			case resumed && j.Owner != nil && *j.Owner == s.owner:
				// This instance let the job go after a fault and takes it
				// again: nothing new for the audit log.
				return nil
			case resumed:
				action, detail = "job.resume", fmt.Sprintf("%s on template %d from row %d of %d", j.Kind, j.TemplateID, j.Done, j.Total)
			}
			return s.Audit(tx, "instance:"+s.owner, action, jobTarget(j.ID), detail)
		})
		if err != nil {
			return nil, false, core.DBError("job", err)
		}
		if !took {
			continue // another instance was quicker
		}
		j.State, j.Owner, j.LeaseUntil = models.JobRunning, &s.owner, &lease
		t, err := s.GetTemplate(ctx, j.TemplateID)
		if err != nil {
			run := &jobRun{job: j}
			if models.IsCode(err, models.CodeNotFound) {
				return nil, false, s.finishJob(ctx, run, models.JobFailed, "the template is gone")
			}
			s.releaseLease(run)
			return nil, false, err
		}
		return &jobRun{job: j, t: t}, resumed, nil
	}
	return nil, false, nil
}

// runJob runs a leased job's batches until the last.
func (s *Codes) runJob(ctx context.Context, run *jobRun, resumed bool) error {
	if resumed && run.job.Kind != models.JobIssue {
		// The dead runner may have taken slots in Redis for a batch it never
		// committed: the database, which has only committed batches, says
		// what the counters are.
		if err := s.Resync(ctx, run.t.CampaignID); err != nil {
			return err
		}
	}
	var err error
	switch run.job.Kind {
	case models.JobGenerate:
		err = s.runGenerate(ctx, run)
	case models.JobImport:
		err = s.runImport(ctx, run)
	case models.JobIssue:
		err = s.runIssue(ctx, run)
	default:
		err = fmt.Errorf("unknown job kind %q", run.job.Kind)
	}
	if err != nil {
		return err
	}
	return s.finishJob(ctx, run, models.JobDone, run.job.Message)
}

// commitBatch records a batch's progress inside tx, the transaction that
// writes the batch's effect: done and errors grow, the lease is renewed, and
// the batch's result piece (if any) is stored. The guard on owner and done
// makes a runner that lost its lease, or a batch already committed, change
// nothing (errLeaseLost), and the transaction is rolled back.
func (s *Codes) commitBatch(tx *gorm.DB, run *jobRun, rows, errs int64, result []byte, message string) error {
	j := run.job
	parts := int64(0)
	if len(result) > 0 {
		parts = 1
	}
	set := map[string]any{"done": gorm.Expr("done + ?", rows), "errors": gorm.Expr("errors + ?", errs),
		"lease_until": s.Clock().Add(s.cfg.JobLease), "result_parts": gorm.Expr("result_parts + ?", parts)}
	if message != "" {
		set["message"] = message
	}
	res := tx.Model(&models.Job{}).Where("id = ? AND owner = ? AND done = ? AND state = ?", j.ID, s.owner, j.Done, models.JobRunning).
		Updates(set)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return errLeaseLost
	}
	if parts == 1 {
		if err := tx.Create(&models.JobChunk{JobID: j.ID, Part: partResult, Seq: j.ResultParts, Data: result}).Error; err != nil {
			return err
		}
	}
	return nil
}

// committed updates the runner's copy after commitBatch's transaction
// committed, and lets a test stop the runner there.
func (s *Codes) committed(run *jobRun, rows, errs int64, result []byte, message string) error {
	run.job.Done += rows
	run.job.Errors += errs
	if len(result) > 0 {
		run.job.ResultParts++
	}
	if message != "" {
		run.job.Message = message
	}
	if h := s.Hooks.AfterJobBatch; h != nil && h(run.job.ID, run.job.Done) {
		return errAbandoned
	}
	return nil
}

// finishJob ends a job in state (done or failed) with an audit entry, if
// this runner still holds it.
func (s *Codes) finishJob(ctx context.Context, run *jobRun, state, message string) error {
	j := run.job
	now := s.Clock()
	if len(message) > 400 {
		message = message[:400]
	}
	err := s.DB.WithContext(context.WithoutCancel(ctx)).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&models.Job{}).Where("id = ? AND owner = ? AND state = ?", j.ID, s.owner, models.JobRunning).
			Updates(map[string]any{"state": state, "finished_at": now, "lease_until": nil, "message": message})
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		return s.Audit(tx, "instance:"+s.owner, "job."+state, jobTarget(j.ID),
			fmt.Sprintf("%s on template %d: %d of %d rows, %d refused %s", j.Kind, j.TemplateID, j.Done, j.Total, j.Errors, message))
	})
	if err != nil {
		return core.DBError("job", err)
	}
	j.State, j.FinishedAt = state, &now
	return nil
}

// releaseLease lets another pass take the job at once (after a fault or at
// shutdown); it stays running, and resumes from its last committed batch.
func (s *Codes) releaseLease(run *jobRun) {
	ctx, cancel := context.WithTimeout(context.Background(), s.Cfg.DBTimeout)
	defer cancel()
	err := s.DB.WithContext(ctx).Model(&models.Job{}).Where("id = ? AND owner = ? AND state = ?", run.job.ID, s.owner, models.JobRunning).
		Update("lease_until", s.Clock().Add(-time.Millisecond)).Error
	if err != nil {
		s.Log.Warn("release a job's lease; it runs out by itself", "job", run.job.ID, "err", err)
	}
}

// newOwner names this instance in the leases it takes.
func newOwner() string { return rand.Text()[:16] }

// chunkReader reads a job's stored input or result piece by piece.
type chunkReader struct {
	ctx  context.Context
	db   *gorm.DB
	job  int64
	part string
	// last bounds the pieces read (-1: all there are).
	last int64
	seq  int64
	buf  []byte
}

func (r *chunkReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.last >= 0 && r.seq >= r.last {
			return 0, io.EOF
		}
		var c models.JobChunk
		err := r.db.WithContext(r.ctx).Where("job_id = ? AND part = ? AND seq = ?", r.job, r.part, r.seq).Take(&c).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return 0, io.EOF
		}
		if err != nil {
			return 0, core.DBError("job data", err)
		}
		r.seq++
		r.buf = c.Data
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// chunker cuts a stream into pieces of at most chunkBytes.
type chunker struct {
	chunks [][]byte
	cur    []byte
}

func (c *chunker) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if c.cur == nil {
			c.cur = make([]byte, 0, chunkBytes)
		}
		k := min(len(p), chunkBytes-len(c.cur))
		c.cur = append(c.cur, p[:k]...)
		p = p[k:]
		if len(c.cur) == chunkBytes {
			c.chunks = append(c.chunks, c.cur)
			c.cur = nil
		}
	}
	return n, nil
}

// done returns the pieces.
func (c *chunker) done() [][]byte {
	if len(c.cur) > 0 {
		c.chunks = append(c.chunks, c.cur)
		c.cur = nil
	}
	return c.chunks
}
