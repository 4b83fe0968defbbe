package codes

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/couponsvc/couponsvc/services/claims"
	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"
)

// MaxImportBytes bounds an import's CSV file.
const MaxImportBytes = 50 << 20

// importBatch bounds the rows of an import checked and written at once.
const importBatch = 1000

// Reasons an import row is refused, as its report says them
// (docs/jobs.md); a row with a user_id may also be refused with the word of
// a claim's refusal (user_limit_reached, budget_exhausted, not_claimable).
const (
	ReasonBadCharacters   = "bad_characters"
	ReasonBadUserID       = "bad_user_id"
	ReasonDuplicateInFile = "duplicate_in_file"
	ReasonAlreadyExists   = "already_exists"
	ReasonOverStock       = "over_stock"
)

// importRow is one data row of an import, as stored for the runner.
type importRow struct {
	line         int64
	code, userID string
}

// StartImport reads an import's CSV (a header with a code column and an
// optional user_id column, then a row per code), stores it, and queues a job
// that imports each row (docs/jobs.md). The file's rows are checked by the
// job, which reports each refused row; here only its form is: a file that is
// not CSV, has no code column or no rows is refused whole. Errors:
// CodeInvalidRequest (file), CodeNotFound, CodeNotClaimable (the template
// is archived or its coupons expired, see mintRefusal), CodeUnavailable.
func (s *Codes) StartImport(ctx context.Context, actor string, tid int64, file io.Reader) (*models.Job, error) {
	t, err := s.liveTemplate(ctx, tid)
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(file)
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	head, err := r.Read()
	if err != nil {
		return nil, csvError(err, "has no header line (code[,user_id])")
	}
	codeCol, userCol, err := importColumns(head)
	if err != nil {
		return nil, err
	}
	// The rows as the job reads them back (readImportRows): the file's
	// values as sent, not a file for people, so not through CSVWriter.
	var out chunker
	w := csv.NewWriter(&out)
	var total int64
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvError(err, "")
		}
		line, _ := r.FieldPos(0)
		row := []string{strconv.Itoa(line), field(rec, codeCol), field(rec, userCol)}
		if err := w.Write(row); err != nil {
			return nil, err
		}
		total++
	}
	w.Flush()
	if total == 0 {
		return nil, models.Invalid("file", "has no rows after its header")
	}
	return s.createJob(ctx, &models.Job{Kind: models.JobImport, TemplateID: t.ID, Total: total, Actor: actor}, out.done())
}

// importColumns finds the code and user_id columns of an import's header
// (userCol -1 when there is none). A column of another name is refused,
// naming it, rather than ignored: its values would be lost, and a column
// meant to name the holder (Customer, email) would make codes nobody holds
// (docs/jobs.md).
func importColumns(head []string) (codeCol, userCol int, err error) {
	codeCol, userCol = -1, -1
	for i, h := range head {
		name := strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		switch strings.ToLower(name) {
		case "code":
			codeCol = i
		case "user_id":
			userCol = i
		case "":
			if i == len(head)-1 {
				continue // a trailing comma
			}
			return -1, -1, models.Invalid("file", "has a column with no name (column %d); the import reads only code and user_id: "+
				"remove it, or name it user_id if it holds the user each code is for. Nothing was imported", i+1)
		default:
			return -1, -1, models.Invalid("file", "has a column %q the import does not know; it reads only code and user_id: "+
				"rename it user_id if it holds the user each code is for, or remove it. Nothing was imported", name)
		}
	}
	if codeCol < 0 {
		return -1, -1, models.Invalid("file", "needs a header line with a column named code (and optionally user_id)")
	}
	return codeCol, userCol, nil
}

func field(rec []string, i int) string {
	if i < 0 || i >= len(rec) {
		return ""
	}
	return strings.TrimSpace(rec[i])
}

// csvError names the file in a CSV syntax error, with its line.
func csvError(err error, what string) error {
	var pe *csv.ParseError
	switch {
	case errors.As(err, &pe):
		return models.Invalid("file", "is not valid CSV at line %d: %v", pe.Line, pe.Err)
	case errors.Is(err, io.EOF):
		return models.Invalid("file", "is empty: it %s", what)
	case isBodyTooLarge(err):
		return models.Invalid("file", "is larger than %d MiB", MaxImportBytes>>20)
	}
	return models.Invalid("file", "could not be read: %v", err)
}

