package models_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/models"
)

// TestResultWords pins each code's word and status, the public contract that
// the result table carries.
func TestResultWords(t *testing.T) {
	want := []struct {
		code   models.Code
		number int
		word   string
		status int
	}{
		{models.CodeOK, 0, "ok", 200},
		{models.CodeDuplicate, 1, "duplicate", 200},
		{models.CodeSoldOut, 2, "sold_out", 409},
		{models.CodeInvalidRequest, 3, "invalid_request", 400},
		{models.CodeUserLimitReached, 4, "user_limit_reached", 409},
		{models.CodeBudgetExhausted, 5, "budget_exhausted", 409},
		{models.CodeNotClaimable, 6, "not_claimable", 409},
		{models.CodeAlreadyUsed, 7, "already_used", 409},
		{models.CodeNotValidNow, 8, "not_valid_now", 409},
		{models.CodeBelowMinimum, 9, "below_minimum", 422},
		{models.CodeNotFound, 10, "not_found", 404},
		{models.CodeBusy, 11, "busy", 429},
		{models.CodeIdempotencyMismatch, 12, "idempotency_mismatch", 422},
		{models.CodeNotRedeemed, 13, "not_redeemed", 409},
		{models.CodeUnauthorized, 14, "unauthorized", 401},
		{models.CodeUnavailable, 15, "unavailable", 503},
		{models.CodeRateLimited, 16, "rate_limited", 429},
		{models.CodeRevoked, 17, "revoked", 409},
		{models.CodeInProgress, 18, "in_progress", 409},
		{models.CodeHeld, 19, "held", 409},
		{models.CodeNotCombinable, 20, "not_combinable", 409},
		{models.CodeHoldExpired, 21, "hold_expired", 409},
		{models.CodeReturnExceedsOrder, 22, "return_exceeds_order", 422},
		{models.CodeCurrencyMismatch, 23, "currency_mismatch", 422},
		{models.CodeInUse, 24, "in_use", 409},
		{models.CodeConditionNotMet, 25, "condition_not_met", 422},
		{models.CodeNotEligible, 26, "not_eligible", 409},
		{models.CodeCampaignLimit, 27, "campaign_limit", 409},
		{models.CodeInternal, 99, "internal", 500},
		// A code without a row is a bug: answered as internal.
		{models.Code(28), 28, "internal", 500},
		{models.Code(-1), -1, "internal", 500},
	}
	for _, w := range want {
		if int(w.code) != w.number || w.code.Word() != w.word || w.code.Status() != w.status {
			t.Errorf("code %d: number %d, word %q, status %d; want %d, %q, %d",
				w.code, int(w.code), w.code.Word(), w.code.Status(), w.number, w.word, w.status)
		}
	}
	if len(want)-2 != countCodes() {
		t.Errorf("%d codes pinned, the table has %d", len(want)-2, countCodes())
	}
}

func countCodes() int {
	codes := map[models.Code]bool{}
	for _, r := range models.Results {
		codes[r.Code] = true
	}
	return len(codes)
}

// TestErrorResult: an error answers its code's row, and a Forbidden
// CodeUnauthorized the forbidden row.
func TestErrorResult(t *testing.T) {
	for _, c := range []struct {
		err          *models.Error
		word         string
		status       int
		retryAfter   string
		alsoStatuses []int
	}{
		{&models.Error{Code: models.CodeUnauthorized}, "unauthorized", 401, "", nil},
		{&models.Error{Code: models.CodeUnauthorized, Forbidden: true}, "forbidden", 403, "", nil},
		// Forbidden means nothing on another code.
		{&models.Error{Code: models.CodeNotFound, Forbidden: true}, "not_found", 404, "", nil},
		{models.Invalid("body", "is larger than 64 KiB"), "invalid_request", 400, "", []int{413, 415, 405}},
		{models.Unavailable("Redis", nil), "unavailable", 503, "1", nil},
		{&models.Error{Code: models.CodeBusy}, "busy", 429, "1", nil},
		{&models.Error{Code: models.CodeRateLimited}, "rate_limited", 429, "n", nil},
		{&models.Error{Code: models.CodeInProgress}, "in_progress", 409, "1", nil},
		{&models.Error{Code: models.CodeHeld}, "held", 409, "", nil},
		{&models.Error{Code: models.Code(42)}, "internal", 500, "", nil},
	} {
		r := c.err.Result()
		if r.Word != c.word || r.Status != c.status || r.RetryAfter != c.retryAfter || !slices.Equal(r.Also, c.alsoStatuses) {
			t.Errorf("%v: %q %d Retry-After %q also %v; want %q %d %q %v", c.err, r.Word, r.Status, r.RetryAfter, r.Also,
				c.word, c.status, c.retryAfter, c.alsoStatuses)
		}
	}
}

