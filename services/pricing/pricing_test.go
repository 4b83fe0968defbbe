package pricing_test

import (
	"reflect"
	"testing"

	"github.com/couponsvc/couponsvc/services/pricing"
)

func lines(prices ...int64) []pricing.Line {
	out := make([]pricing.Line, len(prices))
	for i, p := range prices {
		out[i] = pricing.Line{ID: string(rune('a' + i)), SKU: "sku-" + string(rune('a'+i)), Quantity: 1, UnitPriceCents: p}
	}
	return out
}

func lineDiscounts(r pricing.Result) []int64 {
	out := make([]int64, len(r.Lines))
	for i, l := range r.Lines {
		out[i] = l.DiscountCents
	}
	return out
}

func TestFixedOverThreeEqualLinesTiesToTheEarlierLine(t *testing.T) {
	cart := pricing.Cart{Lines: lines(1000, 1000, 1000)}
	r := pricing.Price(&cart, []pricing.Coupon{{Code: "A", Kind: pricing.KindFixed, FaceValueCents: 1000}})
	if got, want := lineDiscounts(r), []int64{334, 333, 333}; !reflect.DeepEqual(got, want) {
		t.Fatalf("lines %v, want %v", got, want)
	}
	if r.DiscountCents != 1000 || r.PayableCents != 2000 || r.Coupons[0].DiscountCents != 1000 {
		t.Fatalf("discount %d payable %d coupon %d", r.DiscountCents, r.PayableCents, r.Coupons[0].DiscountCents)
	}
}

func TestBuyTwoGetOneSetsFromTheTop(t *testing.T) {
	// Units 30, 20, 10, 10: one set 30+20+10, whose 10 is free; the other 10
	// is in no set and pays. The 10 off is spread over the set's units by
	// what they cost: 5, 3.33, 1.67 -> 5, 3, 2 (largest remainder).
	cart := pricing.Cart{Lines: lines(30, 20, 10, 10)}
	c := pricing.Coupon{Code: "B2G1", Kind: pricing.KindBuyXGetY, BuyQuantity: 2, GetQuantity: 1, GetPercent: 100, MaxDiscountCents: 1000}
	r := pricing.Price(&cart, []pricing.Coupon{c})
	if got, want := lineDiscounts(r), []int64{5, 3, 2, 0}; !reflect.DeepEqual(got, want) {
		t.Fatalf("lines %v, want %v", got, want)
	}
	if r.DiscountCents != 10 || r.PayableCents != 60 {
		t.Fatalf("discount %d payable %d, want 10 and 60", r.DiscountCents, r.PayableCents)
	}
	// Returning the 30 (kept the free one) gives back what was paid for it.
	parts := r.Coupons[0].Lines[0].Units
	if refund, disc := pricing.Return(30, parts, 0, 1); refund != 25 || disc != 5 {
		t.Fatalf("return of the 30: refund %d discount %d, want 25 and 5", refund, disc)
	}
}

func TestBuyXGetYInOneLineAndMaxApplications(t *testing.T) {
	// Seven T-shirts at 1,000, buy 2 get 1 free, at most 2 sets: 6 units in
	// sets, 2,000 off, spread over those 6 units (333.33 each: 334, 334,
	// 333...), the seventh pays in full.
	cart := pricing.Cart{Lines: []pricing.Line{{ID: "t", SKU: "tee", Quantity: 7, UnitPriceCents: 1000}}}
	c := pricing.Coupon{Code: "B2G1", Kind: pricing.KindBuyXGetY, BuyQuantity: 2, GetQuantity: 1, GetPercent: 100, MaxApplications: 2, MaxDiscountCents: 100000}
	r := pricing.Price(&cart, []pricing.Coupon{c})
	want := []pricing.UnitRun{{First: 0, Count: 2, PerUnitCents: 334}, {First: 2, Count: 4, PerUnitCents: 333}}
	if r.DiscountCents != 2000 || !reflect.DeepEqual(r.Coupons[0].Lines[0].Units, want) {
		t.Fatalf("discount %d units %+v, want 2000 and %+v", r.DiscountCents, r.Coupons[0].Lines[0].Units, want)
	}
	if refund, disc := pricing.Return(1000, want, 6, 1); refund != 1000 || disc != 0 {
		t.Fatalf("seventh unit: refund %d discount %d", refund, disc)
	}
}

