package web

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/couponsvc/couponsvc/models"
)

// domainError is the *models.Error in err's chain, or nil. An error that is
// one (most refusals, a flash sale's sold_out among them) is told without
// errors.As, whose target would cost an allocation per answer.
func domainError(err error) *models.Error {
	if e, ok := err.(*models.Error); ok {
		return e
	}
	return domainErrorInChain(err)
}

func domainErrorInChain(err error) *models.Error {
	var e *models.Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// encodeErrorBody is json.Marshal(b), byte for byte. A body without Fields
// whose strings need no escaping (most messages the service writes, a
// flash sale's sold_out among them) is written straight into one buffer;
// any other goes through encoding/json, which cannot fail on an ErrorBody
// (strings and an integer).
func encodeErrorBody(b ErrorBody) []byte {
	if len(b.Fields) > 0 || !plainJSON(b.Result) || !plainJSON(b.Error) || !plainJSON(b.Field) {
		out, _ := json.Marshal(b)
		return out
	}
	out := make([]byte, 0, 40+len(b.Result)+len(b.Error)+len(b.Field))
	out = append(out, `{"code":`...)
	out = strconv.AppendInt(out, int64(b.Code), 10)
	out = append(append(append(out, `,"result":"`...), b.Result...), `","error":"`...)
	out = append(append(out, b.Error...), '"')
	if b.Field != "" {
		out = append(append(append(out, `,"field":"`...), b.Field...), '"')
	}
	return append(out, '}')
}

// plainJSON reports whether encoding/json writes s as it is between quotes:
// printable ASCII without the quote, the backslash and the three characters
// it escapes for HTML.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20, c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}
