package core

import "testing"

// TestPendingMemberRoundTrip formats members and reads them back, a request
// id with the separator in it included.
func TestPendingMemberRoundTrip(t *testing.T) {
	for _, m := range []PendingMember{
		{TemplateID: 7, UserID: "alice", Slot: 0, Ordinal: 1, ValueCents: 500, RequestID: "k-1"},
		{TemplateID: 1 << 40, UserID: "a.b_c:d@e-f", Slot: 9_999_999, Ordinal: 100, ValueCents: 0, RequestID: "a|b|c"},
		{TemplateID: 3, UserID: "u", Slot: 2, Ordinal: 3, ValueCents: -1, RequestID: "|"},
	} {
		s := m.String()
		got, ok := ParsePendingMember(s)
		if !ok || got != m {
			t.Errorf("%+v → %q → %+v, %v", m, s, got, ok)
		}
	}
	if s := (PendingMember{TemplateID: 12, UserID: "bob", Slot: 4, Ordinal: 2, ValueCents: 750, RequestID: "key"}).String(); s != "12|bob|4|2|750|key" {
		t.Errorf("the member is %q, want the layout coupon_deduct.lua writes", s)
	}
}

// TestPendingMemberMalformed refuses anything but a whole member.
func TestPendingMemberMalformed(t *testing.T) {
	for _, s := range []string{
		"",
		"12",
		"12|bob|4|2|750",        // no request id
		"12|bob|4|2|750|",       // an empty request id
		"12||4|2|750|key",       // no user
		"x|bob|4|2|750|key",     // template id
		"12|bob|four|2|750|key", // slot
		"12|bob|4|2.5|750|key",  // ordinal
		"12|bob|4|2||key",       // value
		"12|bob|4|2|99999999999999999999|key",
	} {
		if m, ok := ParsePendingMember(s); ok {
			t.Errorf("%q parsed as %+v", s, m)
		}
	}
}
