package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/couponsvc/couponsvc/models"

	"github.com/gin-gonic/gin"
)

// MaxBodyBytes bounds every request body (see docs/result-codes.md).
const MaxBodyBytes = 64 << 10

// ErrBodyTooLarge refuses a body over MaxBodyBytes. It is invalid_request like
// every bad body, but answered 413 (StatusOf tells it by identity) so that a
// client knows that resending the same body cannot help.
var ErrBodyTooLarge = models.Invalid("body", "is larger than 64 KiB")

// BodyTooLarge reports whether err is the cut of http.MaxBytesReader.
func BodyTooLarge(err error) bool {
	var e *http.MaxBytesError
	return errors.As(err, &e)
}

// BindJSON decodes the request body strictly into dst: JSON content type, at
// most 64 KiB, one object (not null, an array or another value), no key
// twice, no unknown fields, numbers that fit, every field
// tagged binding:"required" present. On failure it
// answers 400 (415 for another content type, 413 for a body over 64 KiB)
// naming the field, and returns false.
func BindJSON(c *gin.Context, dst any) bool {
	if err := DecodeJSON(c.Request, dst); err != nil {
		var e *models.Error
		if errors.As(err, &e) && e.Field == "Content-Type" {
			err = WithStatus(http.StatusUnsupportedMediaType, e)
		}
		RespondError(c, err)
		return false
	}
	return true
}

// DecodeJSON is BindJSON without the answer: it returns the error.
func DecodeJSON(r *http.Request, dst any) error {
	return DecodeJSONLimit(r, dst, MaxBodyBytes)
}

// DecodeJSONLimit is DecodeJSON for a route whose row allows a larger body
// (MaxBody): a body over limit is refused with 413.
func DecodeJSONLimit(r *http.Request, dst any, limit int64) error {
	if !jsonMediaType(r.Header.Get("Content-Type")) {
		return models.Invalid("Content-Type", "must be application/json")
	}
	tooLarge := error(ErrBodyTooLarge)
	if limit != MaxBodyBytes {
		tooLarge = WithStatus(http.StatusRequestEntityTooLarge, models.Invalid("body", "is larger than %d MiB", limit>>20))
	}
	if r.ContentLength > limit {
		return tooLarge
	}
	body, err := readBody(io.LimitReader(r.Body, limit+1), r.ContentLength)
	if (err != nil && BodyTooLarge(err)) || int64(len(body)) > limit {
		return tooLarge
	}
	if err != nil {
		return models.Invalid("body", "could not be read")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return models.Invalid("body", "is required: a JSON object")
	}
	if !utf8.Valid(body) {
		// encoding/json would put U+FFFD in place of the bad bytes and go on:
		// a password or a name would be stored as something the client never
		// sent.
		return invalidUTF8(body)
	}
	if bytes.TrimSpace(body)[0] != '{' {
		// null would decode into the struct as nothing at all, an empty
		// change taken for a valid one; an array, a string or a number is
		// not the documented object either.
		return models.Invalid("body", "must be a JSON object")
	}
	if err := duplicateKey(body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonError(err, body)
	}
	if _, err := dec.Token(); err != io.EOF {
		return models.Invalid("body", "must hold exactly one JSON object")
	}
	return missingField(dst)
}

// readBody is io.ReadAll starting from a buffer of the declared length
// (plus the byte that finds the end), so that a 20-line cart is read into
// one allocation instead of a doubling series from 512 bytes; a body with no
// declared length, or longer than declared, grows as io.ReadAll's does. The
// caller has refused a declared length over its limit, and r stops at it.
func readBody(r io.Reader, declared int64) ([]byte, error) {
	size := int64(512)
	if declared > 0 {
		size = declared + 1
	}
	b := make([]byte, 0, size)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // room to read more
		}
	}
}

// duplicateKey names the first key that an object of body, at any depth,
// holds twice: encoding/json would keep the last silently, and it matches
// names regardless of case, so keys are compared the same way. A body that
// is not valid JSON is left to the decoder to name.
func duplicateKey(body []byte) error {
	if noDuplicateKey(body) {
		return nil
	}
	return duplicateKeyTokens(body)
}

// maxKeyScanDepth bounds the nesting noDuplicateKey follows; deeper bodies
// go to duplicateKeyTokens.
const maxKeyScanDepth = 64

