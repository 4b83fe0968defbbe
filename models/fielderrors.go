package models

import "errors"

// FieldError is one field at fault in a request, with what is wrong with it
// written to follow the field's name ("must be between 1 and 100").
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// FieldErrors collects the fields at fault of one request, so that a form
// hears of every mistake in one answer rather than one per submit. The zero
// value is ready to use.
type FieldErrors []FieldError

// Add records err: a CodeInvalidRequest error adds its field (or each of its
// fields), the first message of a field winning. nil adds nothing. Any other
// error (validation only makes CodeInvalidRequest ones) is recorded under
// the empty field, the request as a whole.
func (f *FieldErrors) Add(err error) {
	if err == nil {
		return
	}
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeInvalidRequest {
		*f = append(*f, FieldError{Field: "", Message: err.Error()})
		return
	}
	if len(e.Fields) > 0 {
		for _, fe := range e.Fields {
			f.add(fe)
		}
		return
	}
	f.add(FieldError{Field: e.Field, Message: e.Message})
}

func (f *FieldErrors) add(fe FieldError) {
	for _, have := range *f {
		if have.Field == fe.Field {
			return
		}
	}
	*f = append(*f, fe)
}

// Has reports whether field is at fault already.
func (f FieldErrors) Has(field string) bool {
	for _, fe := range f {
		if fe.Field == field {
			return true
		}
	}
	return false
}

// Err returns nil when no field is at fault, else one CodeInvalidRequest
// error that names the first field in Field and Message (as a single field
// error does, for callers that read one) and every field in Fields.
func (f FieldErrors) Err() error {
	if len(f) == 0 {
		return nil
	}
	return &Error{Code: CodeInvalidRequest, Field: f[0].Field, Message: f[0].Message, Fields: append([]FieldError(nil), f...)}
}

// FieldsOf returns the fields at fault of err: each of a multi-field error,
// the one of a single-field error, none for anything else.
func FieldsOf(err error) []FieldError {
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeInvalidRequest {
		return nil
	}
	if len(e.Fields) > 0 {
		return e.Fields
	}
	return []FieldError{{Field: e.Field, Message: e.Message}}
}
