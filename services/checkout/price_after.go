package checkout

import (
	"couponsvc/services/pricing"
)

// taken is what the coupons already on an order took of its cart: per
// line, their unit runs (the runs of several coupons may cover the same
// units: their parts add up), and their part of the shipping.
type taken struct {
	Lines         [][]pricing.UnitRun
	ShippingCents int64
}

// takenOf reads the stored rows of an order's live coupons as what they took.
func takenOf(cart *pricing.Cart, rows map[int64][]LineDiscountRow) (taken, error) {
	t := taken{Lines: make([][]pricing.UnitRun, len(cart.Lines))}
	for _, rs := range rows {
		for _, r := range rs {
			if r.LineNo == ShippingLineNo {
				t.ShippingCents += r.DiscountCents
				continue
			}
			if r.LineNo < 0 || r.LineNo >= len(cart.Lines) {
				continue
			}
			units, err := DecodeUnits(r.Units)
			if err != nil {
				return t, err
			}
			t.Lines[r.LineNo] = append(t.Lines[r.LineNo], units...)
		}
	}
	return t, nil
}

// priceAfter prices one coupon on what the coupons already on the order
// left of its cart (docs/checkout.md, "One amount per order"): its
// minimums are checked on the whole cart, as Price checks them; its
// discount is priced on each unit's price less what was taken of it.
//
// The cart it prices is the order's with each line cut into runs of units
// of equal price left; the coupon's shares on those runs are put back on
// the order's lines.
func priceAfter(p *pricing.Pricer, cart *pricing.Cart, tk taken, c pricing.Coupon) pricing.CouponResult {
	var alone pricing.Result
	p.Price(cart, []pricing.Coupon{c}, &alone)
	if alone.Coupons[0].Refusal != "" {
		return alone.Coupons[0]
	}
	type origin struct {
		line  int
		first int64
	}
	left := pricing.Cart{Currency: cart.Currency, ShippingCents: max(cart.ShippingCents-tk.ShippingCents, 0)}
	var from []origin
	for i, l := range cart.Lines {
		var first int64
		for first < l.Quantity {
			price := l.UnitPriceCents - pricing.UnitsDiscountCents(tk.Lines[i], first, 1)
			n := int64(1)
			for first+n < l.Quantity && l.UnitPriceCents-pricing.UnitsDiscountCents(tk.Lines[i], first+n, 1) == price {
				n++
			}
			sub := l
			sub.Quantity, sub.UnitPriceCents = n, max(price, 0)
			left.Lines = append(left.Lines, sub)
			from = append(from, origin{i, first})
			first += n
		}
	}
	c.MinOrderCents, c.MinQuantity = 0, 0
	var out pricing.Result
	p.Price(&left, []pricing.Coupon{c}, &out)
	r := out.Coupons[0]
	res := pricing.CouponResult{Code: r.Code, DiscountCents: r.DiscountCents, Refusal: r.Refusal, ShippingCents: r.ShippingCents}
	for _, ls := range r.Lines {
		o := from[ls.Line]
		if k := len(res.Lines); k == 0 || res.Lines[k-1].Line != o.line {
			res.Lines = append(res.Lines, pricing.LineShare{Line: o.line})
		}
		share := &res.Lines[len(res.Lines)-1]
		share.DiscountCents += ls.DiscountCents
		for _, u := range ls.Units {
			share.Units = append(share.Units, pricing.UnitRun{First: u.First + o.first, Count: u.Count, PerUnitCents: u.PerUnitCents})
		}
	}
	return res
}
