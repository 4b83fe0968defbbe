package web

import (
	"encoding/json"
	"testing"

	"github.com/couponsvc/couponsvc/models"

	"pgregory.net/rapid"
)

// The error body written by hand is encoding/json's, byte for byte, on any
// strings: plain ones take the fast path, the others encoding/json's.
func TestEncodeErrorBodyIsJSONMarshal(t *testing.T) {
	text := rapid.OneOf(rapid.String(), rapid.StringMatching(`[ -~]{0,40}`), rapid.SampledFrom([]string{"", "sold_out",
		"this coupon is sold out", `a "quoted" word`, `<b>&amp;</b>`, "tab\there", "\u2028", "bad \xff byte"}))
	rapid.Check(t, func(t *rapid.T) {
		b := ErrorBody{Code: models.Code(rapid.IntRange(0, 99).Draw(t, "code")), Result: text.Draw(t, "result"),
			Error: text.Draw(t, "error"), Field: text.Draw(t, "field")}
		if rapid.Bool().Draw(t, "fields") {
			b.Fields = []models.FieldError{{Field: text.Draw(t, "f1"), Message: text.Draw(t, "m1")}}
		}
		want, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		if got := encodeErrorBody(b); string(got) != string(want) {
			t.Fatalf("encodeErrorBody = %s, want %s", got, want)
		}
	})
}

// A refusal that is a *models.Error answers as it did through errors.As:
// the same status and word, and the status of WithStatus when wrapped so.
func TestStatusOfDirectAndWrapped(t *testing.T) {
	soldOut := &models.Error{Code: models.CodeSoldOut, Message: "this coupon is sold out"}
	for _, tc := range []struct {
		name   string
		err    error
		status int
		word   string
	}{
		{"direct", soldOut, 409, "sold_out"},
		{"with status", WithStatus(415, models.Invalid("Content-Type", "must be application/json")), 415, "invalid_request"},
		{"cause with status", &models.Error{Code: models.CodeInvalidRequest, Message: "m", Err: WithStatus(405, soldOut)}, 405, "invalid_request"},
		{"body too large", ErrBodyTooLarge, 413, "invalid_request"},
		{"not a domain error", json.Unmarshal([]byte("x"), new(int)), 500, "internal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if status, word := StatusOf(tc.err); status != tc.status || word != tc.word {
				t.Errorf("StatusOf = %d %s, want %d %s", status, word, tc.status, tc.word)
			}
		})
	}
}
