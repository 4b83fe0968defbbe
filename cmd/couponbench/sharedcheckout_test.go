package main

import (
	"strings"
	"testing"
)

func TestVerifySharedCheckout(t *testing.T) {
	orders := []sharedOrder{
		{user: 0, order: "o0", confirmed: true, code: "A"},
		{user: 1, order: "o1", confirmed: true, code: "B"},
		{user: 0, order: "o2"}, // refused: over the limit
		{user: 2, order: "o3"}, // refused: sold out
	}
	if bad := verifySharedCheckout(orders, map[int][]string{0: {"A"}, 1: {"B"}}, 2, 1, 3); len(bad) != 0 {
		t.Fatalf("good run: %v", bad)
	}
	for _, tc := range []struct {
		name string
		used map[int][]string
		want string
	}{
		{"Twice", map[int][]string{0: {"A", "C"}, 1: {"B"}}, "over a limit of 1"},
		{"Short", map[int][]string{0: {"A"}}, "want exactly 2"},
		{"Oversold", map[int][]string{0: {"A"}, 1: {"B"}, 2: {"C"}}, "want exactly 2"},
		{"Unanswered", map[int][]string{0: {"A"}, 1: {"X"}}, "coupon B is not used"},
	} {
		bad := verifySharedCheckout(orders, tc.used, 2, 1, 3)
		if !strings.Contains(strings.Join(bad, "; "), tc.want) {
			t.Errorf("%s: %v, want a problem saying %q", tc.name, bad, tc.want)
		}
	}
}