func TestPercentOnShoesNotOnSaleItems(t *testing.T) {
	cart := pricing.Cart{Lines: []pricing.Line{
		{ID: "1", SKU: "boot-42", CategoryIDs: []string{"shoes"}, Quantity: 1, UnitPriceCents: 8000},
		{ID: "2", SKU: "sandal-sale", CategoryIDs: []string{"sale", "shoes"}, Quantity: 1, UnitPriceCents: 3000},
		{ID: "3", SKU: "sock", CategoryIDs: []string{"socks"}, Quantity: 2, UnitPriceCents: 500},
	}}
	c := pricing.Coupon{Code: "SHOES20", Kind: pricing.KindPercent, PercentOff: 20, MaxDiscountCents: 100000,
		AppliesTo: pricing.AppliesToItems, Match: pricing.Match{CategoryIDs: []string{"shoes"}, ExcludeCategoryIDs: []string{"sale"}}}
	r := pricing.Price(&cart, []pricing.Coupon{c})
	if got, want := lineDiscounts(r), []int64{1600, 0, 0}; !reflect.DeepEqual(got, want) {
		t.Fatalf("lines %v, want %v", got, want)
	}
	// min_order_cents counts only the targeted lines: 8,000 is below 9,000.
	c.MinOrderCents = 9000
	r = pricing.Price(&cart, []pricing.Coupon{c})
	if r.DiscountCents != 0 || r.Coupons[0].Refusal != pricing.RefusalBelowMinimum {
		t.Fatalf("below minimum: discount %d refusal %q", r.DiscountCents, r.Coupons[0].Refusal)
	}
}

func TestFreeShippingCappedAndOverAMinimum(t *testing.T) {
	cart := pricing.Cart{Lines: lines(4000, 2000), ShippingCents: 1500}
	c := pricing.Coupon{Code: "SHIP", Kind: pricing.KindFreeShipping, MaxDiscountCents: 1000, MinOrderCents: 5000}
	r := pricing.Price(&cart, []pricing.Coupon{c})
	if r.ShippingDiscountCents != 1000 || r.DiscountCents != 1000 || r.PayableCents != 6500 || r.Coupons[0].ShippingCents != 1000 {
		t.Fatalf("shipping %d discount %d payable %d", r.ShippingDiscountCents, r.DiscountCents, r.PayableCents)
	}
	if got := lineDiscounts(r); !reflect.DeepEqual(got, []int64{0, 0}) {
		t.Fatalf("free shipping touched the lines: %v", got)
	}
	small := pricing.Cart{Lines: lines(4000), ShippingCents: 1500}
	if r := pricing.Price(&small, []pricing.Coupon{c}); r.DiscountCents != 0 || r.Coupons[0].Refusal != pricing.RefusalBelowMinimum {
		t.Fatalf("under 50: discount %d refusal %q", r.DiscountCents, r.Coupons[0].Refusal)
	}
}

func TestTierBoundaryExactlyMet(t *testing.T) {
	c := pricing.Coupon{Code: "TIER", Kind: pricing.KindTiered, MaxDiscountCents: 10000,
		Tiers: []pricing.Tier{{MinCents: 10000, OffCents: 1500}, {MinCents: 20000, OffCents: 4000}}}
	for _, tc := range []struct {
		sub, want int64
		refusal   string
	}{{9999, 0, pricing.RefusalBelowMinimum}, {10000, 1500, ""}, {19999, 1500, ""}, {20000, 4000, ""}, {50000, 4000, ""}} {
		cart := pricing.Cart{Lines: lines(tc.sub)}
		r := pricing.Price(&cart, []pricing.Coupon{c})
		if r.DiscountCents != tc.want || r.Coupons[0].Refusal != tc.refusal {
			t.Errorf("subtotal %d: discount %d refusal %q, want %d %q", tc.sub, r.DiscountCents, r.Coupons[0].Refusal, tc.want, tc.refusal)
		}
	}
}

