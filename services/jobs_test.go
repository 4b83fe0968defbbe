package services_test

import (
	"bytes"
	"crypto/rand"
	"encoding/csv"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	codesvc "github.com/couponsvc/couponsvc/services/codes"
	"github.com/couponsvc/couponsvc/services/reconcile"
	"github.com/couponsvc/couponsvc/services/testenv"
)

// jobFixture runs jobs on the shared fixture.
type jobFixture struct{ *testenv.Fixture }

func newJobFixture(t *testing.T, cfg services.Config) *jobFixture {
	t.Helper()
	return &jobFixture{testenv.NewFixtureAt(t, cfg, time.Now().UTC().Truncate(time.Second))}
}

// runAll runs svc's jobs until none is left to take.
func (f *jobFixture) runAll(svc *services.App) {
	f.T.Helper()
	for {
		ran, err := svc.RunJobOnce(f.Ctx)
		if err != nil {
			f.T.Fatalf("run jobs: %v", err)
		}
		if !ran {
			return
		}
	}
}

func (f *jobFixture) job(id int64) *models.Job {
	f.T.Helper()
	j, err := f.Codes.GetJob(f.Ctx, id)
	if err != nil {
		f.T.Fatalf("get job %d: %v", id, err)
	}
	return j
}

// result returns the job's result CSV as records, header first.
func (f *jobFixture) result(id int64) [][]string {
	f.T.Helper()
	var b bytes.Buffer
	if err := f.Codes.WriteJobResult(f.Ctx, id, &b); err != nil {
		f.T.Fatalf("job %d result: %v", id, err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		f.T.Fatalf("job %d result is not CSV: %v\n%s", id, err, b.String())
	}
	return recs
}

// assertNoDrift checks that Redis agrees with the database for tid.
func (f *jobFixture) assertNoDrift(tid, wantLive int64) {
	f.T.Helper()
	rep, err := f.Reconciler.Reconcile(f.Ctx, reconcile.ReconcileRequest{TemplateID: tid})
	if err != nil {
		f.T.Fatalf("reconcile: %v", err)
	}
	d := rep.Templates[0]
	if d.Drifted() || d.DBLive != wantLive || d.InFlight != 0 {
		f.T.Fatalf("reconcile: %+v (remaining %v), want db_live %d, no drift", d, deref(d.RedisRemaining), wantLive)
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// auditActions returns the audit actions on the job, oldest first.
func (f *jobFixture) auditActions(id int64) []string {
	f.T.Helper()
	entries, err := f.Admin.ListAudit(f.Ctx, 1000)
	if err != nil {
		f.T.Fatal(err)
	}
	var out []string
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].Target == fmt.Sprintf("job:%d", id) {
			out = append(out, entries[i].Action)
		}
	}
	return out
}

func TestGenerateJob(t *testing.T) {
	f := newJobFixture(t, services.Config{CodesConfig: services.CodesConfig{JobBatch: 40}})
	c := f.Campaign(0)
	tp := f.Template(models.Template{CampaignID: c.ID, TotalStock: 150})

	t.Run("OK", func(t *testing.T) {
		j, err := f.Codes.StartGenerate(f.Ctx, "admin", tp.ID, 100, "SPRING-####-####")
		if err != nil {
			t.Fatal(err)
		}
		if j.State != models.JobQueued || j.Total != 100 || j.Done != 0 {
			t.Fatalf("job = %+v, want queued, 0 of 100", j)
		}
		f.runAll(f.Svc)
		j = f.job(j.ID)
		if j.State != models.JobDone || j.Done != 100 || j.Errors != 0 {
			t.Fatalf("job = %+v, want done, 100 of 100, no errors", j)
		}
		codes := map[string]bool{}
		for _, cp := range f.Coupons() {
			if cp.UserID != "" || cp.UserOrdinal != nil || cp.Slot == nil || cp.Status != models.CouponIssued {
				t.Fatalf("coupon %+v, want a bearer coupon holding a slot", cp)
			}
			if !strings.HasPrefix(cp.Code, "SPRING") || len(cp.Code) != 15 {
				t.Fatalf("code %q does not follow the pattern", cp.Code)
			}
			if got, err := models.ParseCouponCode("code", cp.Code[:6]+"-"+cp.Code[6:10]+"-"+strings.ToLower(cp.Code[10:])); err != nil || got != cp.Code {
				t.Fatalf("ParseCouponCode(%q) = %q, %v", cp.Code, got, err)
			}
			codes[cp.Code] = true
		}
		if len(codes) != 100 {
			t.Fatalf("%d distinct codes, want 100", len(codes))
		}
		res := f.result(j.ID)
		if len(res) != 101 || res[0][0] != "code" {
			t.Fatalf("result has %d lines, want header + 100", len(res))
		}
		for _, r := range res[1:] {
			if !codes[r[0]] {
				t.Fatalf("result lists %q, which is not a coupon", r[0])
			}
		}
		f.assertNoDrift(tp.ID, 100)
		if got := f.auditActions(j.ID); strings.Join(got, ",") != "job.create,job.start,job.done" {
			t.Fatalf("audit = %v, want job.create, job.start, job.done", got)
		}
	})
	t.Run("ErrSoldOut", func(t *testing.T) {
		_, err := f.Codes.StartGenerate(f.Ctx, "admin", tp.ID, 51, "")
		assertJobCode(t, err, models.CodeSoldOut, "")
	})
	t.Run("ErrPattern", func(t *testing.T) {
		_, err := f.Codes.StartGenerate(f.Ctx, "admin", tp.ID, 5, "SPRING-###-####")
		assertJobCode(t, err, models.CodeInvalidRequest, "pattern")
	})
	t.Run("ErrCount", func(t *testing.T) {
		for _, n := range []int64{0, -1, codesvc.MaxGenerateCount + 1} {
			_, err := f.Codes.StartGenerate(f.Ctx, "admin", tp.ID, n, "")
			assertJobCode(t, err, models.CodeInvalidRequest, "count")
		}
	})
	t.Run("OverStockWhileRunning", func(t *testing.T) {
		// 50 left; the job is accepted, then claims take 20 before it runs.
		j, err := f.Codes.StartGenerate(f.Ctx, "admin", tp.ID, 50, "")
		if err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			f.MustClaim(tp.ID, fmt.Sprintf("u%d", i), fmt.Sprintf("k%d", i))
		}
		f.runAll(f.Svc)
		j = f.job(j.ID)
		if j.State != models.JobDone || j.Done != 50 || j.Errors != 20 || j.Message != "20 codes not made: over_stock" {
			t.Fatalf("job = %+v, want done, 50 rows, 20 refused over stock", j)
		}
		f.assertNoDrift(tp.ID, 150)
	})
}

