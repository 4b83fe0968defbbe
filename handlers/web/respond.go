// Package web is what the JSON API (package api) and the pages (package
// pages) share: the answer and error writers, request decoding, the
// principal, the limits, request observation, the route row type and the
// OpenAPI document made from the rows.
package web

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"couponsvc/models"

	"github.com/gin-gonic/gin"
)

// statusError is a domain error that HTTP answers with a more precise status
// than its code's: a wrong method (405) or body media type (415) is an
// invalid_request to the caller's program, and the status tells which.
type statusError struct {
	status int
	err    *models.Error
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

// WithStatus makes err answer status instead of its code's.
func WithStatus(status int, err *models.Error) error { return &statusError{status: status, err: err} }

// StatusOf returns the HTTP status and result word of an error.
func StatusOf(err error) (int, string) {
	var e *models.Error
	if !errors.As(err, &e) {
		return http.StatusInternalServerError, models.CodeInternal.Word()
	}
	if se := (*statusError)(nil); errors.As(err, &se) {
		return se.status, e.Code.Word()
	}
	if e == ErrBodyTooLarge {
		return http.StatusRequestEntityTooLarge, e.Code.Word()
	}
	// The status and word of its row of the result table (models.Results,
	// docs/result-codes.md): forbidden (403) for a Forbidden error.
	r := e.Result()
	return r.Status, r.Word
}

// Respond writes a success body: {"code":0|1,"result":word,...payload}.
func Respond(c *gin.Context, status int, result string, payload gin.H) {
	body := gin.H{"code": models.CodeOK, "result": result, "error": ""}
	if result == models.CodeDuplicate.Word() {
		body["code"] = models.CodeDuplicate
	}
	for k, v := range payload {
		body[k] = v
	}
	c.Set(ResultKey, result)
	c.JSON(status, body)
}

// Answer writes err when there is one, and else the success body (Respond).
func Answer(c *gin.Context, err error, status int, result string, payload gin.H) {
	if err != nil {
		RespondError(c, err)
		return
	}
	Respond(c, status, result, payload)
}

// Replayed is the result word of an answer: "duplicate" for a replay that
// changed nothing, else result.
func Replayed(duplicate bool, result string) string {
	if duplicate {
		return models.CodeDuplicate.Word()
	}
	return result
}

// errorBody is the JSON of every error answer. A struct, not a gin.H: a flash
// sale answers "sold_out" thousands of times a second, and encoding/json
// sorts a map's keys on every call.
type errorBody struct {
	Code   models.Code `json:"code"`
	Result string      `json:"result"`
	Error  string      `json:"error"`
	Field  string      `json:"field,omitempty"`
	// Fields lists every field at fault when there are several; Field and
	// Error name the first, for clients that read one.
	Fields []models.FieldError `json:"fields,omitempty"`
}

// RespondError writes the body of an error: its code, result word, a message
// for people and the field at fault. Only faults and bugs are logged.
func RespondError(c *gin.Context, err error) {
	status, word := StatusOf(err)
	var e *models.Error
	body := errorBody{Code: models.CodeInternal, Result: word, Error: "internal error"}
	if errors.As(err, &e) {
		body.Code, body.Error = e.Code, e.Message
		if e.Field != "" {
			body.Field = e.Field
			body.Error = e.Field + ": " + e.Message
		}
		if len(e.Fields) > 1 {
			body.Fields = e.Fields
		}
		if e.RetryAfterSeconds > 0 {
			c.Header("Retry-After", strconv.Itoa(e.RetryAfterSeconds))
		}
	}
	c.Set(ResultKey, word)
	switch {
	case status == http.StatusInternalServerError:
		slog.Default().Error("request failed", "method", c.Request.Method, "path", c.FullPath(),
			"status", status, "err", err)
	case status == http.StatusServiceUnavailable && e != nil && e.Err != nil:
		// A fault of Redis or the database. Load shedding (no cause) is
		// counted in the metrics instead, so that a flood does not flood the log.
		slog.Default().Warn("request failed", "method", c.Request.Method, "path", c.FullPath(),
			"status", status, "err", err)
	}
	c.AbortWithStatusJSON(status, body)
}

// FormatTime writes an instant of a JSON answer as encoding/json writes every
// other one: RFC 3339 in UTC, to the microsecond the database keeps, the
// fraction's trailing zeros left out (docs/time.md).
func FormatTime(t time.Time) string {
	return t.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano)
}
