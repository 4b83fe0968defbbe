package main

import (
	"strings"
	"testing"
)

func TestCheckoutPlan(t *testing.T) {
	acts := checkoutPlan(400, 0.10, 0.05, 1)
	count := map[int]int{}
	for _, a := range acts {
		count[a]++
	}
	if len(acts) != 400 || count[actRelease] != 40 || count[actExpire] != 20 || count[actConfirm] != 340 {
		t.Fatalf("shares: %v", count)
	}
	if acts[0] == acts[1] && acts[1] == acts[2] && acts[2] == acts[3] && acts[3] == acts[4] && acts[4] == actRelease {
		t.Error("releases not spread")
	}
	again := checkoutPlan(400, 0.10, 0.05, 1)
	for i := range acts {
		if acts[i] != again[i] {
			t.Fatal("same seed, another plan")
		}
	}
}

func TestVerifyCheckout(t *testing.T) {
	good := []checkoutEnd{
		{act: actConfirm, code: "A", order: "o1", answered: true, status: "used", couponOrd: "o1", useLogs: 1},
		{act: actRelease, code: "B", order: "o2", answered: true, status: "issued", useLogs: 0},
		{act: actExpire, code: "C", order: "o3", answered: true, status: "issued", useLogs: 0},
		{act: actConfirm, code: "D", order: "o4", answered: false, status: "issued", useLogs: 0}, // shed: not checked
	}
	if n, bad := verifyCheckout(good, true); n != 3 || len(bad) != 0 {
		t.Fatalf("good: %d checked, %v", n, bad)
	}
	stillHeld := []checkoutEnd{{act: actExpire, code: "C", order: "o3", answered: true, status: "held", couponOrd: "o3", useLogs: 0}}
	if n, bad := verifyCheckout(stillHeld, false); n != 0 || len(bad) != 0 {
		t.Fatalf("expiry not checked: %d, %v", n, bad)
	}
	if _, bad := verifyCheckout(stillHeld, true); len(bad) != 1 || !strings.Contains(bad[0], "expired order o3: coupon C is held") {
		t.Fatalf("a hold left past its time passed: %v", bad)
	}
	broken := []checkoutEnd{
		{act: actConfirm, code: "A", order: "o1", answered: true, status: "used", couponOrd: "o1", useLogs: 2},
		{act: actConfirm, code: "E", order: "o5", answered: true, status: "held", couponOrd: "o5", useLogs: 1},
		{act: actRelease, code: "B", order: "o2", answered: true, status: "used", couponOrd: "o2", useLogs: 1},
	}
	_, bad := verifyCheckout(broken, true)
	want := []string{
		"confirmed order o1: 2 live use-log rows",
		"confirmed order o5: coupon E is held/\"o5\"",
		"released order o2: 1 live use-log rows",
		"released order o2: coupon B is used/\"o2\", expected issued",
	}
	if strings.Join(bad, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q", bad)
	}
}

func TestCheckoutAnswer(t *testing.T) {
	raw := []byte(`{"code":0,"result":"held","coupons":[{"coupon_code":"A","result":"ok","code":0}],"late":false}`)
	a := checkoutAnswer(answer{status: 201, raw: raw, err: errNotAvailable})
	if a.err != nil || a.kind() != "held" || !a.consistent() {
		t.Fatalf("%+v", a)
	}
	a = checkoutAnswer(answer{status: 201, raw: []byte("<html>")})
	if a.err == nil {
		t.Fatal("a body that is not JSON passed")
	}
}