// isBodyTooLarge reports the cut of http.MaxBytesReader, by its message:
// services do not import net/http.
func isBodyTooLarge(err error) bool {
	return strings.Contains(err.Error(), "request body too large")
}

// readImportRows reads the stored rows of an import job.
func (s *Codes) readImportRows(ctx context.Context, id int64) ([]importRow, error) {
	r := csv.NewReader(&chunkReader{ctx: ctx, db: s.DB, job: id, part: partInput, last: -1})
	r.FieldsPerRecord = 3
	var rows []importRow
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			if models.IsCode(err, models.CodeUnavailable) {
				return nil, err
			}
			return nil, core.DBError("job input", err)
		}
		line, _ := strconv.ParseInt(rec[0], 10, 64)
		rows = append(rows, importRow{line: line, code: rec[1], userID: rec[2]})
	}
}

// runImport imports the job's remaining rows, a batch at a time: each
// batch's bearer coupons and its report are committed with the job's
// progress; a row with a user_id is claimed for that user through the claim
// path, whose idempotency key (the job and line) makes a resumed batch claim
// it once.
func (s *Codes) runImport(ctx context.Context, run *jobRun) error {
	j := run.job
	rows, err := s.readImportRows(ctx, j.ID)
	if err != nil {
		return err
	}
	// Codes of the rows already done count for "duplicate in the file".
	seen := make(map[string]bool, len(rows))
	for _, row := range rows[:min(int64(len(rows)), j.Done)] {
		if code, err := models.ParseCouponCode("code", row.code); err == nil {
			seen[code] = true
		}
	}
	for j.Done < int64(len(rows)) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		batch := rows[j.Done:min(j.Done+int64(min(s.cfg.JobBatch, importBatch)), int64(len(rows)))]
		if err := s.importBatch(ctx, run, batch, seen); err != nil {
			return err
		}
	}
	return nil
}

// importRefusal is one refused row of a batch.
type importRefusal struct {
	row    importRow
	reason string
}