func TestFixedPerItemAtMostEachUnitsPrice(t *testing.T) {
	cart := pricing.Cart{Lines: []pricing.Line{
		{ID: "1", SKU: "tee", Quantity: 2, UnitPriceCents: 1500},
		{ID: "2", SKU: "cap", Quantity: 1, UnitPriceCents: 600},
	}}
	c := pricing.Coupon{Code: "TEN", Kind: pricing.KindFixedPerItem, FaceValueCents: 1000, MaxDiscountCents: 100000}
	r := pricing.Price(&cart, []pricing.Coupon{c})
	if got, want := lineDiscounts(r), []int64{2000, 600}; !reflect.DeepEqual(got, want) {
		t.Fatalf("lines %v, want %v", got, want)
	}
}

func TestPriorityThenAmountsBeforePercents(t *testing.T) {
	cart := pricing.Cart{Lines: lines(10000)}
	pct := pricing.Coupon{Code: "P10", Kind: pricing.KindPercent, PercentOff: 10, MaxDiscountCents: 100000}
	fix := pricing.Coupon{Code: "F10", Kind: pricing.KindFixed, FaceValueCents: 1000}
	// Same priority: the fixed first (1,000), then 10% of 9,000.
	r := pricing.Price(&cart, []pricing.Coupon{pct, fix})
	if r.Coupons[0].DiscountCents != 900 || r.Coupons[1].DiscountCents != 1000 {
		t.Fatalf("default priority: %d %d", r.Coupons[0].DiscountCents, r.Coupons[1].DiscountCents)
	}
	// The percent's lower priority puts it first: 10% of 10,000, then 1,000.
	pct.Priority = 10
	fix.Priority = 100
	r = pricing.Price(&cart, []pricing.Coupon{pct, fix})
	if r.Coupons[0].DiscountCents != 1000 || r.Coupons[1].DiscountCents != 1000 {
		t.Fatalf("percent first: %d %d", r.Coupons[0].DiscountCents, r.Coupons[1].DiscountCents)
	}
	if r.Lines[0].Coupons[0].Code != "P10" || r.Lines[0].Coupons[1].Code != "F10" {
		t.Fatalf("line parts not in the order applied: %+v", r.Lines[0].Coupons)
	}
}

func TestCurrencyMismatchAndNotDiscountable(t *testing.T) {
	cart := pricing.Cart{Currency: "EUR", Lines: []pricing.Line{
		{ID: "gift", Quantity: 1, UnitPriceCents: 5000, NotDiscountable: true},
		{ID: "item", Quantity: 1, UnitPriceCents: 1000},
	}}
	usd := pricing.Coupon{Code: "USD", Currency: "USD", Kind: pricing.KindFixed, FaceValueCents: 500}
	eur := pricing.Coupon{Code: "EUR", Currency: "EUR", Kind: pricing.KindFixed, FaceValueCents: 5000}
	r := pricing.Price(&cart, []pricing.Coupon{usd, eur})
	if r.Coupons[0].Refusal != pricing.RefusalCurrency || r.Coupons[0].DiscountCents != 0 {
		t.Fatalf("USD coupon on a EUR cart: %+v", r.Coupons[0])
	}
	if got := lineDiscounts(r); !reflect.DeepEqual(got, []int64{0, 1000}) {
		t.Fatalf("lines %v, want the gift card untouched and the item at most its price", got)
	}
}

func TestReturnsInAnySplitGiveBackTheWholeDiscount(t *testing.T) {
	// 1,000 off 3 units of 999: 334, 333, 333. Returned as 1 then 2 units:
	// 334 then 666 of discount, 665 then 1,332 of refund.
	cart := pricing.Cart{Lines: []pricing.Line{{ID: "x", Quantity: 3, UnitPriceCents: 999}}}
	r := pricing.Price(&cart, []pricing.Coupon{{Code: "F", Kind: pricing.KindFixed, FaceValueCents: 1000}})
	parts := r.Coupons[0].Lines[0].Units
	if refund, disc := pricing.Return(999, parts, 0, 1); refund != 665 || disc != 334 {
		t.Fatalf("first return: refund %d discount %d", refund, disc)
	}
	if refund, disc := pricing.Return(999, parts, 1, 2); refund != 1332 || disc != 666 {
		t.Fatalf("second return: refund %d discount %d", refund, disc)
	}
}

