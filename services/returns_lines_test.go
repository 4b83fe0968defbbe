package services_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/pricing"
	"github.com/couponsvc/couponsvc/services/testenv"
)

// linedState is what a return by line changes, read back to compare.
type linedState struct {
	Returned      map[string]int64 // line_id → returned_quantity
	LineDiscounts map[string]int64 // "coupon/line_no" → returned_discount_cents
	UseLog        map[int64]int64  // coupon → live discount_cents
	ReturnedCents int64
	Returns       int64
}

func (f *holdFixture) linedState(order string) linedState {
	f.T.Helper()
	db := f.Backends.DB
	st := linedState{Returned: map[string]int64{}, LineDiscounts: map[string]int64{}, UseLog: map[int64]int64{}}
	var lines []struct {
		LineID           string
		ReturnedQuantity int64
	}
	if err := db.Raw(`SELECT line_id, returned_quantity FROM order_lines WHERE order_id = ?`, order).Scan(&lines).Error; err != nil {
		f.T.Fatal(err)
	}
	for _, l := range lines {
		st.Returned[l.LineID] = l.ReturnedQuantity
	}
	var ds []struct {
		CouponID              int64
		LineNo                int
		ReturnedDiscountCents int64
	}
	if err := db.Raw(`SELECT coupon_id, line_no, returned_discount_cents FROM order_line_discounts WHERE order_id = ?`, order).Scan(&ds).Error; err != nil {
		f.T.Fatal(err)
	}
	for _, d := range ds {
		st.LineDiscounts[fmt.Sprintf("%d/%d", d.CouponID, d.LineNo)] = d.ReturnedDiscountCents
	}
	var logs []models.UseLog
	if err := db.Where("order_id = ? AND undo_flag = ?", order, false).Find(&logs).Error; err != nil {
		f.T.Fatal(err)
	}
	for _, l := range logs {
		st.UseLog[l.CouponID] = l.DiscountCents
	}
	if err := db.Raw(`SELECT returned_cents FROM checkout_orders WHERE order_id = ?`, order).Scan(&st.ReturnedCents).Error; err != nil {
		f.T.Fatal(err)
	}
	if err := db.Raw(`SELECT COUNT(*) FROM order_returns WHERE order_id = ?`, order).Scan(&st.Returns).Error; err != nil {
		f.T.Fatal(err)
	}
	return st
}

func (f *holdFixture) returnLines(order, id string, lines ...checkout.ReturnLine) (*checkout.ReturnResult, error) {
	return f.Checkout.ReturnLines(f.Ctx, "pos", order, id, lines)
}

func rl(id string, n int64) checkout.ReturnLine { return checkout.ReturnLine{LineID: id, Quantity: n} }

func line(id string, qty, price int64) pricing.Line {
	return pricing.Line{ID: id, SKU: "sku-" + id, Quantity: qty, UnitPriceCents: price}
}

