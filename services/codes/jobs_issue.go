package codes

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/couponsvc/couponsvc/services/claims"
	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"

	"gorm.io/gorm"
)

// MaxIssueUsers bounds the users of one issue job.
const MaxIssueUsers = 100_000

// issueBatch is the users of one committed batch of an issue job, and
// issueWorkers how many of its claims run at once.
const (
	issueBatch   = 500
	issueWorkers = 8
)

// Results of an issue job's rows besides the claim's refusal words
// (sold_out, user_limit_reached, budget_exhausted, not_claimable).
const (
	IssueClaimed         = "claimed"
	IssueDuplicateInList = "duplicate_in_list"
)

// StartIssue queues a job that gives each user of the list a coupon of the
// template through the claim path (docs/jobs.md). A user listed twice gets
// one coupon. Errors: CodeInvalidRequest (user_ids, naming the first bad
// one), CodeNotFound, CodeNotClaimable (the template is archived or its
// coupons expired, see mintRefusal), CodeUnavailable.
func (s *Codes) StartIssue(ctx context.Context, actor string, tid int64, userIDs []string) (*models.Job, error) {
	if len(userIDs) == 0 || len(userIDs) > MaxIssueUsers {
		return nil, models.Invalid("user_ids", "must list 1 to %d users", MaxIssueUsers)
	}
	for i, u := range userIDs {
		if err := models.ValidateUserID(fmt.Sprintf("user_ids[%d]", i), u); err != nil {
			return nil, err
		}
	}
	t, err := s.liveTemplate(ctx, tid)
	if err != nil {
		return nil, err
	}
	var out chunker
	for _, u := range userIDs {
		_, _ = out.Write([]byte(u + "\n"))
	}
	return s.createJob(ctx, &models.Job{Kind: models.JobIssue, TemplateID: t.ID, Total: int64(len(userIDs)), Actor: actor}, out.done())
}

// ParseUserList reads the users of an issue job from CSV: a header line
// with a user_id column, then a user a line; or, without such a header, a
// user id a line. Errors: CodeInvalidRequest (file).
func ParseUserList(r io.Reader) ([]string, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	col := 0
	var out []string
	for first := true; ; first = false {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvError(err, "")
		}
		if first {
			if i := headerIndex(rec, "user_id"); i >= 0 {
				col = i
				continue
			}
		}
		line, _ := cr.FieldPos(0)
		u := field(rec, col)
		if u == "" {
			continue
		}
		if err := models.ValidateUserID("file", u); err != nil {
			return nil, models.Invalid("file", "line %d: %q is not a user id (1 to 64 of A-Z a-z 0-9 . _ : @ -)", line, u)
		}
		if len(out) == MaxIssueUsers {
			return nil, models.Invalid("file", "lists more than %d users", MaxIssueUsers)
		}
		out = append(out, u)
	}
	if len(out) == 0 {
		return nil, models.Invalid("file", "lists no user")
	}
	return out, nil
}

func headerIndex(rec []string, name string) int {
	for i, h := range rec {
		if strings.EqualFold(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")), name) {
			return i
		}
	}
	return -1
}

// runIssue claims a coupon for each remaining user of the job. Each claim's
// idempotency key is the job and the user: a batch that ran before a crash
// and runs again gets the same coupons back (answered as claimed), never a
// second one.
func (s *Codes) runIssue(ctx context.Context, run *jobRun) error {
	j := run.job
	var users []string
	sc := bufio.NewScanner(&chunkReader{ctx: ctx, db: s.DB, job: j.ID, part: partInput, last: -1})
	for sc.Scan() {
		users = append(users, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return err
	}
	seen := make(map[string]bool, len(users))
	for _, u := range users[:min(int64(len(users)), j.Done)] {
		seen[u] = true
	}
	for j.Done < int64(len(users)) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		batch := users[j.Done:min(j.Done+issueBatch, int64(len(users)))]
		if err := s.checkLive(ctx, run); err != nil {
			return err
		}
		results, codes := make([]string, len(batch)), make([]string, len(batch))
		var todo []int
		for i, u := range batch {
			if seen[u] {
				results[i] = IssueDuplicateInList
				continue
			}
			seen[u] = true
			todo = append(todo, i)
		}
		if err := s.issueClaims(ctx, run, batch, todo, results, codes); err != nil {
			for _, i := range todo {
				delete(seen, batch[i])
			}
			return err
		}
		var report bytes.Buffer
		w := core.NewCSVWriter(&report)
		var refused int64
		for i, u := range batch {
			if results[i] != IssueClaimed {
				refused++
			}
			_ = w.Write([]string{u, results[i], codes[i]})
		}
		w.Flush()
		err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			return s.commitBatch(tx, run, int64(len(batch)), refused, report.Bytes(), "")
		})
		if err != nil {
			if errors.Is(err, errLeaseLost) {
				return err
			}
			return core.DBError("job", err)
		}
		if err := s.committed(run, int64(len(batch)), refused, report.Bytes(), ""); err != nil {
			return err
		}
	}
	return nil
}

// issueClaims claims the coupons of the batch's rows todo, a few at once.
// A fault (Redis or the database down) stops the batch: it runs again later,
// and the claims already made answer as replays.
func (s *Codes) issueClaims(ctx context.Context, run *jobRun, batch []string, todo []int, results, codes []string) error {
	j, t := run.job, run.t
	var wg sync.WaitGroup
	var mu sync.Mutex
	var fault error
	next := make(chan int)
	for range min(issueWorkers, len(todo)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				res, err := s.claims.Claim(ctx, claims.ClaimRequest{TemplateID: t.ID, UserID: batch[i],
					IdempotencyKey: fmt.Sprintf("job%d:%s", j.ID, batch[i])})
				switch {
				case err == nil:
					results[i], codes[i] = IssueClaimed, res.Coupon.Code
				case models.IsCode(err, models.CodeUnavailable), models.IsCode(err, models.CodeInProgress),
					models.IsCode(err, models.CodeInvalidRequest):
					mu.Lock()
					if fault == nil {
						fault = err
					}
					mu.Unlock()
				default:
					results[i] = models.ErrorCode(err).Word()
				}
			}
		}()
	}
	for _, i := range todo {
		next <- i
	}
	close(next)
	wg.Wait()
	if fault != nil && models.IsCode(fault, models.CodeInvalidRequest) {
		return fmt.Errorf("issue: %w", fault)
	}
	return fault
}