// TestResultTable: each word of a code is one row, every row says what it
// means, and a status is an HTTP status of its kind (2xx for codes 0 and 1,
// 4xx or 5xx for the others) given once.
func TestResultTable(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range models.Results {
		key := fmt.Sprint(int(r.Code), " ", r.Word)
		if seen[key] {
			t.Errorf("%s: two rows", key)
		}
		seen[key] = true
		if !regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`).MatchString(r.Word) || r.Meaning == "" ||
			strings.Contains(r.Meaning, "\n") {
			t.Errorf("%s: word or meaning %q", key, r.Meaning)
		}
		success := r.Code == models.CodeOK || r.Code == models.CodeDuplicate
		statuses := r.Statuses()
		for i, s := range statuses {
			if success != (s >= 200 && s < 300) || s < 200 || s > 599 || slices.Index(statuses, s) != i {
				t.Errorf("%s: status %d of %v", key, s, statuses)
			}
		}
		if !slices.Contains([]string{"", "1", "n"}, r.RetryAfter) {
			t.Errorf("%s: Retry-After %q", key, r.RetryAfter)
		}
	}
	if got := len(models.Results); got != 35 {
		t.Errorf("%d rows, want 35", got)
	}
}

// docResult is a row of the table of docs/result-codes.md.
type docResult struct {
	code       int
	words      []string
	statuses   []int
	retryAfter string
	line       int
}

var (
	docRowLine    = regexp.MustCompile(`^\|\s*(\d+)\s*\|([^|]*)\|([^|]*)\|`)
	docWord       = regexp.MustCompile("`([a-z_]+)`")
	docStatus     = regexp.MustCompile(`\b[1-5]\d\d\b`)
	docRetryAfter = regexp.MustCompile("Retry-After: ([0-9a-z]+)`")
)

// readResultDoc reads the rows of the table of docs/result-codes.md: a code, the
// result words in backquotes, the HTTP statuses and the Retry-After header.
func readResultDoc(t *testing.T) []docResult {
	t.Helper()
	b, err := os.ReadFile("../docs/result-codes.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []docResult
	for i, line := range strings.Split(string(b), "\n") {
		m := docRowLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		code, _ := strconv.Atoi(m[1])
		row := docResult{code: code, line: i + 1}
		for _, w := range docWord.FindAllStringSubmatch(m[2], -1) {
			row.words = append(row.words, w[1])
		}
		for _, s := range docStatus.FindAllString(m[3], -1) {
			n, _ := strconv.Atoi(s)
			row.statuses = append(row.statuses, n)
		}
		if ra := docRetryAfter.FindStringSubmatch(m[3]); ra != nil {
			row.retryAfter = ra[1]
		}
		if len(row.words) == 0 || len(row.statuses) == 0 {
			t.Errorf("docs/result-codes.md:%d: a row without a word or a status: %s", row.line, line)
		}
		rows = append(rows, row)
	}
	return rows
}

// TestResultCodesDoc: every row of the table of docs/result-codes.md is a row
// of models.Results with the same number, word, statuses and Retry-After, and
// every row of models.Results is in the document with each of its statuses,
// its own status first.
func TestResultCodesDoc(t *testing.T) {
	rows := readResultDoc(t)
	table := map[string]models.Result{}
	for _, r := range models.Results {
		table[fmt.Sprint(int(r.Code), " ", r.Word)] = r
	}
	documented := map[string][]int{} // code and word → statuses, in the document's order
	for _, d := range rows {
		for _, w := range d.words {
			key := fmt.Sprint(d.code, " ", w)
			r, ok := table[key]
			if !ok {
				t.Errorf("docs/result-codes.md:%d: %d %s is not in models.Results", d.line, d.code, w)
				continue
			}
			for _, s := range d.statuses {
				if !slices.Contains(r.Statuses(), s) {
					t.Errorf("docs/result-codes.md:%d: %s answered %d; models.Results says %v", d.line, key, s, r.Statuses())
				}
				if !slices.Contains(documented[key], s) {
					documented[key] = append(documented[key], s)
				}
			}
			if d.retryAfter != r.RetryAfter {
				t.Errorf("docs/result-codes.md:%d: %s Retry-After %q; models.Results says %q", d.line, key, d.retryAfter, r.RetryAfter)
			}
		}
	}
	for _, r := range models.Results {
		key := fmt.Sprint(int(r.Code), " ", r.Word)
		got := documented[key]
		if len(got) == 0 {
			t.Errorf("%s (%d) is not in docs/result-codes.md", key, r.Status)
			continue
		}
		if got[0] != r.Status || len(got) != len(r.Statuses()) {
			t.Errorf("%s: docs/result-codes.md gives the statuses %v; models.Results %v", key, got, r.Statuses())
		}
	}
	if len(rows) != 37 {
		t.Errorf("%d rows read from docs/result-codes.md, want 37", len(rows))
	}
}