// The worked examples of docs/pricing.md, returned.
func TestReturnByLineWorkedExamples(t *testing.T) {
	t.Run("ThreeEqualLines", func(t *testing.T) {
		f := newHoldFixture(t, services.Config{})
		c := f.claim(f.tmpl("", 1_000, 0, 0), "u1")
		cart := pricing.Cart{Lines: []pricing.Line{line("a", 1, 1_000), line("b", 1, 1_000), line("c", 1, 1_000)}}
		pr := f.linedOrder("o3", cart, c)
		if got := []int64{pr.Lines[0].DiscountCents, pr.Lines[1].DiscountCents, pr.Lines[2].DiscountCents}; got[0] != 334 || got[1] != 333 || got[2] != 333 {
			t.Fatalf("allocation %v, want 334/333/333", got)
		}
		res, err := f.returnLines("o3", "r1", rl("b", 1))
		if err != nil {
			t.Fatal(err)
		}
		want := []models.ReturnedLine{{LineID: "b", Quantity: 1, RefundCents: 667, DiscountCents: 333}}
		if res.Duplicate || res.FullRefund || !res.Lined || len(res.Lines) != 1 || res.Lines[0] != want[0] ||
			res.RefundCents != 667 || res.DiscountReturnedCents != 333 || res.DiscountKeptCents != 667 || res.KeptAmountCents != 2_000 {
			t.Fatalf("return of line b: %+v", res)
		}
		st := f.linedState("o3")
		if st.Returned["b"] != 1 || st.Returned["a"] != 0 || st.UseLog[c.ID] != 667 || st.ReturnedCents != 1_000 ||
			st.LineDiscounts[fmt.Sprintf("%d/1", c.ID)] != 333 || st.LineDiscounts[fmt.Sprintf("%d/0", c.ID)] != 0 {
			t.Fatalf("state after the return: %+v", st)
		}
		if got := f.coupon(c.ID); got.Status != models.CouponUsed {
			t.Fatalf("coupon after a partial return: %s", got.Status)
		}
		f.checkInvariants()
	})
	t.Run("BuyTwoGetOneKeepTheFreeUnit", func(t *testing.T) {
		f := newHoldFixture(t, services.Config{})
		tp := f.tmpl("", 1_000, 0, 0)
		f.retemplate(tp, func(tp *models.Template) {
			tp.Kind, tp.FaceValueCents, tp.BuyQuantity, tp.GetQuantity, tp.GetPercent, tp.MaxDiscountCents = models.KindBuyXGetY, 0, 2, 1, 100, 10_000
		})
		c := f.claim(tp, "u1")
		// Units 30, 20, 10, 10 (in hundreds): the set 30+20+10 gives its 10.
		cart := pricing.Cart{Lines: []pricing.Line{line("a", 1, 3_000), line("b", 1, 2_000), line("c", 2, 1_000)}}
		pr := f.linedOrder("b2g1", cart, c)
		if pr.DiscountCents != 1_000 || pr.Lines[0].DiscountCents != 500 || pr.Lines[1].DiscountCents != 333 || pr.Lines[2].DiscountCents != 167 {
			t.Fatalf("allocation %+v", pr)
		}
		// The paid 30 of the set comes back; its free 10 stays with the
		// shopper: only what was paid for the 30 is refunded.
		res, err := f.returnLines("b2g1", "r1", rl("a", 1))
		if err != nil {
			t.Fatal(err)
		}
		if res.RefundCents != 2_500 || res.DiscountReturnedCents != 500 || res.Lines[0].RefundCents != 2_500 {
			t.Fatalf("return of the 30: %+v", res)
		}
		// The free unit is the first of line c: it pays back 1000 − 167.
		res, err = f.returnLines("b2g1", "r2", rl("c", 1))
		if err != nil {
			t.Fatal(err)
		}
		if res.RefundCents != 833 || res.DiscountReturnedCents != 167 {
			t.Fatalf("return of the set's 10: %+v", res)
		}
		res, err = f.returnLines("b2g1", "r3", rl("c", 1))
		if err != nil {
			t.Fatal(err)
		}
		if res.RefundCents != 1_000 || res.DiscountReturnedCents != 0 || res.FullRefund {
			t.Fatalf("return of the 10 in no set: %+v", res)
		}
		if st := f.linedState("b2g1"); st.UseLog[c.ID] != 333 || st.ReturnedCents != 5_000 {
			t.Fatalf("state %+v", st)
		}
	})
}

