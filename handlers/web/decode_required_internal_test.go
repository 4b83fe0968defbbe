package web

import (
	"testing"

	"github.com/couponsvc/couponsvc/models"
)

// A required field of an embedded struct is checked as one of the outer
// struct, in the struct's order, as the OpenAPI document marks it.
func TestMissingFieldSeesEmbeddedFields(t *testing.T) {
	type inner struct {
		Code *string `json:"code" binding:"required"`
		Note *string `json:"note"`
	}
	type outer struct {
		ID *int64 `json:"id" binding:"required"`
		inner
		Tail *string `json:"tail" binding:"required"`
	}
	id, code, tail := int64(1), "A", "z"
	for _, tc := range []struct {
		name string
		in   outer
		want string // the field named, "" for none
	}{
		{"all there", outer{ID: &id, inner: inner{Code: &code}, Tail: &tail}, ""},
		{"outer first", outer{inner: inner{Code: &code}}, "id"},
		{"embedded before what follows it", outer{ID: &id}, "code"},
		{"last", outer{ID: &id, inner: inner{Code: &code}}, "tail"},
	} {
		err := missingField(&tc.in)
		var got string
		if e, ok := err.(*models.Error); ok {
			got = e.Field
			if e.Code != models.CodeInvalidRequest || e.Message != "is required" {
				t.Errorf("%s: %+v", tc.name, e)
			}
		} else if err != nil {
			t.Errorf("%s: %v is not a *models.Error", tc.name, err)
		}
		if got != tc.want {
			t.Errorf("%s: names %q, want %q", tc.name, got, tc.want)
		}
	}
}