func TestPriceAfterOnWhatEarlierCouponsLeft(t *testing.T) {
	// Three lines of 1,000 and shipping 500; a coupon already on the order
	// took 334 / 333 / 333 and 300 of the shipping. 10% more is 10% of the
	// 2,000 left, split by what is left (666 / 667 / 667): 66 / 67 / 67; free
	// shipping takes the 200 left of it.
	cart := pricing.Cart{Lines: lines(1000, 1000, 1000), ShippingCents: 500}
	taken := pricing.Taken{Lines: [][]pricing.UnitRun{
		{{First: 0, Count: 1, PerUnitCents: 334}}, {{First: 0, Count: 1, PerUnitCents: 333}}, {{First: 0, Count: 1, PerUnitCents: 333}},
	}, ShippingCents: 300}
	var p pricing.Pricer
	var r pricing.Result
	p.PriceAfter(&cart, taken, []pricing.Coupon{
		{Code: "TEN", Kind: pricing.KindPercent, PercentOff: 10, MaxDiscountCents: 100_000},
		{Code: "SHIP", Kind: pricing.KindFreeShipping, MaxDiscountCents: 1000},
	}, &r)
	if got, want := lineDiscounts(r), []int64{66, 67, 67}; !reflect.DeepEqual(got, want) {
		t.Fatalf("lines %v, want %v", got, want)
	}
	if r.Coupons[0].DiscountCents != 200 || r.Coupons[1].DiscountCents != 200 || r.ShippingDiscountCents != 200 ||
		r.DiscountCents != 400 || r.PayableCents != 3500-1300-400 {
		t.Fatalf("coupons %d and %d, shipping %d, discount %d, payable %d",
			r.Coupons[0].DiscountCents, r.Coupons[1].DiscountCents, r.ShippingDiscountCents, r.DiscountCents, r.PayableCents)
	}
	// Two coupons' runs on one unit add up: 600 + 400 taken leave nothing.
	cart = pricing.Cart{Lines: lines(1000)}
	taken = pricing.Taken{Lines: [][]pricing.UnitRun{{{First: 0, Count: 1, PerUnitCents: 600}, {First: 0, Count: 1, PerUnitCents: 400}}}}
	p.PriceAfter(&cart, taken, []pricing.Coupon{{Code: "MORE", Kind: pricing.KindFixed, FaceValueCents: 100}}, &r)
	if r.DiscountCents != 0 || r.PayableCents != 0 {
		t.Fatalf("discount %d payable %d, want 0 and 0", r.DiscountCents, r.PayableCents)
	}
	// What lies outside the line's units or over the shipping is no part of
	// them: two units of 1,000, 300 taken of the second (and of a third
	// unit the line does not have), 900 of a shipping of 500.
	cart = pricing.Cart{Lines: []pricing.Line{{ID: "a", Quantity: 2, UnitPriceCents: 1000}}, ShippingCents: 500}
	taken = pricing.Taken{Lines: [][]pricing.UnitRun{{{First: 1, Count: 2, PerUnitCents: 300}}}, ShippingCents: 900}
	p.PriceAfter(&cart, taken, []pricing.Coupon{
		{Code: "HALF", Kind: pricing.KindPercent, PercentOff: 50, MaxDiscountCents: 100_000},
		{Code: "SHIP", Kind: pricing.KindFreeShipping, MaxDiscountCents: 1000},
	}, &r)
	if got := r.Coupons[0].Lines; r.Coupons[0].DiscountCents != 850 || len(got) != 1 ||
		!reflect.DeepEqual(got[0].Units, []pricing.UnitRun{{First: 0, Count: 1, PerUnitCents: 500}, {First: 1, Count: 1, PerUnitCents: 350}}) {
		t.Fatalf("half of 1,000 and 700: %+v", r.Coupons[0])
	}
	if r.Coupons[1].DiscountCents != 0 || r.Coupons[1].Refusal != pricing.RefusalNoLines || r.PayableCents != 2500-300-500-850 {
		t.Fatalf("shipping %+v, payable %d", r.Coupons[1], r.PayableCents)
	}
}