// noDuplicateKey is duplicateKey's fast path, one pass over the bytes
// without a token per value: true when it read every object of body and
// found no key twice (compared as duplicateKeyTokens compares them). It
// answers false, leaving the answer to duplicateKeyTokens, at a key it
// found twice, a key with an escape, a nesting deeper than
// maxKeyScanDepth, or anything it does not read as JSON.
func noDuplicateKey(body []byte) bool {
	i, ok := scanValue(body, skipSpace(body, 0), 0)
	return ok && skipSpace(body, i) == len(body)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanString reads the string whose opening quote is at b[i]: the index
// after its closing quote, and whether it held an escape.
func scanString(b []byte, i int) (next int, escaped, ok bool) {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '"':
			return i + 1, escaped, true
		case '\\':
			escaped = true
			i++
		}
	}
	return i, escaped, false
}

// scanItem reads an array's element or an object member's value at b[i],
// then what follows it: a comma (next is after it and the spaces after it;
// done false) or the closing byte (next is after it; done true). Anything
// else is not JSON (ok false).
func scanItem(b []byte, i, depth int, closing byte) (next int, done, ok bool) {
	if i, ok = scanValue(b, i, depth); !ok {
		return i, false, false
	}
	i = skipSpace(b, i)
	switch {
	case i >= len(b):
		return i, false, false
	case b[i] == ',':
		return skipSpace(b, i+1), false, true
	case b[i] == closing:
		return i + 1, true, true
	}
	return i, false, false
}

// scanValue reads the value at b[i] (spaces skipped): the index after it.
func scanValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) || depth > maxKeyScanDepth {
		return i, false
	}
	switch b[i] {
	case '"':
		next, _, ok := scanString(b, i)
		return next, ok
	case '[':
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, true
		}
		for {
			var done, ok bool
			if i, done, ok = scanItem(b, i, depth+1, ']'); !ok || done {
				return i, ok
			}
		}
	case '{':
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, true
		}
		var keys []string
		var many map[string]bool
		for {
			if i >= len(b) || b[i] != '"' {
				return i, false
			}
			end, escaped, ok := scanString(b, i)
			if !ok || escaped {
				return i, false
			}
			fold := strings.ToLower(string(b[i+1 : end-1]))
			if many != nil {
				if many[fold] {
					return i, false
				}
				many[fold] = true
			} else {
				if slices.Contains(keys, fold) {
					return i, false
				}
				if keys = append(keys, fold); len(keys) > 16 {
					many = make(map[string]bool, 2*len(keys))
					for _, k := range keys {
						many[k] = true
					}
				}
			}
			i = skipSpace(b, end)
			if i >= len(b) || b[i] != ':' {
				return i, false
			}
			var done bool
			if i, done, ok = scanItem(b, skipSpace(b, i+1), depth+1, '}'); !ok || done {
				return i, ok
			}
		}
	default:
		// A number, true, false or null: its bytes up to the next
		// delimiter (the decoder checks them).
		start := i
		for i < len(b) && !strings.ContainsRune(",]} \t\n\r", rune(b[i])) {
			if b[i] == '"' || b[i] == '[' || b[i] == '{' {
				return i, false
			}
			i++
		}
		return i, i > start
	}
}

