// Package web is what the JSON API (package api) and the pages (package
// pages) share: the answer and error writers, request decoding, the
// principal, the limits, request observation, the route row type and the
// OpenAPI document made from the rows.
package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"strconv"
	"time"

	"github.com/couponsvc/couponsvc/models"

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
	e := domainError(err)
	if e == nil {
		return http.StatusInternalServerError, models.CodeInternal.Word()
	}
	if se, ok := err.(*statusError); ok {
		return se.status, e.Code.Word()
	}
	if e != err || e.Err != nil {
		if se := wrappedStatusError(err); se != nil {
			return se.status, e.Code.Word()
		}
	}
	if e == ErrBodyTooLarge {
		return http.StatusRequestEntityTooLarge, e.Code.Word()
	}
	// The status and word of its row of the result table (models.Results,
	// docs/result-codes.md): forbidden (403) for a Forbidden error.
	r := e.Result()
	return r.Status, r.Word
}

// Respond writes a success body: {"code":0|1,"result":word,"error":"",
// ...payload}, the fields of payload (a named answer type, the Answer of the
// route's row) after the first three. The route's chain tells Respond which
// type its row names (ExpectAnswer): another type is a bug, answered as an
// internal error so that any test of the route finds it.
func Respond[T any](c *gin.Context, status int, result string, payload T) {
	if want, ok := c.Get(answerTypeKey); ok && want != reflect.TypeFor[T]() {
		RespondError(c, fmt.Errorf("the handler answers %v, its route's row names %v", reflect.TypeFor[T](), want))
		return
	}
	c.Set(ResultKey, result)
	Write(c, status, result, payload)
}

// Write writes a success body as Respond does, without checking its type
// or giving its result word to the request's metrics (the health check).
func Write[T any](c *gin.Context, status int, result string, payload T) {
	code := models.CodeOK
	if result == models.CodeDuplicate.Word() {
		code = models.CodeDuplicate
	}
	head, err := json.Marshal(Envelope{Code: code, Result: result})
	if err != nil {
		RespondError(c, err)
		return
	}
	body, err := json.Marshal(payload)
	if err == nil && body[0] != '{' {
		err = fmt.Errorf("the answer %T is not a JSON object: %.40s", payload, body)
	}
	if err != nil {
		RespondError(c, err)
		return
	}
	// Both are objects: the payload's fields go inside the envelope's braces.
	if len(body) > 2 {
		head = append(append(head[:len(head)-1], ','), body[1:]...)
	}
	c.Data(status, "application/json; charset=utf-8", head)
}

// Answer writes err when there is one, and else the success body (Respond).
func Answer[T any](c *gin.Context, err error, status int, result string, payload T) {
	if err != nil {
		RespondError(c, err)
		return
	}
	Respond(c, status, result, payload)
}

// answerTypeKey is the gin context key of the answer type of the request's
// route (ExpectAnswer).
const answerTypeKey = "couponsvc.answer"

// ExpectAnswer returns the middleware that tells Respond the answer type of
// the route's row, or nil when the row has none.
func ExpectAnswer(rt Route) gin.HandlerFunc {
	if rt.Answer == nil {
		return nil
	}
	return func(c *gin.Context) { c.Set(answerTypeKey, rt.Answer) }
}

// Envelope is what every success answer starts with; the payload's fields
// follow (Respond).
type Envelope struct {
	Code   models.Code `json:"code" doc:"0 done, 1 duplicate (a replay, answered with the first answer)"`
	Result string      `json:"result" doc:"the result word"`
	Error  string      `json:"error" doc:"empty"`
	// Duplicate is set by Idempotency on a replay, never by a handler.
	Duplicate bool `json:"duplicate,omitempty" doc:"true on a replay of an Idempotency-Key's first answer (its fields and result word as they were; header Idempotent-Replayed: true)"`
}

// NoPayload is the answer of a route that says no more than its result.
type NoPayload struct{}

// Replayed is the result word of an answer: "duplicate" for a replay that
// changed nothing, else result.
func Replayed(duplicate bool, result string) string {
	if duplicate {
		return models.CodeDuplicate.Word()
	}
	return result
}

// ErrorBody is the JSON of every error answer. A struct, not a map: a flash
// sale answers "sold_out" thousands of times a second, and encoding/json
// sorts a map's keys on every call.
type ErrorBody struct {
	Code   models.Code `json:"code" doc:"the result code (99: internal error)"`
	Result string      `json:"result" doc:"the result word: invalid_request, sold_out, busy…"`
	Error  string      `json:"error" doc:"a message for people"`
	Field  string      `json:"field,omitempty" doc:"the request field at fault (invalid_request and a few others): the first when there are several"`
	// Fields lists every field at fault when there are several; Field and
	// Error name the first, for clients that read one.
	Fields []models.FieldError `json:"fields,omitempty" doc:"every field at fault, when validation found several"`
}

// wrappedStatusError is the statusError in err's chain, or nil.
func wrappedStatusError(err error) *statusError {
	var se *statusError
	if errors.As(err, &se) {
		return se
	}
	return nil
}

// RespondError writes the body of an error: its code, result word, a message
// for people and the field at fault. Only faults and bugs are logged.
func RespondError(c *gin.Context, err error) {
	status, word := StatusOf(err)
	e := domainError(err)
	body := ErrorBody{Code: models.CodeInternal, Result: word, Error: "internal error"}
	if e != nil {
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
	case (status == http.StatusServiceUnavailable || errors.Is(err, context.Canceled)) &&
		errors.Is(c.Request.Context().Err(), context.Canceled):
		// The caller hung up, and the database or Redis call ended with its
		// context: no fault of theirs, and no one reads this answer. The
		// log and the metrics say 499, the caller's hang-up (Observe).
		c.Set(hungUpKey, true)
		slog.Default().Info("the caller hung up", "method", c.Request.Method, "path", c.FullPath(),
			"status", StatusClientClosed)
	case status == http.StatusServiceUnavailable && e != nil && e.Err != nil:
		// A fault of Redis or the database. Load shedding (no cause) is
		// counted in the metrics instead, so that a flood does not flood the log.
		slog.Default().Warn("request failed", "method", c.Request.Method, "path", c.FullPath(),
			"status", status, "err", err)
	}
	c.Abort()
	c.Data(status, "application/json; charset=utf-8", encodeErrorBody(body))
}

// FormatTime writes an instant of a JSON answer as encoding/json writes every
// other one: RFC 3339 in UTC, to the microsecond the database keeps, the
// fraction's trailing zeros left out (docs/time.md).
func FormatTime(t time.Time) string {
	return t.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano)
}