func assertJobCode(t *testing.T, err error, code models.Code, field string) {
	t.Helper()
	if got := models.ErrorCode(err); got != code {
		t.Fatalf("error = %v, want %s", err, code.Word())
	}
	if field != "" && err.(*models.Error).Field != field {
		t.Fatalf("error names %q, want %q", err.(*models.Error).Field, field)
	}
}

// TestGenerateJobResumed kills a generation runner mid-job as a crash
// would (it stops between batches, its lease left held), then a second
// instance takes the job over once the lease ran out: exactly the codes
// asked for, each once, and Redis agrees with the database.
func TestGenerateJobResumed(t *testing.T) {
	const count = 100_000
	f := newJobFixture(t, services.Config{CodesConfig: services.CodesConfig{JobBatch: 5000}})
	c := f.Campaign(0)
	tp := f.Template(models.Template{CampaignID: c.ID, TotalStock: count})
	j, err := f.Codes.StartGenerate(f.Ctx, "admin", tp.ID, count, "")
	if err != nil {
		t.Fatal(err)
	}
	f.Svc.SetJobHook(func(_, done int64) bool { return done >= 35_000 })
	if ran, err := f.Codes.RunJobOnce(f.Ctx); !ran || err != nil {
		t.Fatalf("first runner: %v, %v", ran, err)
	}
	mid := f.job(j.ID)
	if mid.State != models.JobRunning || mid.Done != 35_000 {
		t.Fatalf("job after the kill = %+v, want running at 35000", mid)
	}
	second := f.Env.NewService(services.Config{CoreConfig: services.CoreConfig{Now: f.Clock.Now}, CodesConfig: services.CodesConfig{JobBatch: 5000}})
	if ran, err := second.RunJobOnce(f.Ctx); ran || err != nil {
		t.Fatalf("second runner took a job whose lease still holds: %v, %v", ran, err)
	}
	f.Clock.Advance(31 * time.Second)
	f.runAll(second)

	j = f.job(j.ID)
	if j.State != models.JobDone || j.Done != count || j.Errors != 0 {
		t.Fatalf("job = %+v, want done, %d rows, no errors", j, count)
	}
	var n, codes, slots, maxSlot int64
	row := f.Backends.DB.Raw("SELECT COUNT(*), COUNT(DISTINCT code), COUNT(DISTINCT slot), MAX(slot) FROM user_coupons WHERE template_id = ?", tp.ID).Row()
	if err := row.Scan(&n, &codes, &slots, &maxSlot); err != nil {
		t.Fatal(err)
	}
	if n != count || codes != count || slots != count || maxSlot != count {
		t.Fatalf("%d coupons, %d codes, %d slots up to %d; want %d of each", n, codes, slots, maxSlot, count)
	}
	if got := len(f.result(j.ID)) - 1; got != count {
		t.Fatalf("result lists %d codes, want %d", got, count)
	}
	f.assertNoDrift(tp.ID, count)
	if got := f.auditActions(j.ID); strings.Join(got, ",") != "job.create,job.start,job.resume,job.done" {
		t.Fatalf("audit = %v", got)
	}
}