// Worked example 14 of docs/pricing.md: quantity tiers, 5% off from 2
// units, 10% from 4, on the targeted units before any discount: 3 units of
// 1,000 take 5% (150); 4 take 10% (400); 1 is below the first tier.
func TestQuantityTiers(t *testing.T) {
	c := pricing.Coupon{Code: "QTY", Kind: pricing.KindTiered, MaxDiscountCents: 100_000,
		Tiers: []pricing.Tier{{MinQuantity: 2, PercentOff: 5}, {MinQuantity: 4, PercentOff: 10}}}
	for _, tc := range []struct{ qty, want int64 }{{1, 0}, {2, 100}, {3, 150}, {4, 400}, {7, 700}} {
		cart := pricing.Cart{Lines: []pricing.Line{{ID: "a", SKU: "a", Quantity: tc.qty, UnitPriceCents: 1000}}}
		r := pricing.Price(&cart, []pricing.Coupon{c})
		if r.DiscountCents != tc.want || (tc.want == 0) != (r.Coupons[0].Refusal == pricing.RefusalBelowMinimum) {
			t.Fatalf("%d units: %d off (%q), want %d", tc.qty, r.DiscountCents, r.Coupons[0].Refusal, tc.want)
		}
	}
}

// Worked example 11 of docs/pricing.md: 33.33% of 3,000 is 999.9, rounded
// down to 999, split over lines of 1,000 and 2,000 by what is left of them
// (333 and 666); over the second line's 2 units of 1,000, 333 each. 100%
// takes everything up to its cap.
func TestPercentInBasisPointsRoundsDownThenSplits(t *testing.T) {
	cart := pricing.Cart{Lines: []pricing.Line{
		{ID: "a", SKU: "a", Quantity: 1, UnitPriceCents: 1000},
		{ID: "b", SKU: "b", Quantity: 2, UnitPriceCents: 1000},
	}}
	r := pricing.Price(&cart, []pricing.Coupon{{Code: "THIRD", Kind: pricing.KindPercent, PercentOffBP: 3333, MaxDiscountCents: 100_000}})
	if got, want := lineDiscounts(r), []int64{333, 666}; r.DiscountCents != 999 || !reflect.DeepEqual(got, want) {
		t.Fatalf("33.33%%: %d split %v, want 999 split %v", r.DiscountCents, got, want)
	}
	if got, want := r.Coupons[0].Lines[1].Units, []pricing.UnitRun{{First: 0, Count: 2, PerUnitCents: 333}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("units %v, want %v", got, want)
	}
	all := pricing.Price(&cart, []pricing.Coupon{{Code: "ALL", Kind: pricing.KindPercent, PercentOffBP: 10_000, MaxDiscountCents: 100_000}})
	if all.DiscountCents != 3000 || all.PayableCents != 0 {
		t.Fatalf("100%%: %d off, %d to pay, want 3000 and 0", all.DiscountCents, all.PayableCents)
	}
	capped := pricing.Price(&cart, []pricing.Coupon{{Code: "ALL", Kind: pricing.KindPercent, PercentOffBP: 10_000, MaxDiscountCents: 2500}})
	if capped.DiscountCents != 2500 || capped.PayableCents != 500 {
		t.Fatalf("100%% capped at 2,500: %d off, %d to pay", capped.DiscountCents, capped.PayableCents)
	}
}

