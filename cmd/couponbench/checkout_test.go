package main

import (
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/services/pricing/benchcart"
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

func TestVerifyCartOrders(t *testing.T) {
	isLined := func(ord string) bool { return strings.HasPrefix(ord, "cl") }
	rows := map[string]cartOrderRow{
		"ca-1": {amountCents: 9000},
		"cl-1": {hasCartHash: true, amountCents: 9000, lines: 20, discountCents: 500},
		"cl-2": {hasCartHash: true, amountCents: 9000, lines: 19, discountCents: 500},
		"ca-2": {amountCents: 9000, lines: 1},
		"cl-3": {amountCents: 9000, lines: 20, discountCents: 500},
		"ca-3": {amountCents: 8000},
	}
	if bad := verifyCartOrders(rows, []string{"ca-1", "cl-1"}, isLined, 20, 9000, 500); len(bad) != 0 {
		t.Fatalf("good orders: %v", bad)
	}
	bad := verifyCartOrders(rows, []string{"ca-1", "cl-1", "cl-2", "ca-2", "cl-3", "ca-3", "cl-4"}, isLined, 20, 9000, 500)
	want := []string{
		"amount-only order ca-2: cart hash false, 1 lines, 0 of discount on them",
		"lined order cl-2: cart hash true, 19 lines, 500 of discount on them",
		"lined order cl-3: cart hash false, 20 lines, 500 of discount on them",
		"order ca-3: amount 8000, want 9000",
		"order cl-4: no checkout_orders row",
	}
	if strings.Join(bad, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q", bad)
	}
}

func TestAPILinesAndCPUSums(t *testing.T) {
	cart, _ := benchcart.New(20)
	lines := apiLines(&cart)
	if len(lines) != 20 || lines[0].Discountable == nil || *lines[0].Discountable || lines[1].Discountable != nil ||
		lines[1].LineID != "line-001" || lines[1].Quantity != 2 || lines[1].UnitPriceCents != cart.Lines[1].UnitPriceCents {
		t.Fatalf("lines %+v", lines[:2])
	}
	sum := addCPU(nil, []ProcCPU{{Name: "couponbench", Seconds: 1}, {Name: "couponsvc", Seconds: 2}})
	sum = addCPU(sum, []ProcCPU{{Name: "couponsvc", Seconds: 3}})
	rows := finishCPU(sum, 10, 1000)
	if len(rows) != 2 || rows[1].Seconds != 5 || rows[1].Cores != 0.5 || rows[1].MicrosPerAnswer != 5000 || rows[0].Cores != 0.1 {
		t.Fatalf("rows %+v", rows)
	}
}

func TestCheckoutRatiosAgainstBothOrderReferences(t *testing.T) {
	sums := map[string]*Summary{
		"checkout": {Name: "checkout", Seconds: 10, OKPerSecond: 600, Results: map[string]int{"redeemed": 5100},
			CPU: []ProcCPU{{Name: "mariadb", MicrosPerAnswer: 1500}}},
		"raworderlines": {Name: "raworderlines", OKPerSecond: 800, CPU: []ProcCPU{{Name: "mariadb", MicrosPerAnswer: 1000}}},
		"raworder":      {Name: "raworder", OKPerSecond: 1200, CPU: []ProcCPU{{Name: "mariadb", MicrosPerAnswer: 600}}},
	}
	got := map[string]Ratio{}
	for _, x := range checkoutRatios(func(n string) *Summary { return sums[n] }) {
		got[x.Name] = x
	}
	if len(got) != 4 {
		t.Fatalf("got %d ratios, want 4: %+v", len(got), got)
	}
	if x := got["checkout/raworderlines (orders settled/s)"]; x.Value != 0.75 || x.Info || !x.Met ||
		x.Detail != "600 orders/s (510/s held and confirmed) vs 800/s" {
		t.Errorf("target ratio: %+v", x)
	}
	if x := got["checkout/raworderlines (MariaDB CPU per order)"]; x.Value != 1.5 || x.Info || !x.Met {
		t.Errorf("MariaDB ratio: %+v", x)
	}
	if x := got["checkout/raworder (orders settled/s)"]; x.Value != 0.5 || !x.Info {
		t.Errorf("raworder ratio: %+v", x)
	}
	if x := got["checkout/raworder (MariaDB CPU per order)"]; x.Value != 2.5 || !x.Info {
		t.Errorf("raworder MariaDB ratio: %+v", x)
	}
	delete(sums, "raworderlines")
	if n := len(checkoutRatios(func(n string) *Summary { return sums[n] })); n != 2 {
		t.Errorf("without raworderlines: %d ratios, want 2", n)
	}
}