// duplicateKeyTokens is duplicateKey read token by token.
func duplicateKeyTokens(body []byte) error {
	type frame struct {
		object, expectKey bool
		keys              map[string]bool
	}
	var stack []*frame
	top := func() *frame {
		if len(stack) == 0 {
			return nil
		}
		return stack[len(stack)-1]
	}
	valueDone := func() {
		if f := top(); f != nil && f.object {
			f.expectKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		if f := top(); f != nil && f.object && f.expectKey {
			key, ok := tok.(string)
			if !ok { // the object's end
				stack = stack[:len(stack)-1]
				valueDone()
				continue
			}
			fold := strings.ToLower(key)
			if f.keys[fold] {
				if key == "" || !utf8.ValidString(key) || len(key) > 100 {
					return models.Invalid("body", "holds a field twice")
				}
				return models.Invalid(key, "appears more than once in the body")
			}
			f.keys[fold], f.expectKey = true, false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, expectKey: true, keys: map[string]bool{}})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}

// missingField names the first field tagged binding:"required" (a pointer)
// that the body left out, in the order of the struct, the fields of an
// embedded struct in its place: the tag that marks the field required in
// the OpenAPI document is the one that checks it.
func missingField(dst any) error {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	v = v.Elem()
	for _, f := range requiredFields(v.Type()) {
		if fv, err := v.FieldByIndexErr(f.index); err == nil && fv.IsNil() {
			return models.Invalid(f.name, "is required")
		}
	}
	return nil
}

// requiredField is a pointer field tagged binding:"required": where it is
// in its struct and its JSON name.
type requiredField struct {
	index []int
	name  string
}

// requiredByType holds requiredFields' answer per request type: walking a
// type's fields allocates, and every JSON request would walk its type again.
var requiredByType sync.Map // reflect.Type → []requiredField

// requiredFields lists the required pointer fields of struct type t, in the
// order of reflect.VisibleFields.
func requiredFields(t reflect.Type) []requiredField {
	if fs, ok := requiredByType.Load(t); ok {
		return fs.([]requiredField)
	}
	var fs []requiredField
	for _, f := range reflect.VisibleFields(t) {
		if f.Tag.Get("binding") != "required" || f.Type.Kind() != reflect.Pointer {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		fs = append(fs, requiredField{index: f.Index, name: name})
	}
	requiredByType.Store(t, fs)
	return fs
}

// jsonMediaType reports whether a Content-Type header names
// application/json (with any parameters). The header every client sends
// is answered without parsing it.
func jsonMediaType(header string) bool {
	if header == "application/json" || header == "application/json; charset=utf-8" {
		return true
	}
	mt, _, err := mime.ParseMediaType(header)
	return err == nil && mt == "application/json"
}

// invalidUTF8 names the field whose value holds bytes that are not UTF-8; the
// body as a whole when it is not an object of fields or the bad bytes are
// elsewhere (in a field's name).
func invalidUTF8(body []byte) error {
	var fields map[string]json.RawMessage // raw values keep the bytes as sent
	if json.Unmarshal(body, &fields) == nil {
		names := make([]string, 0, len(fields))
		for name, raw := range fields {
			if !utf8.Valid(raw) && name != "" && len(name) <= 100 {
				names = append(names, name)
			}
		}
		if len(names) > 0 {
			slices.Sort(names)
			return models.Invalid(names[0], "must be valid UTF-8 text")
		}
	}
	return models.Invalid("body", "is not valid UTF-8")
}

// jsonError names the field of a decoding error.
func jsonError(err error, body []byte) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		field := indexedField(body, typeErr.Field, typeErr.Offset)
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

// PathID parses the :name path parameter as a positive id.
func PathID(c *gin.Context, name string) (int64, bool) {
	id, err := strconv.ParseInt(c.Param(name), 10, 64)
	if err != nil || id <= 0 {
		RespondError(c, models.Invalid(name, "must be a positive whole number"))
		return 0, false
	}
	return id, true
}

// ParseTime parses an optional RFC 3339 time field (models.ParseTime, which
// checks its range); nil stays nil.
func ParseTime(field string, s *string) (*time.Time, error) {
	if s == nil {
		return nil, nil
	}
	t, err := models.ParseTime(field, *s)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// Optional is a field of a PATCH body that tells its three states apart: left
// out (Set false), null (Set and Null) and a value. encoding/json reads a null
// into a pointer as nil, the same as a field left out.
type Optional[T any] struct {
	Set, Null bool
	Value     T
}

// optionalField lets the OpenAPI document describe an optional field by the
// type of its value; a field tagged nullable:"true" is documented as nullable.
type optionalField interface{ ValueType() reflect.Type }

func (Optional[T]) ValueType() reflect.Type { return reflect.TypeFor[T]() }

func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		o.Null = true
		return nil
	}
	// A value of the wrong type fails with an *json.UnmarshalTypeError, which
	// the decoder completes with the field's name.
	return json.Unmarshal(b, &o.Value)
}

// NotNull sets *dst to the value of a field that cannot be removed: nil when
// left out, an error naming field when null.
func (o *Optional[T]) NotNull(field string, dst **T) error {
	switch {
	case o.Null:
		return models.Invalid(field, "cannot be null: leave the field out to keep its value")
	case o.Set:
		*dst = &o.Value
	}
	return nil
}

// Required returns an error naming field when v is nil.
func Required[T any](field string, v *T) error {
	if v == nil {
		return models.Invalid(field, "is required")
	}
	return nil
}

// FirstErr returns the first non-nil error.
func FirstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
