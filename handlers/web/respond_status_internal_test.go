package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"

	"github.com/couponsvc/couponsvc/models"

	"github.com/gin-gonic/gin"
)

// TestStatusOfResultTable: an error is answered with the status and word of its
// row of models.Results, a Forbidden one with the forbidden row, and the more
// precise statuses of an invalid_request (413, 415, 405) are statuses the
// table gives it.
func TestStatusOfResultTable(t *testing.T) {
	firsts := map[models.Code]bool{}
	for _, r := range models.Results {
		if firsts[r.Code] {
			continue
		}
		firsts[r.Code] = true
		status, word := StatusOf(&models.Error{Code: r.Code, Message: "m"})
		if status != r.Status || word != r.Word {
			t.Errorf("code %d: %d %s; the table says %d %s", r.Code, status, word, r.Status, r.Word)
		}
	}
	if len(firsts) != 29 {
		t.Errorf("%d codes in the table, want 29", len(firsts))
	}
	invalid := models.CodeInvalidRequest.Result()
	for _, c := range []struct {
		name   string
		err    error
		status int
		word   string
	}{
		{"Forbidden", &models.Error{Code: models.CodeUnauthorized, Forbidden: true}, 403, "forbidden"},
		{"Unauthorized", &models.Error{Code: models.CodeUnauthorized}, 401, "unauthorized"},
		{"Wrapped", fmt.Errorf("redeem: %w", &models.Error{Code: models.CodeSoldOut}), 409, "sold_out"},
		{"NotDomain", errors.New("a bug"), 500, "internal"},
		{"UnknownCode", &models.Error{Code: models.Code(77)}, 500, "internal"},
		{"BodyTooLarge", ErrBodyTooLarge, 413, "invalid_request"},
		{"BodyNotTaken", ErrBodyNotTaken, 413, "invalid_request"},
		{"MediaType", WithStatus(http.StatusUnsupportedMediaType, models.Invalid("Content-Type", "must be application/json")), 415, "invalid_request"},
		{"Method", WithStatus(http.StatusMethodNotAllowed, models.Invalid("method", "not allowed")), 405, "invalid_request"},
	} {
		status, word := StatusOf(c.err)
		if status != c.status || word != c.word {
			t.Errorf("%s: %d %s, want %d %s", c.name, status, word, c.status, c.word)
		}
		if word == invalid.Word && !slices.Contains(invalid.Statuses(), status) {
			t.Errorf("%s: %d is not a status of invalid_request in the table (%v)", c.name, status, invalid.Statuses())
		}
	}
}

// TestRespondErrorRetryAfter: the words the table gives a Retry-After are
// answered with the header their error carries, and the others without one.
func TestRespondErrorRetryAfter(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	for _, c := range []struct {
		err        *models.Error
		status     int
		retryAfter string
	}{
		{models.Unavailable("Redis", errors.New("dial")), 503, "1"},
		{&models.Error{Code: models.CodeBusy, RetryAfterSeconds: 1}, 429, "1"},
		{&models.Error{Code: models.CodeRateLimited, RetryAfterSeconds: 37}, 429, "37"},
		{&models.Error{Code: models.CodeInProgress, RetryAfterSeconds: 1}, 409, "1"},
		{&models.Error{Code: models.CodeSoldOut}, 409, ""},
	} {
		rec := httptest.NewRecorder()
		c2, _ := gin.CreateTestContext(rec)
		c2.Request = httptest.NewRequest("POST", "/api/v1/x", nil)
		RespondError(c2, c.err)
		r := c.err.Result()
		if rec.Code != c.status || rec.Code != r.Status || rec.Header().Get("Retry-After") != c.retryAfter {
			t.Errorf("%s: %d Retry-After %q, want %d %q", r.Word, rec.Code, rec.Header().Get("Retry-After"), c.status, c.retryAfter)
		}
		if want := r.RetryAfter; want == "n" {
			if n, err := strconv.Atoi(c.retryAfter); err != nil || n < 1 {
				t.Errorf("%s: Retry-After %q is not a number of seconds", r.Word, c.retryAfter)
			}
		} else if want != c.retryAfter {
			t.Errorf("%s: the table says Retry-After %q, answered %q", r.Word, want, c.retryAfter)
		}
	}
}