// Worked example 12 of docs/pricing.md: 20% off full-price items only. The
// shirt (3,000, compare-at 4,000) is marked down and skipped; the trousers
// (5,000, compare-at 5,000) and the socks (no compare-at) take 20%:
// 1,000 + 200. The minimum counts the lines the coupon targets only.
func TestFullPriceOnlySkipsMarkedDownLines(t *testing.T) {
	cart := pricing.Cart{Lines: []pricing.Line{
		{ID: "shirt", SKU: "shirt", Quantity: 1, UnitPriceCents: 3000, CompareAtPriceCents: 4000},
		{ID: "trousers", SKU: "trousers", Quantity: 1, UnitPriceCents: 5000, CompareAtPriceCents: 5000},
		{ID: "socks", SKU: "socks", Quantity: 2, UnitPriceCents: 500},
	}}
	c := pricing.Coupon{Code: "FULL20", Kind: pricing.KindPercent, PercentOff: 20, MaxDiscountCents: 100_000, FullPriceOnly: true}
	r := pricing.Price(&cart, []pricing.Coupon{c})
	if got, want := lineDiscounts(r), []int64{0, 1000, 200}; r.DiscountCents != 1200 || !reflect.DeepEqual(got, want) {
		t.Fatalf("full price only: %d split %v, want 1200 split %v", r.DiscountCents, got, want)
	}
	// Without the flag the shirt takes its 600 too.
	c.FullPriceOnly = false
	if r := pricing.Price(&cart, []pricing.Coupon{c}); r.DiscountCents != 1800 {
		t.Fatalf("every line: %d, want 1800", r.DiscountCents)
	}
	// A minimum of 6,500: the full-price lines make 6,000, below it.
	c.FullPriceOnly, c.MinOrderCents = true, 6500
	if r := pricing.Price(&cart, []pricing.Coupon{c}); r.DiscountCents != 0 || r.Coupons[0].Refusal != pricing.RefusalBelowMinimum {
		t.Fatalf("minimum on the full-price lines: %+v", r.Coupons[0])
	}
	// Only marked-down lines: nothing the coupon targets.
	only := pricing.Cart{Lines: cart.Lines[:1]}
	c.MinOrderCents = 0
	if r := pricing.Price(&only, []pricing.Coupon{c}); r.Coupons[0].Refusal != pricing.RefusalNoLines {
		t.Fatalf("a cart of marked-down lines: %+v", r.Coupons[0])
	}
}

// Worked example 13 of docs/pricing.md: unit selection. 100% off the
// cheapest item, once: of a jacket at 3,000, 2 shirts at 1,000 and socks at
// 500, the socks are free. Dearest first, once: the jacket. 20% off up to
// 2 units per line: 2 of the 3 shirts (400) and the jacket (600).
func TestUnitSelectionCheapestOnceAndPerLine(t *testing.T) {
	cart := pricing.Cart{Lines: []pricing.Line{
		{ID: "jacket", SKU: "jacket", Quantity: 1, UnitPriceCents: 3000},
		{ID: "shirts", SKU: "shirts", Quantity: 2, UnitPriceCents: 1000},
		{ID: "socks", SKU: "socks", Quantity: 1, UnitPriceCents: 500},
	}}
	once := pricing.Coupon{Code: "CHEAPEST", Kind: pricing.KindPercent, PercentOff: 100, MaxDiscountCents: 100_000,
		MaxUnitsPerOrder: 1, UnitOrder: pricing.UnitsCheapest}
	if got, want := lineDiscounts(pricing.Price(&cart, []pricing.Coupon{once})), []int64{0, 0, 500}; !reflect.DeepEqual(got, want) {
		t.Fatalf("cheapest once: %v, want %v", got, want)
	}
	once.UnitOrder = pricing.UnitsDearest
	if got, want := lineDiscounts(pricing.Price(&cart, []pricing.Coupon{once})), []int64{3000, 0, 0}; !reflect.DeepEqual(got, want) {
		t.Fatalf("dearest once: %v, want %v", got, want)
	}
	cart.Lines[1].Quantity = 3
	perLine := pricing.Coupon{Code: "TWO", Kind: pricing.KindPercent, PercentOff: 20, MaxDiscountCents: 100_000, MaxUnitsPerLine: 2}
	r := pricing.Price(&cart, []pricing.Coupon{perLine})
	if got, want := lineDiscounts(r), []int64{600, 400, 100}; !reflect.DeepEqual(got, want) {
		t.Fatalf("2 per line: %v, want %v", got, want)
	}
	// The shirts' first 2 units take 200 each; the third pays in full.
	if got, want := r.Coupons[0].Lines[1].Units, []pricing.UnitRun{{First: 0, Count: 2, PerUnitCents: 200}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("shirt units %v, want %v", got, want)
	}
	if refund, disc := pricing.Return(1000, r.Coupons[0].Lines[1].Units, 2, 1); refund != 1000 || disc != 0 {
		t.Fatalf("return of the third shirt: %d refund, %d discount", refund, disc)
	}
}