func TestImportJob(t *testing.T) {
	f := newJobFixture(t, services.Config{CodesConfig: services.CodesConfig{JobBatch: 3}})
	c := f.Campaign(0)
	tp := f.Template(models.Template{CampaignID: c.ID, TotalStock: 5, PerUserLimit: 1})
	old := f.MustClaim(tp.ID, "early", "k1").Coupon // takes 1 of 5
	file := "code,user_id\n" +
		"OLD-AAAA-0001,\n" + // 2: imported
		"old-aaaa-0002,\n" + // 3: imported (case and dashes do not matter)
		"BAD_CODE,\n" + // 4: bad characters
		"OLDAAAA0001,\n" + // 5: the code of line 2 again
		old.Code + ",\n" + // 6: a coupon has it
		"OLD-BBBB-0001,alice\n" + // 7: imported for alice
		"OLD-BBBB-0002,alice\n" + // 8: alice's limit is 1
		"OLD-BBBB-0003,not a user\n" + // 9: bad user id
		"OLD-CCCC-0001,\n" + // 10: imported (the last stock)
		"OLD-CCCC-0002,\n" + // 11: over stock
		"\"QUOTED,CODE\",\n" + // 12: bad characters (a comma)
		"ab,\n" // 13: too short
	j, err := f.Codes.StartImport(f.Ctx, "admin", tp.ID, strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if j.Total != 12 {
		t.Fatalf("job total = %d, want 12 rows", j.Total)
	}
	f.runAll(f.Svc)
	j = f.job(j.ID)
	want := [][]string{
		{"line", "code", "reason"},
		{"4", "BAD_CODE", "bad_characters"},
		{"5", "OLDAAAA0001", "duplicate_in_file"},
		{"6", old.Code, "already_exists"},
		{"8", "OLD-BBBB-0002", "user_limit_reached"},
		{"9", "OLD-BBBB-0003", "bad_user_id"},
		{"11", "OLD-CCCC-0002", "over_stock"},
		{"12", "QUOTED,CODE", "bad_characters"},
		{"13", "ab", "bad_characters"},
	}
	if got := f.result(j.ID); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("report =\n%v\nwant\n%v", got, want)
	}
	if j.State != models.JobDone || j.Done != 12 || j.Errors != 8 {
		t.Fatalf("job = %+v, want done, 12 rows, 8 refused", j)
	}
	byCode := map[string]models.Coupon{}
	for _, cp := range f.Coupons() {
		byCode[cp.Code] = cp
	}
	for code, user := range map[string]string{"OLDAAAA0001": "", "OLDAAAA0002": "", "OLDBBBB0001": "alice", "OLDCCCC0001": ""} {
		cp, ok := byCode[code]
		if !ok || cp.UserID != user || cp.Slot == nil || (user == "") != (cp.UserOrdinal == nil) {
			t.Fatalf("coupon %s = %+v (found %v), want one of user %q holding a slot", code, cp, ok, user)
		}
	}
	if len(byCode) != 5 {
		t.Fatalf("%d coupons, want 5", len(byCode))
	}
	f.assertNoDrift(tp.ID, 5)

	t.Run("ErrFile", func(t *testing.T) {
		for _, file := range []string{"", "user_id\nalice\n", "code\n", "code\n\"unclosed\n"} {
			_, err := f.Codes.StartImport(f.Ctx, "admin", tp.ID, strings.NewReader(file))
			assertJobCode(t, err, models.CodeInvalidRequest, "file")
		}
	})

	// A column the import does not know is named and refuses the file:
	// its rows would otherwise become codes nobody holds.
	t.Run("UnknownColumn", func(t *testing.T) {
		before := len(f.Coupons())
		for file, want := range map[string]string{
			"code,Customer\nNEW-DDDD-0001,alice\n":   `has a column "Customer" the import does not know; it reads only code and user_id: rename it user_id if it holds the user each code is for, or remove it. Nothing was imported`,
			"code,,user_id\nNEW-DDDD-0001,x,alice\n": "has a column with no name (column 2); the import reads only code and user_id: remove it, or name it user_id if it holds the user each code is for. Nothing was imported",
		} {
			_, err := f.Codes.StartImport(f.Ctx, "admin", tp.ID, strings.NewReader(file))
			var e *models.Error
			if !errors.As(err, &e) || e.Code != models.CodeInvalidRequest || e.Field != "file" || e.Message != want {
				t.Fatalf("import of %q: %v, want file: %s", file, err, want)
			}
		}
		if _, err := f.Codes.StartImport(f.Ctx, "admin", tp.ID, strings.NewReader("code,user_id,\nNEW-DDDD-0002,,\n")); err != nil {
			t.Fatalf("a header with a trailing comma: %v", err)
		}
		if got := len(f.Coupons()); got != before {
			t.Fatalf("%d coupons after refused imports, want %d", got, before)
		}
	})
}

