package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"couponsvc/models"

	"github.com/gin-gonic/gin"
)

// maxBodyBytes bounds every request body (SPEC §5).
const maxBodyBytes = 64 << 10

// bindJSON decodes the request body strictly into dst: JSON content type, at
// most 64 KiB, one object, no unknown fields, numbers that fit. On failure it
// answers 400 (415 for another content type) naming the field, and returns false.
func bindJSON(c *gin.Context, dst any) bool {
	if err := decodeJSON(c.Request, dst); err != nil {
		var e *models.Error
		if errors.As(err, &e) && e.Field == "Content-Type" {
			err = withStatus(http.StatusUnsupportedMediaType, e)
		}
		respondError(c, err)
		return false
	}
	return true
}

func decodeJSON(r *http.Request, dst any) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return models.Invalid("Content-Type", "must be application/json")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return models.Invalid("body", "could not be read")
	}
	if len(body) > maxBodyBytes {
		return models.Invalid("body", "is larger than 64 KiB")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return models.Invalid("body", "is required: a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return models.Invalid("body", "must hold exactly one JSON object")
	}
	return nil
}

// jsonError names the field of a decoding error.
func jsonError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			return models.Invalid("body", "must be a JSON object")
		}
		what := typeErr.Type.String()
		switch typeErr.Type.Kind().String() {
		case "int", "int64", "int32":
			what = "a whole number that fits in 64 bits"
		case "string":
			what = "a string"
		case "bool":
			what = "true or false"
		}
		return models.Invalid(field, "must be %s", what)
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF):
		return models.Invalid("body", "is not valid JSON")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
		if field == "" || !utf8.ValidString(field) || len(field) > 100 {
			// A name that cannot stand as the field at fault (found by FuzzDecodeJSON).
			return models.Invalid("body", "holds a field that is not known: %q", field[:min(len(field), 100)])
		}
		return models.Invalid(field, "is not a known field")
	}
	return models.Invalid("body", "is not valid JSON for this request")
}

// pathID parses the :name path parameter as a positive id.
func pathID(c *gin.Context, name string) (int64, bool) {
	id, err := strconv.ParseInt(c.Param(name), 10, 64)
	if err != nil || id <= 0 {
		respondError(c, models.Invalid(name, "must be a positive whole number"))
		return 0, false
	}
	return id, true
}

// parseTime parses an optional RFC 3339 time field; nil stays nil.
func parseTime(field string, s *string) (*time.Time, error) {
	if s == nil {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, *s)
	if err != nil {
		return nil, models.Invalid(field, "must be an RFC 3339 time such as 2026-01-02T15:04:05Z")
	}
	t = t.UTC()
	return &t, nil
}

// required returns an error naming field when v is nil.
func required[T any](field string, v *T) error {
	if v == nil {
		return models.Invalid(field, "is required")
	}
	return nil
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