// Returning every unit, in random splits, gives back exactly the whole
// discount (the shipping's with the completing return); the coupons are
// refunded by their templates' policy at that return and not before.
func TestReturnByLineAllUnitsInRandomSplits(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(seed, 7))
			f := newHoldFixture(t, services.Config{})
			fixed := f.tmpl(models.StackingCombinable, 1_000+int64(rnd.IntN(2_000)), 0, 0)
			pct := f.Template(models.Template{CampaignID: f.campaign.ID}, func(tp *models.Template) {
				tp.Stacking, tp.TotalStock, tp.PerUserLimit = models.StackingCombinable, 10, 10
				tp.Kind, tp.PercentOff, tp.MaxDiscountCents, tp.FaceValueCents = models.KindPercent, 5+int64(rnd.IntN(30)), 50_000, 0
				tp.RefundPolicy = models.RefundRecycle
			})
			ship := f.Template(models.Template{CampaignID: f.campaign.ID}, func(tp *models.Template) {
				tp.Stacking, tp.TotalStock, tp.PerUserLimit, tp.FaceValueCents = models.StackingCombinable, 10, 10, 300
				tp.AppliesTo = pricing.AppliesToShipping
			})
			cs := []*models.Coupon{f.claim(fixed, "u1"), f.claim(pct, "u1"), f.claim(ship, "u1")}
			var cart pricing.Cart
			cart.ShippingCents = 499
			units := map[string]int64{}
			for i := range 2 + rnd.IntN(4) {
				id := fmt.Sprintf("l%d", i)
				q := 1 + int64(rnd.IntN(7))
				cart.Lines = append(cart.Lines, line(id, q, 100+int64(rnd.IntN(5_000))))
				units[id] = q
			}
			pr := f.linedOrder("split", cart, cs...)
			if pr.ShippingDiscountCents != 300 || pr.DiscountCents <= 300 {
				t.Fatalf("priced %+v", pr)
			}
			var discount, refund, step int64
			var last *checkout.ReturnResult
			for len(units) > 0 {
				var ask []checkout.ReturnLine
				for _, l := range cart.Lines {
					if left := units[l.ID]; left > 0 && rnd.IntN(2) == 0 {
						n := 1 + int64(rnd.IntN(int(left)))
						ask = append(ask, rl(l.ID, n))
						if units[l.ID] -= n; units[l.ID] == 0 {
							delete(units, l.ID)
						}
					}
				}
				if len(ask) == 0 {
					continue
				}
				if last != nil {
					for _, c := range cs {
						if got := f.coupon(c.ID); got.Status != models.CouponUsed {
							t.Fatalf("coupon %d is %s before the order is returned", c.ID, got.Status)
						}
					}
				}
				step++
				res, err := f.returnLines("split", fmt.Sprintf("r%d", step), ask...)
				if err != nil {
					t.Fatal(err)
				}
				if res.FullRefund != (len(units) == 0) {
					t.Fatalf("step %d: full refund %t with %v left", step, res.FullRefund, units)
				}
				discount += res.DiscountReturnedCents
				refund += res.RefundCents
				last = res
			}
			if discount != pr.DiscountCents || last.ShippingDiscountReturnedCents != 300 || refund != cart.SubtotalCents()-(pr.DiscountCents-300) {
				t.Fatalf("returned discount %d (shipping %d), refund %d; want %d, 300, %d", discount, last.ShippingDiscountReturnedCents,
					refund, pr.DiscountCents, cart.SubtotalCents()-(pr.DiscountCents-300))
			}
			if len(last.Refunds) != 3 {
				t.Fatalf("the completing return refunded %d coupons", len(last.Refunds))
			}
			for i, c := range cs {
				want := models.CouponIssued
				if i == 1 {
					want = models.CouponRevoked // recycle
				}
				if got := f.coupon(c.ID); got.Status != want {
					t.Fatalf("coupon %d is %s after the order was returned, want %s", c.ID, got.Status, want)
				}
			}
			var left int64
			if err := f.Backends.DB.Raw(`SELECT COALESCE(SUM(discount_cents - returned_discount_cents), 0) FROM order_line_discounts WHERE order_id = ?`,
				"split").Scan(&left).Error; err != nil {
				t.Fatal(err)
			}
			var o struct{ AmountCents, ReturnedCents int64 }
			f.Backends.DB.Raw(`SELECT amount_cents, returned_cents FROM checkout_orders WHERE order_id = ?`, "split").Scan(&o)
			if left != 0 || o.ReturnedCents != o.AmountCents {
				t.Fatalf("discount left on the lines %d; returned %d of %d", left, o.ReturnedCents, o.AmountCents)
			}
			if n := f.audits("order.return"); n != step {
				t.Fatalf("%d return audits, want %d", n, step)
			}
			_, err := f.returnLines("split", "after", rl(cart.Lines[0].ID, 1))
			wantCode(t, err, models.CodeReturnExceedsOrder)
			f.checkInvariants()
		})
	}
}

// A return over a line's units is refused and changes nothing, also for
// the lines of the same return that fit.
func TestReturnByLineOverReturn(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	c := f.claim(f.tmpl("", 900, 0, 0), "u1")
	f.linedOrder("over", pricing.Cart{Lines: []pricing.Line{line("a", 3, 1_000), line("b", 2, 500)}}, c)
	if _, err := f.returnLines("over", "r1", rl("a", 2)); err != nil {
		t.Fatal(err)
	}
	before := f.linedState("over")
	_, err := f.returnLines("over", "r2", rl("b", 1), rl("a", 2))
	e := wantCode(t, err, models.CodeReturnExceedsOrder)
	if e.Field != "lines[1].quantity" {
		t.Fatalf("field %q", e.Field)
	}
	_, err = f.returnLines("over", "r3", rl("b", 3))
	wantCode(t, err, models.CodeReturnExceedsOrder)
	after := f.linedState("over")
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("a refused return changed the order: %+v → %+v", before, after)
	}
	if n := f.audits("order.return"); n != 1 {
		t.Fatalf("%d return audits", n)
	}
}

