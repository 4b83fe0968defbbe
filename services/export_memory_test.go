package services_test

import (
	"bufio"
	"bytes"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	codesvc "github.com/couponsvc/couponsvc/services/codes"
)

// lineCounter counts the lines written to it and keeps the first two.
type lineCounter struct {
	lines int64
	head  bytes.Buffer
}

func (w *lineCounter) Write(p []byte) (int, error) {
	if w.head.Len() < 200 {
		w.head.Write(p[:min(len(p), 200)])
	}
	w.lines += int64(bytes.Count(p, []byte{'\n'}))
	return len(p), nil
}

// TestExportBoundedMemory exports 200,000 coupons and samples the heap
// while it runs: the export holds one page of rows, so the heap grows by a
// few MiB at most, where holding the rows would take well over 50 MiB
// (200,000 coupons of some 300 bytes each in Go).
func TestExportBoundedMemory(t *testing.T) {
	count := 200_000
	if raceDetector {
		count = 50_000 // the bound below still holds 50,000 rows many times over
	}
	f := newJobFixture(t, services.Config{CodesConfig: services.CodesConfig{JobBatch: 5000}})
	c := f.Campaign(0)
	tp := f.Template(models.Template{CampaignID: c.ID, TotalStock: int64(count)})
	if _, err := f.Codes.StartGenerate(f.Ctx, "admin", tp.ID, int64(count), ""); err != nil {
		t.Fatal(err)
	}
	f.runAll(f.Svc)
	if err := f.Codes.CheckExport(f.Ctx, tp.ID, codesvc.ExportFilter{}); err != nil {
		t.Fatal(err)
	}

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	var out lineCounter
	n, err := f.Codes.ExportCoupons(f.Ctx, tp.ID, codesvc.ExportFilter{}, &out)
	close(stop)
	wg.Wait()
	if err != nil || n != int64(count) || out.lines != int64(count)+1 {
		t.Fatalf("export: %d rows, %d lines, %v; want %d rows and a header", n, out.lines, err, count)
	}
	if !strings.HasPrefix(out.head.String(), codesvc.ExportHeader+"\n") {
		t.Fatalf("export starts %q", out.head.String())
	}
	rise := int64(peak.Load()) - int64(base)
	t.Logf("heap in use rose by %.1f MiB exporting %d coupons", float64(rise)/(1<<20), count)
	if rise > 24<<20 {
		t.Fatalf("heap in use rose by %d MiB exporting %d coupons; an export must not hold its rows", rise>>20, count)
	}
}

func TestExportFilters(t *testing.T) {
	f := newJobFixture(t, services.Config{})
	c := f.Campaign(0)
	tp := f.Template(models.Template{CampaignID: c.ID, TotalStock: 10, PerUserLimit: 5})
	a := f.MustClaim(tp.ID, "alice", "k1").Coupon
	f.Clock.Advance(time.Hour)
	b := f.MustClaim(tp.ID, "alice", "k2").Coupon
	if _, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: b.Code, OrderID: "o1", OrderAmountCents: 1000, Cashier: "c"}); err != nil {
		t.Fatal(err)
	}
	f.Clock.Advance(31 * 24 * time.Hour) // a expires
	export := func(flt codesvc.ExportFilter) []string {
		t.Helper()
		var buf bytes.Buffer
		if _, err := f.Codes.ExportCoupons(f.Ctx, tp.ID, flt, &buf); err != nil {
			t.Fatal(err)
		}
		var codes []string
		sc := bufio.NewScanner(&buf)
		sc.Scan()
		for sc.Scan() {
			rec := strings.Split(sc.Text(), ",")
			codes = append(codes, rec[0]+":"+rec[2])
		}
		return codes
	}
	for _, tt := range []struct {
		f    codesvc.ExportFilter
		want string
	}{
		{codesvc.ExportFilter{}, a.Code + ":expired," + b.Code + ":used"},
		{codesvc.ExportFilter{Status: "expired"}, a.Code + ":expired"},
		{codesvc.ExportFilter{Status: "used"}, b.Code + ":used"},
		{codesvc.ExportFilter{Status: "issued"}, ""},
		{codesvc.ExportFilter{From: b.ClaimedAt}, b.Code + ":used"},
		{codesvc.ExportFilter{To: b.ClaimedAt}, a.Code + ":expired"},
	} {
		if got := strings.Join(export(tt.f), ","); got != tt.want {
			t.Errorf("export %+v = %s, want %s", tt.f, got, tt.want)
		}
	}
	for _, tt := range []struct {
		f     codesvc.ExportFilter
		field string
	}{
		{codesvc.ExportFilter{Status: "lost"}, "status"},
		{codesvc.ExportFilter{From: b.ClaimedAt, To: a.ClaimedAt}, "to"},
	} {
		assertJobCode(t, f.Codes.CheckExport(f.Ctx, tp.ID, tt.f), models.CodeInvalidRequest, tt.field)
	}
	assertJobCode(t, f.Codes.CheckExport(f.Ctx, 999999, codesvc.ExportFilter{}), models.CodeNotFound, "")
}
