package models

import (
	"fmt"
	"testing"
)

func TestParseAuditDetail(t *testing.T) {
	for detail, want := range map[string]string{
		`user=u1 template=3 status_was=issued return_stock=true reason="shared \"publicly\" = x"`: `[{user u1} {template 3} {status_was issued} {return_stock true} {reason shared "publicly" = x}]`,
		`budget drift=-2 budget_cents=500`:  `[{ budget} {drift -2} {budget_cents 500}]`,
		`name="Summer sale" budget_cents=0`: `[{name Summer sale} {budget_cents 0}]`,
		``:                                  `[]`,
		`reason="unterminated`:              `[{reason "unterminated}]`,
	} {
		if got := fmt.Sprint(ParseAuditDetail(detail)); got != want {
			t.Errorf("ParseAuditDetail(%q) = %s, want %s", detail, got, want)
		}
	}
	if v, ok := DetailValue(ParseAuditDetail(`a=1 reason="x y"`), "reason"); !ok || v != "x y" {
		t.Fatalf("DetailValue = %q, %t", v, ok)
	}
}
