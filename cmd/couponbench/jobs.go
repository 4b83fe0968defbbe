package main

import (
	couponclient "github.com/couponsvc/couponsvc/client"

	"bufio"
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// jobState is what a job's state answers.
type jobState = couponclient.JobAnswer

// generate starts a generation job of n codes on tid and waits until it is
// finished, polling its state.
func (e *env) generate(ctx context.Context, tid int64, n int, pattern string) (jobState, error) {
	body := couponclient.GenerateRequest{Count: int64(n)}
	if pattern != "" {
		body.Pattern = &pattern
	}
	a, j := call(ctx, func(ctx context.Context) (*couponclient.JobAnswer, error) {
		return e.c.admin.GenerateCodes(ctx, tid, body)
	}, func(j *couponclient.JobAnswer) string { return j.Result })
	if err := mustOK("generate", a, 202); err != nil {
		return jobState{}, err
	}
	for j.State != "done" && j.State != "failed" {
		select {
		case <-ctx.Done():
			return *j, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		id := j.Job.ID
		a, j = call(ctx, func(ctx context.Context) (*couponclient.JobAnswer, error) {
			return e.c.admin.GetJob(ctx, id)
		}, func(j *couponclient.JobAnswer) string { return j.Result })
		if err := mustOK("job", a, 200); err != nil {
			return jobState{}, err
		}
	}
	return *j, nil
}

// runGenerate measures bulk codes: one job of z.codes bearer codes from a
// pattern, timed from the request to the job's end, written by the service
// into its database with their stock taken in Redis.
func (e *env) runGenerate(ctx context.Context) *Summary {
	n := e.z.codes
	s, tid := e.jobScenario(ctx, "generate", "code", n,
		fmt.Sprintf("one job of %d bearer codes (pattern BENCH-####-####-##), batches of 5000 rows a transaction", n))
	if s.Error != "" {
		return s
	}
	rss := startRSS(e.rssPID, 100*time.Millisecond)
	start := time.Now()
	j, err := e.generate(ctx, tid, n, "BENCH-####-####-##")
	elapsed := time.Since(start)
	s.MaxRSSMB = rss.Stop()
	if err != nil {
		s.Error = err.Error()
		return s
	}
	t := newTally(1)
	t.results["code"] = int(j.Done - j.Errors)
	t.results["refused"] = int(j.Errors)
	t.lat = append(t.lat, elapsed)
	s.fill(t, elapsed)
	s.check("job done", j.State == "done" && j.Done == int64(n) && j.Errors == 0, "state %s, %d of %d, %d refused", j.State, j.Done, n, j.Errors)
	row, err := e.c.reconcile(ctx, tid)
	s.check("no drift", err == nil && row.Drift == 0, "reconcile: %+v %v", row, err)
	return s
}

// runRawInsert is the reference of generate: the same rows (random codes of
// the same length, request ids, slots, times) written by plain multi-row
// INSERTs of 1000 rows, 5000 a transaction, on one connection, into a table
// with the same unique indexes as user_coupons, and nothing else around it.
func runRawInsert(ctx context.Context, db *sql.DB, runID string, n int) *Summary {
	s := &Summary{Name: "rawinsert", OKWord: "code", Concurrency: 1,
		Params: fmt.Sprintf("%d rows, INSERT of 1000 rows, 5000 a transaction, unique code, request id and slot", n)}
	return rawInsert(ctx, db, s, "bench_bulk_"+runID, runID, n, "CREATE TABLE %s "+rawInsertColumns)
}

// runRawSchema is rawinsert into a copy of the service's own user_coupons
// table (CREATE TABLE LIKE: every column and index it has, all of them kept
// up by each row; no foreign key): what plain INSERTs reach on the schema
// the generation job writes to. db must be the service's database.
func runRawSchema(ctx context.Context, db *sql.DB, runID string, n int) *Summary {
	s := &Summary{Name: "rawschema", OKWord: "code", Concurrency: 1,
		Params: fmt.Sprintf("%d rows, as rawinsert, into a copy of the service's user_coupons (all its indexes)", n)}
	return rawInsert(ctx, db, s, "bench_schema_"+runID, runID, n, "CREATE TABLE %s LIKE user_coupons")
}

// rawInsertColumns is rawinsert's table: the columns the rows fill and the
// unique indexes of user_coupons.
const rawInsertColumns = `(id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
		code VARBINARY(64) NOT NULL, template_id BIGINT NOT NULL, campaign_id BIGINT NOT NULL, user_id VARBINARY(64) NOT NULL,
		status VARCHAR(10) NOT NULL, slot BIGINT NULL, user_ordinal BIGINT NULL, request_id VARBINARY(128) NOT NULL,
		value_cents BIGINT NOT NULL, claimed_at DATETIME(6) NOT NULL, valid_from DATETIME(6) NOT NULL,
		valid_until DATETIME(6) NOT NULL, version BIGINT NOT NULL DEFAULT 0, updated_at DATETIME(6) NOT NULL,
		UNIQUE KEY uq_code (code), UNIQUE KEY uq_request (request_id), UNIQUE KEY uq_slot (template_id, slot),
		UNIQUE KEY uq_user_ordinal (template_id, user_id, user_ordinal), KEY idx_template_id (template_id, id)) ENGINE=InnoDB`

// rawInsert creates table tbl by create (a format with the table's name) and
// writes n rows into it as rawinsert describes.
func rawInsert(ctx context.Context, db *sql.DB, s *Summary, tbl, runID string, n int, create string) *Summary {
	defer dropTables(db, tbl)
	err := execAll(ctx, db, fmt.Sprintf(create, tbl))
	if err != nil {
		s.Error = err.Error()
		return s
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	defer conn.Close()
	const alphabet = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"
	raw := make([]byte, 10*5000)
	head := "INSERT INTO " + tbl + " (code, template_id, campaign_id, user_id, status, slot, request_id, value_cents, " +
		"claimed_at, valid_from, valid_until, version, updated_at) VALUES "
	start := time.Now()
	for done := 0; done < n; {
		if ctx.Err() != nil {
			s.Error = ctx.Err().Error()
			return s
		}
		batch := min(5000, n-done)
		rand.Read(raw)
		now := time.Now().UTC()
		until := now.Add(30 * 24 * time.Hour)
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			s.Error = err.Error()
			return s
		}
		for lo := 0; lo < batch; lo += 1000 {
			var q strings.Builder
			q.WriteString(head)
			args := make([]any, 0, 7000)
			for i := lo; i < min(lo+1000, batch); i++ {
				if i > lo {
					q.WriteByte(',')
				}
				q.WriteString("(?,1,1,'','issued',?,?,100,?,?,?,0,?)")
				code := make([]byte, 0, 17)
				code = append(code, "BENCH"...)
				for _, b := range raw[i*10 : i*10+10] {
					code = append(code, alphabet[int(b)%32])
				}
				code = append(code, 'Z') // the check character's place
				row := done + i + 1
				args = append(args, string(code), row, fmt.Sprintf("raw%s:%d", runID, row), now, now, until, now)
			}
			if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
				tx.Rollback()
				s.Error = err.Error()
				return s
			}
		}
		if err := tx.Commit(); err != nil {
			s.Error = err.Error()
			return s
		}
		done += batch
	}
	elapsed := time.Since(start)
	t := newTally(1)
	t.results["code"] = n
	t.lat = append(t.lat, elapsed)
	s.fill(t, elapsed)
	var rows int
	err = db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+tbl).Scan(&rows)
	s.check("row count", err == nil && rows == n, "%d rows, want %d (%v)", rows, n, err)
	return s
}