// TestImportRefusals: an import's job page lists its first refused rows
// from the result, in line order across batches, with each code as the
// file had it (a would-be formula included) and the result's reason word;
// a limit stops the reading; a generation job has none.
func TestImportRefusals(t *testing.T) {
	f := newJobFixture(t, services.Config{CodesConfig: services.CodesConfig{JobBatch: 2}})
	c := f.Campaign(0)
	tp := f.Template(models.Template{CampaignID: c.ID, TotalStock: 10, PerUserLimit: 1})
	file := "code,user_id\n" +
		"NEW-AAAA-0001,\n" + // 2: imported
		"=SUM(A1),\n" + // 3: bad characters
		"-NEW-AAAA-0001,\n" + // 4: the code of line 2 again
		"NEW-AAAA-0002,\n" + // 5: imported
		"NEW-AAAA-0003,not a user\n" + // 6: bad user id
		"x y,\n" // 7: bad characters
	j, err := f.Codes.StartImport(f.Ctx, "admin", tp.ID, strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	f.runAll(f.Svc)
	j = f.job(j.ID)
	if j.State != models.JobDone || j.Errors != 4 {
		t.Fatalf("job = %+v, want done with 4 refused", j)
	}
	all, err := f.Codes.ImportRefusals(f.Ctx, j, 50)
	want := "[{3 =SUM(A1) bad_characters} {4 -NEW-AAAA-0001 duplicate_in_file} {6 NEW-AAAA-0003 bad_user_id} {7 x y bad_characters}]"
	if err != nil || fmt.Sprint(all) != want {
		t.Fatalf("refusals = %v, %v; want %s", all, err, want)
	}
	first, err := f.Codes.ImportRefusals(f.Ctx, j, 2)
	if err != nil || fmt.Sprint(first) != "[{3 =SUM(A1) bad_characters} {4 -NEW-AAAA-0001 duplicate_in_file}]" {
		t.Fatalf("the first 2 refusals = %v, %v", first, err)
	}
	g, err := f.Codes.StartGenerate(f.Ctx, "admin", tp.ID, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := f.Codes.ImportRefusals(f.Ctx, g, 50); got != nil || err != nil {
		t.Fatalf("a generation job's refusals = %v, %v; want none", got, err)
	}
}

func TestIssueJobResumed(t *testing.T) {
	f := newJobFixture(t, services.Config{})
	c := f.Campaign(0)
	tp := f.Template(models.Template{CampaignID: c.ID, TotalStock: 1200, PerUserLimit: 3})
	var users []string
	for i := range 1300 {
		users = append(users, fmt.Sprintf("user%04d", i))
	}
	users = append(users, "user0001", "user0002") // listed twice
	j, err := f.Codes.StartIssue(f.Ctx, "admin", tp.ID, users)
	if err != nil {
		t.Fatal(err)
	}
	// The first runner dies after its first batch (500 users).
	f.Svc.SetJobHook(func(_, done int64) bool { return done >= 500 })
	f.runAll(f.Svc)
	f.Clock.Advance(31 * time.Second)
	second := f.Env.NewService(services.Config{CoreConfig: services.CoreConfig{Now: f.Clock.Now}})
	f.runAll(second)

	j = f.job(j.ID)
	if j.State != models.JobDone || j.Done != 1302 || j.Errors != 102 {
		t.Fatalf("job = %+v, want done, 1302 rows, 102 refused (100 sold out, 2 listed twice)", j)
	}
	perUser := map[string]int{}
	for _, cp := range f.Coupons() {
		perUser[cp.UserID]++
	}
	if len(perUser) != 1200 {
		t.Fatalf("%d users hold coupons, want 1200", len(perUser))
	}
	for u, n := range perUser {
		if n != 1 {
			t.Fatalf("user %s holds %d coupons, want 1", u, n)
		}
	}
	res := f.result(j.ID)
	counts := map[string]int{}
	for _, r := range res[1:] {
		counts[r[1]]++
		if r[1] == "claimed" && perUser[r[0]] != 1 {
			t.Fatalf("result says %s claimed, the database has no coupon", r[0])
		}
	}
	if len(res) != 1303 || counts["claimed"] != 1200 || counts["sold_out"] != 100 || counts["duplicate_in_list"] != 2 {
		t.Fatalf("result: %d lines, %v", len(res), counts)
	}
	f.assertNoDrift(tp.ID, 1200)

	t.Run("ErrUserIDs", func(t *testing.T) {
		_, err := f.Codes.StartIssue(f.Ctx, "admin", tp.ID, []string{"ok", "not ok"})
		assertJobCode(t, err, models.CodeInvalidRequest, "user_ids[1]")
		_, err = f.Codes.StartIssue(f.Ctx, "admin", tp.ID, nil)
		assertJobCode(t, err, models.CodeInvalidRequest, "user_ids")
	})
}

func TestParseUserList(t *testing.T) {
	for in, want := range map[string]string{
		"user_id\nalice\nbob\n":            "alice,bob",
		"name,user_id\nA,alice\nB,bob\n\n": "alice,bob",
		"alice\nbob\n":                     "alice,bob",
	} {
		got, err := codesvc.ParseUserList(strings.NewReader(in))
		if err != nil || strings.Join(got, ",") != want {
			t.Errorf("ParseUserList(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"", "user_id\n", "user_id\nnot ok\n"} {
		_, err := codesvc.ParseUserList(strings.NewReader(in))
		assertJobCode(t, err, models.CodeInvalidRequest, "file")
	}
}

func TestPruneJobs(t *testing.T) {
	f := newJobFixture(t, services.Config{})
	c := f.Campaign(0)
	tp := f.Template(models.Template{CampaignID: c.ID, TotalStock: 10})
	old, err := f.Codes.StartGenerate(f.Ctx, "admin", tp.ID, 2, "")
	if err != nil {
		t.Fatal(err)
	}
	f.runAll(f.Svc)
	f.Clock.Advance(48 * time.Hour)
	recent, err := f.Codes.StartGenerate(f.Ctx, "admin", tp.ID, 2, "")
	if err != nil {
		t.Fatal(err)
	}
	f.runAll(f.Svc)
	queued, err := f.Codes.StartGenerate(f.Ctx, "admin", tp.ID, 2, "")
	if err != nil {
		t.Fatal(err)
	}
	// The retention pass (Prune) takes finished jobs by the same cutoff.
	p, err := f.Events.Prune(f.Ctx, f.Clock.Now().Add(-24*time.Hour))
	if err != nil || p.Jobs != 1 {
		t.Fatalf("Prune = %+v, %v; want 1 job", p, err)
	}
	if _, err := f.Codes.GetJob(f.Ctx, old.ID); models.ErrorCode(err) != models.CodeNotFound {
		t.Fatalf("old job: %v, want not found", err)
	}
	var chunks int64
	f.Backends.DB.Model(&models.JobChunk{}).Where("job_id = ?", old.ID).Count(&chunks)
	if chunks != 0 {
		t.Fatalf("%d chunks of the pruned job left", chunks)
	}
	for _, id := range []int64{recent.ID, queued.ID} {
		f.job(id)
	}
	if len(f.Coupons()) != 4 {
		t.Fatalf("pruning a job removed coupons")
	}
}

// repeatOnce is randomness whose second block of size bytes repeats the
// first, then fresh: the second batch of a generation job draws the very
// codes of the first.
type repeatOnce struct {
	mu    sync.Mutex
	size  int
	first []byte
	sent  int
}

func (r *repeatOnce) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range p {
		switch {
		case r.sent < r.size:
			var b [1]byte
			if _, err := rand.Read(b[:]); err != nil {
				return i, err
			}
			r.first = append(r.first, b[0])
			p[i] = b[0]
		case r.sent < 2*r.size:
			p[i] = r.first[r.sent-r.size]
		default:
			if _, err := rand.Read(p[i : i+1]); err != nil {
				return i, err
			}
		}
		r.sent++
	}
	return len(p), nil
}

// TestGenerateDrawsAgainOnACollision makes the job's second batch draw the
// codes of its first: the unique index refuses it, the batch draws fresh
// codes and is written again, and the job ends with exactly its codes,
// each once, all in its result.
func TestGenerateDrawsAgainOnACollision(t *testing.T) {
	const count, batch = 2000, 500
	p, err := models.ParsePattern("pattern", "")
	if err != nil {
		t.Fatal(err)
	}
	f := newJobFixture(t, services.Config{CodesConfig: services.CodesConfig{JobBatch: batch, Rand: &repeatOnce{size: batch * p.Random()}}})
	c := f.Campaign(0)
	tp := f.Template(models.Template{CampaignID: c.ID, TotalStock: count})
	j, err := f.Codes.StartGenerate(f.Ctx, "admin", tp.ID, count, "")
	if err != nil {
		t.Fatal(err)
	}
	f.runAll(f.Svc)

	j = f.job(j.ID)
	if j.State != models.JobDone || j.Done != count || j.Errors != 0 {
		t.Fatalf("job = %+v, want done, %d rows, no errors", j, count)
	}
	var n, codes, slots, maxSlot, requests int64
	row := f.Backends.DB.Raw(`SELECT COUNT(*), COUNT(DISTINCT code), COUNT(DISTINCT slot), MAX(slot), COUNT(DISTINCT request_id)
		FROM user_coupons WHERE template_id = ?`, tp.ID).Row()
	if err := row.Scan(&n, &codes, &slots, &maxSlot, &requests); err != nil {
		t.Fatal(err)
	}
	if n != count || codes != count || slots != count || maxSlot != count || requests != count {
		t.Fatalf("%d coupons, %d codes, %d slots up to %d, %d request ids; want %d of each", n, codes, slots, maxSlot, requests, count)
	}
	listed := map[string]bool{}
	for _, rec := range f.result(j.ID)[1:] {
		listed[rec[0]] = true
	}
	var stored []string
	if err := f.Backends.DB.Raw("SELECT code FROM user_coupons WHERE template_id = ?", tp.ID).Scan(&stored).Error; err != nil {
		t.Fatal(err)
	}
	for _, code := range stored {
		if !listed[code] {
			t.Fatalf("code %s is stored but not in the job's result", code)
		}
	}
	if len(listed) != count {
		t.Fatalf("result lists %d distinct codes, want %d", len(listed), count)
	}
	f.assertNoDrift(tp.ID, count)
}