func (s *Codes) importBatch(ctx context.Context, run *jobRun, batch []importRow, seen map[string]bool) error {
	j, t := run.job, run.t
	if err := s.checkLive(ctx, run); err != nil {
		return err
	}
	var refused []importRefusal
	codes := make([]string, len(batch))
	var cands []int
	var added []string // codes this batch put in seen
	for i, row := range batch {
		code, err := models.ParseCouponCode("code", row.code)
		switch {
		case err != nil:
			refused = append(refused, importRefusal{row, ReasonBadCharacters})
			continue
		case row.userID != "" && models.ValidateUserID("user_id", row.userID) != nil:
			refused = append(refused, importRefusal{row, ReasonBadUserID})
			continue
		case seen[code]:
			refused = append(refused, importRefusal{row, ReasonDuplicateInFile})
			continue
		}
		seen[code] = true
		added = append(added, code)
		codes[i] = code
		cands = append(cands, i)
	}
	// Codes already in the database: another coupon's, or this job's own
	// from a run that claimed a user's row and died before its batch
	// committed.
	mine := map[string]bool{}
	if len(cands) > 0 {
		want := make([]string, len(cands))
		for k, i := range cands {
			want[k] = codes[i]
		}
		var found []struct{ Code, RequestID string }
		if err := s.DB.WithContext(ctx).Model(&models.Coupon{}).Select("code, request_id").
			Where("code IN ?", want).Scan(&found).Error; err != nil {
			return core.DBError("coupons", err)
		}
		taken := map[string]bool{}
		for _, f := range found {
			taken[f.Code] = true
			mine[f.Code] = strings.HasPrefix(f.RequestID, "job"+strconv.FormatInt(j.ID, 10)+":")
		}
		kept := cands[:0]
		for _, i := range cands {
			if taken[codes[i]] && !mine[codes[i]] {
				refused = append(refused, importRefusal{batch[i], ReasonAlreadyExists})
				continue
			}
			kept = append(kept, i)
		}
		cands = kept
	}
	// Rows for a user go through the claim path, one by one.
	var bearer []int
	for _, i := range cands {
		row := batch[i]
		if row.userID == "" {
			bearer = append(bearer, i)
			continue
		}
		_, err := s.claims.ClaimUncounted(ctx, claims.ClaimRequest{TemplateID: t.ID, UserID: row.userID,
			IdempotencyKey: jobRequestID(j.ID, row.line), ImportCode: codes[i]})
		switch {
		case err == nil:
		case errors.Is(err, claims.ErrCodeTaken):
			refused = append(refused, importRefusal{row, ReasonAlreadyExists})
		case models.IsCode(err, models.CodeSoldOut):
			refused = append(refused, importRefusal{row, ReasonOverStock})
		case models.IsCode(err, models.CodeUnavailable), models.IsCode(err, models.CodeInProgress):
			return err
		default:
			refused = append(refused, importRefusal{row, models.ErrorCode(err).Word()})
		}
	}
	// Bearer rows take their stock at once.
	unlock, err := s.lockBatch(ctx, t)
	if err != nil {
		return err
	}
	unlock = sync.OnceFunc(unlock)
	defer unlock()
	var slots []int64
	if len(bearer) > 0 {
		var why string
		if slots, why, err = s.takeSlots(ctx, t, len(bearer)); err != nil {
			return err
		}
		for _, i := range bearer[len(slots):] {
			refused = append(refused, importRefusal{batch[i], refusalWord(why)})
		}
		bearer = bearer[:len(slots)]
	}
	rows := make([]bearerRow, len(bearer))
	for k, i := range bearer {
		rows[k] = bearerRow{code: codes[i], slot: slots[k], requestID: jobRequestID(j.ID, batch[i].line)}
	}
	slices.SortFunc(refused, func(a, b importRefusal) int { return int(a.row.line - b.row.line) })
	var report bytes.Buffer
	w := core.NewCSVWriter(&report)
	for _, r := range refused {
		_ = w.Write([]string{strconv.FormatInt(r.row.line, 10), r.row.code, r.reason})
	}
	w.Flush()
	err = s.commitBearer(ctx, run, rows, int64(len(batch)), int64(len(refused)), report.Bytes(), "")
	unlock()
	if err != nil {
		if _, ok := core.UniqueViolation(err); ok {
			// Another job or claim wrote one of these codes since the check:
			// give the slots back (rebuild the counters, after this batch's
			// lock) and check the batch again.
			if rerr := s.Resync(context.WithoutCancel(ctx), t.CampaignID); rerr != nil {
				return rerr
			}
			for _, code := range added {
				delete(seen, code)
			}
			return nil
		}
		return s.batchFailed(ctx, t, err)
	}
	return s.committed(run, int64(len(batch)), int64(len(refused)), report.Bytes(), "")
}

// ImportRefusal is one refused row of an import, as its result lists it.
type ImportRefusal struct {
	Line int64
	// Code is the row's code as the file had it.
	Code string
	// Reason is a word of docs/jobs.md ("Import").
	Reason string
}

// ImportRefusals reads the first refused rows of an import job, at most
// limit, in line order, from its result (so that the console can list them
// on the job's page, docs/pages.md): only the pieces of the result those rows
// are in are read. The job's Errors counts them all. A job of another kind
// has none. Errors: CodeUnavailable.
func (s *Codes) ImportRefusals(ctx context.Context, j *models.Job, limit int) ([]ImportRefusal, error) {
	if j.Kind != models.JobImport || j.Errors == 0 || limit <= 0 {
		return nil, nil
	}
	r := csv.NewReader(&chunkReader{ctx: ctx, db: s.DB, job: j.ID, part: partResult, last: j.ResultParts})
	r.FieldsPerRecord = 3
	var out []ImportRefusal
	for len(out) < limit {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if models.IsCode(err, models.CodeUnavailable) {
				return nil, err
			}
			// The service wrote this file: a row it cannot read again is a
			// fault of the stored data, not of the admin's.
			return nil, fmt.Errorf("job %d's result: %w", j.ID, err)
		}
		line, _ := strconv.ParseInt(rec[0], 10, 64)
		out = append(out, ImportRefusal{Line: line, Code: core.ReadCell(rec[1]), Reason: rec[2]})
	}
	return out, nil
}