// runExport measures the export: z.export coupons made by a generation job
// (untimed), then GET /api/v1/templates/:id/coupons.csv read to its end,
// with the service's peak RSS (pass -service-pid).
func (e *env) runExport(ctx context.Context) *Summary {
	n := e.z.export
	s, tid := e.jobScenario(ctx, "export", "row", n, fmt.Sprintf("CSV export of %d coupons, streamed", n))
	if s.Error != "" {
		return s
	}
	if j, err := e.generate(ctx, tid, n, ""); err != nil || j.State != "done" {
		s.Error = fmt.Sprintf("make the coupons: %+v %v", j, err)
		return s
	}
	// No overall timeout: the stream takes what it takes.
	gc := e.c.with(&http.Client{Transport: e.c.hc.Transport}, e.c.adminToken)
	rss := startRSS(e.rssPID, 50*time.Millisecond)
	start := time.Now()
	x := &exchange{}
	body, err := gc.ExportCoupons(context.WithValue(ctx, exchangeKey{}, x), tid, couponclient.ExportCouponsParams{})
	if err != nil {
		rss.Stop()
		s.Error = err.Error()
		return s
	}
	defer body.Close()
	lines := 0
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		lines++
	}
	elapsed := time.Since(start)
	s.MaxRSSMB = rss.Stop()
	t := newTally(1)
	t.results["row"] = max(lines-1, 0)
	t.lat = append(t.lat, elapsed)
	s.fill(t, elapsed)
	s.check("every coupon exported", x.status == 200 && sc.Err() == nil && lines == n+1,
		"HTTP %d, %d lines for %d coupons and a header (%v)", x.status, lines, n, sc.Err())
	return s
}

// jobScenario starts the summary of a job scenario (one request at a time)
// and creates its template (n coupons of 100 cents, one a user); a failure
// is the summary's error.
func (e *env) jobScenario(ctx context.Context, name, okWord string, n int, params string) (*Summary, int64) {
	s := &Summary{Name: name, OKWord: okWord, Concurrency: 1, Params: params}
	tid, err := e.c.createTemplate(ctx, templateSpec{name: name + "-" + e.runID, stock: n, limit: 1, faceValue: 100})
	if err != nil {
		s.Error = err.Error()
	}
	return s, tid
}