// A return_id names one return: the same lines again answer duplicate with
// the first answer, other lines are refused; bad requests name the field.
func TestReturnByLineIdempotencyAndFields(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	c := f.claim(f.tmpl("", 1_000, 0, 0), "u1")
	f.linedOrder("idem", pricing.Cart{Lines: []pricing.Line{line("a", 2, 1_000), line("b", 1, 1_000)}}, c)
	first, err := f.returnLines("idem", "r1", rl("a", 1), rl("b", 1))
	if err != nil {
		t.Fatal(err)
	}
	again, err := f.returnLines("idem", "r1", rl("b", 1), rl("a", 1))
	if err != nil || !again.Duplicate || fmt.Sprint(again.Lines) != fmt.Sprint(first.Lines) || again.RefundCents != first.RefundCents ||
		again.DiscountReturnedCents != first.DiscountReturnedCents || again.KeptAmountCents != first.KeptAmountCents {
		t.Fatalf("replay %+v %v, first %+v", again, err, first)
	}
	e := wantCode(t, errOf(f.returnLines("idem", "r1", rl("a", 2))), models.CodeIdempotencyMismatch)
	if e.Field != "lines" {
		t.Fatalf("field %q", e.Field)
	}
	st := f.linedState("idem")
	if st.Returns != 1 || st.Returned["a"] != 1 || st.Returned["b"] != 1 {
		t.Fatalf("state %+v", st)
	}
	for _, tc := range []struct {
		name  string
		lines []checkout.ReturnLine
		field string
	}{
		{"none", nil, "lines"},
		{"unknown line", []checkout.ReturnLine{rl("a", 1), rl("zz", 1)}, "lines[1].line_id"},
		{"line twice", []checkout.ReturnLine{rl("a", 1), rl("a", 1)}, "lines[1].line_id"},
		{"no units", []checkout.ReturnLine{rl("a", 0)}, "lines[0].quantity"},
		{"too many units", []checkout.ReturnLine{rl("a", 10_001)}, "lines[0].quantity"},
	} {
		e := wantCode(t, errOf(f.returnLines("idem", "r2", tc.lines...)), models.CodeInvalidRequest)
		if e.Field != tc.field {
			t.Fatalf("%s: field %q, want %q", tc.name, e.Field, tc.field)
		}
	}
	// An amount on a lined order, lines on an order of an amount.
	e = wantCode(t, errOf(f.Checkout.ReturnPart(f.Ctx, "pos", "idem", "r9", 100)), models.CodeInvalidRequest)
	if e.Field != "returned_amount_cents" {
		t.Fatalf("field %q", e.Field)
	}
	c2 := f.claim(f.tmpl("", 500, 0, 0), "u2")
	if _, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: c2.Code, OrderID: "amount", OrderAmountCents: 3_000}); err != nil {
		t.Fatal(err)
	}
	e = wantCode(t, errOf(f.returnLines("amount", "r1", rl("order", 1))), models.CodeInvalidRequest)
	if e.Field != "lines" {
		t.Fatalf("field %q", e.Field)
	}
	wantCode(t, errOf(f.returnLines("nobody", "r1", rl("a", 1))), models.CodeNotRedeemed)
}

func errOf[T any](_ T, err error) error { return err }

// Concurrent single-unit returns of one line: exactly as many succeed as
// the line has units; the money and the budget add up to the unit.
func TestReturnByLineRace(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	c := f.claim(f.tmpl("", 2_000, 0, 0), "u1")
	pr := f.linedOrder("race", pricing.Cart{Lines: []pricing.Line{line("t", 30, 999), line("u", 1, 5_000)}}, c)
	var mu sync.Mutex
	counts := map[string]int{}
	var refund, discount int64
	race(50, func(i int) {
		res, err := f.returnLines("race", fmt.Sprintf("r%d", i), rl("t", 1))
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			counts["ok"]++
			refund += res.RefundCents
			discount += res.DiscountReturnedCents
		case models.IsCode(err, models.CodeReturnExceedsOrder):
			counts["exceeds"]++
		default:
			t.Errorf("%d: %v", i, err)
		}
	})
	t.Logf("%s: %v", testenv.BackendName(), counts)
	lineDiscount := pr.Lines[0].DiscountCents
	if counts["ok"] != 30 || counts["exceeds"] != 20 || discount != lineDiscount || refund != 30*999-lineDiscount {
		t.Fatalf("%v: refund %d discount %d, want %d and %d", counts, refund, discount, 30*999-lineDiscount, lineDiscount)
	}
	st := f.linedState("race")
	if st.Returned["t"] != 30 || st.UseLog[c.ID] != pr.DiscountCents-lineDiscount || st.ReturnedCents != 30*999 || st.Returns != 30 {
		t.Fatalf("state %+v", st)
	}
	var evs []models.Event
	if err := f.Backends.DB.Where("type = ?", models.EventOrderReturned).Find(&evs).Error; err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, e := range evs {
		var d models.OrderReturnEvent
		if err := json.Unmarshal(e.Data, &d); err != nil || len(d.Lines) != 1 || d.Lines[0].LineID != "t" {
			t.Fatalf("event %s: %v", e.Data, err)
		}
		sum += d.Lines[0].DiscountCents
	}
	if len(evs) != 30 || sum != lineDiscount {
		t.Fatalf("%d events, discount %d", len(evs), sum)
	}
}
