package models

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds of a template's pricing fields (docs/pricing.md, "Template fields").
const (
	MaxTargetEntries   = 1000
	MaxTargetEntryRune = 64
	MaxTiers           = 20
	MaxSetQuantity     = 1000      // buy_quantity, get_quantity
	MaxApplicationsCap = 1_000_000 // max_applications
	MaxMinQuantity     = 1_000_000
	MaxPriority        = 1000
	MaxUnitsBound      = 1_000_000 // max_units_per_line, max_units_per_order
	MaxPercent         = 100       // percent_off, get_percent, a tier's percent_off
	MaxBasisPoints     = 10_000    // their _bp fields: 100.00%
	// DefaultPriority is the priority of a template created without one.
	DefaultPriority = 100
)

// TemplateKinds are the kinds of template, in the order messages list them.
var TemplateKinds = []string{KindFixed, KindPercent, KindFixedPerItem, KindBuyXGetY, KindTiered, KindFreeShipping}

// AppliesToValues are the values of applies_to.
var AppliesToValues = []string{AppliesToOrder, AppliesToItems, AppliesToShipping}

// kindsWith lists, for each field that only some kinds take, those kinds.
var kindsWith = map[string][]string{
	"face_value_cents":   {KindFixed, KindFixedPerItem},
	"percent_off":        {KindPercent},
	"percent_off_bp":     {KindPercent},
	"max_discount_cents": {KindPercent, KindFixedPerItem, KindBuyXGetY, KindTiered, KindFreeShipping},
	"buy_quantity":       {KindBuyXGetY},
	"get_quantity":       {KindBuyXGetY},
	"get_percent":        {KindBuyXGetY},
	"get_percent_bp":     {KindBuyXGetY},
	"max_applications":   {KindBuyXGetY},
	"tiers":              {KindTiered},
}

// quoted writes values as "a", "b" or "c".
func quoted(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = fmt.Sprintf("%q", v)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// validatePricing checks kind, its fields, applies_to, target, min_quantity,
// priority, currency and condition (docs/pricing.md, "Template fields").
func (t *Template) validatePricing(errs *FieldErrors) {
	if !slices.Contains(TemplateKinds, t.Kind) {
		errs.Add(Invalid("kind", "must be %s", quoted(TemplateKinds)))
	} else {
		t.validateKindFields(errs)
	}
	if t.MinQuantity < 0 || t.MinQuantity > MaxMinQuantity {
		errs.Add(Invalid("min_quantity", "must be between 0 and %d", MaxMinQuantity))
	}
	if t.Priority < 0 || t.Priority > MaxPriority {
		errs.Add(Invalid("priority", "must be between 0 (first) and %d", MaxPriority))
	}
	if t.Currency != "" {
		errs.Add(ValidateCurrency("currency", t.Currency))
	}
	t.validateTarget(errs)
	t.validateUnits(errs)
	t.validateActions(errs)
	t.validateCondition(errs)
}

// validateUnits checks the unit bounds and unit_order (docs/pricing.md,
// "Unit selection"): 0..MaxUnitsBound each, not for buy_x_get_y (its sets
// choose their units) nor on the shipping; unit_order cheapest (the
// default) or dearest, only with a bound.
func (t *Template) validateUnits(errs *FieldErrors) {
	bounded := false
	for _, f := range []struct {
		name string
		v    int64
	}{{"max_units_per_line", t.MaxUnitsPerLine}, {"max_units_per_order", t.MaxUnitsPerOrder}} {
		switch {
		case f.v < 0 || f.v > MaxUnitsBound:
			errs.Add(Invalid(f.name, "must be between 0 (no bound) and %d", MaxUnitsBound))
		case f.v > 0 && (t.Kind == KindBuyXGetY || t.Kind == KindFreeShipping || t.AppliesTo == AppliesToShipping):
			errs.Add(Invalid(f.name, "is for coupons on the order or on items, but buy_x_get_y (its sets choose its units)"))
		case f.v > 0:
			bounded = true
		}
	}
	switch {
	case t.UnitOrder == "" && bounded:
		t.UnitOrder = UnitsCheapest
	case t.UnitOrder == "":
	case t.UnitOrder != UnitsCheapest && t.UnitOrder != UnitsDearest:
		errs.Add(Invalid("unit_order", "must be %q or %q", UnitsCheapest, UnitsDearest))
	case !bounded:
		errs.Add(Invalid("unit_order", "is only with max_units_per_line or max_units_per_order"))
	}
}

// validateKindFields checks the fields of t's (known) kind, and that the
// fields of the other kinds are left zero.
func (t *Template) validateKindFields(errs *FieldErrors) {
	set := map[string]bool{
		"face_value_cents": t.FaceValueCents != 0, "percent_off": t.PercentOff != 0,
		"percent_off_bp":     t.PercentOffBP != 0,
		"max_discount_cents": t.MaxDiscountCents != 0, "buy_quantity": t.BuyQuantity != 0,
		"get_quantity": t.GetQuantity != 0, "get_percent": t.GetPercent != 0, "get_percent_bp": t.GetPercentBP != 0,
		"max_applications": t.MaxApplications != 0, "tiers": len(t.Tiers) != 0,
	}
	for _, field := range []string{"face_value_cents", "percent_off", "percent_off_bp", "max_discount_cents", "buy_quantity",
		"get_quantity", "get_percent", "get_percent_bp", "max_applications", "tiers"} {
		if kinds := kindsWith[field]; set[field] && !slices.Contains(kinds, t.Kind) {
			errs.Add(Invalid(field, "is only for %s coupons", strings.Replace(quoted(kinds), `" or "`, `" and "`, 1)))
		}
	}
	money := func(field string, v int64) {
		if v < 1 || v > MaxMoneyCents {
			errs.Add(Invalid(field, "must be between 1 and %d for a %s coupon", int64(MaxMoneyCents), t.Kind))
		}
	}
	between := func(field string, v, lo, hi int64) {
		if v < lo || v > hi {
			errs.Add(Invalid(field, "must be between %d and %d for a %s coupon", lo, hi, t.Kind))
		}
	}
	switch t.Kind {
	case KindFixed:
		money("face_value_cents", t.FaceValueCents)
	case KindPercent:
		errs.Add(checkPercent("percent_off", &t.PercentOff, &t.PercentOffBP, " for a percent coupon"))
	case KindFixedPerItem:
		money("face_value_cents", t.FaceValueCents)
	case KindBuyXGetY:
		between("buy_quantity", t.BuyQuantity, 1, MaxSetQuantity)
		between("get_quantity", t.GetQuantity, 1, MaxSetQuantity)
		errs.Add(checkPercent("get_percent", &t.GetPercent, &t.GetPercentBP, " for a buy_x_get_y coupon"))
		if t.MaxApplications < 0 || t.MaxApplications > MaxApplicationsCap {
			errs.Add(Invalid("max_applications", "must be between 0 (no limit but max_discount_cents) and %d", MaxApplicationsCap))
		}
	case KindTiered:
		t.validateTiers(errs)
	}
	if t.Kind != KindFixed {
		// Every kind but fixed has a cap: it is the coupon's budget value.
		money("max_discount_cents", t.MaxDiscountCents)
	}
}

// checkPercent checks a percent given in whole percents (field, 1..100) or
// in basis points (field_bp, 1..10,000), one of them (both only when they
// agree, as Validate leaves them), naming the field at fault; what is
// needs says what it is for. Valid, *bp is set (from *whole when only that
// was given) and *whole is its whole percent, or 0 when it has decimals
// (docs/pricing.md, "Percents").
func checkPercent(field string, whole, bp *int64, what string) error {
	fieldBP := field + "_bp"
	switch {
	case *whole != 0 && *bp != 0 && *whole*100 != *bp:
		return Invalid(fieldBP, "give %s (whole percents) or %s (basis points), not both", field, fieldBP)
	case *whole == 0 && *bp == 0:
		return Invalid(field, "give %s (1 to %d) or %s (1 to %d basis points)%s", field, MaxPercent, fieldBP, MaxBasisPoints, what)
	case *bp == 0 && (*whole < 1 || *whole > MaxPercent):
		return Invalid(field, "must be between 1 and %d%s", MaxPercent, what)
	case *bp != 0 && (*bp < 1 || *bp > MaxBasisPoints):
		return Invalid(fieldBP, "must be between 1 and %d (basis points: 100 is 1%%)%s", MaxBasisPoints, what)
	}
	*bp = basisPoints(*whole, *bp)
	*whole = 0
	if *bp%100 == 0 {
		*whole = *bp / 100
	}
	return nil
}

// validateTiers checks the tiers of a tiered template: 1..MaxTiers, in
// strictly increasing min_cents, each with one of off_cents and
// percent_off, all of one sort, what they take off never decreasing.
func (t *Template) validateTiers(errs *FieldErrors) {
	if len(t.Tiers) < 1 || len(t.Tiers) > MaxTiers {
		errs.Add(Invalid("tiers", "must hold 1 to %d tiers for a tiered coupon", MaxTiers))
		return
	}
	percents := t.Tiers[0].BasisPoints() != 0 && t.Tiers[0].OffCents == 0
	quantities := t.Tiers[0].MinQuantity != 0
	for i := range t.Tiers {
		tier := &t.Tiers[i]
		name := func(field string) string { return fmt.Sprintf("tiers[%d].%s", i, field) }
		switch {
		case tier.MinQuantity != 0 && tier.MinCents != 0:
			errs.Add(Invalid(name("min_quantity"), "give min_cents or min_quantity, not both"))
		case quantities && tier.MinQuantity == 0:
			errs.Add(Invalid(name("min_quantity"), "every tier takes a min_quantity, as the first does"))
		case !quantities && tier.MinQuantity != 0:
			errs.Add(Invalid(name("min_quantity"), "every tier takes a min_cents, as the first does"))
		case quantities && (tier.MinQuantity < 1 || tier.MinQuantity > MaxMinQuantity):
			errs.Add(Invalid(name("min_quantity"), "must be between 1 and %d", MaxMinQuantity))
		case quantities && i > 0 && tier.MinQuantity <= t.Tiers[i-1].MinQuantity:
			errs.Add(Invalid(name("min_quantity"), "must be more than the tier before's (%d): tiers rise", t.Tiers[i-1].MinQuantity))
		case quantities:
		case tier.MinCents < 1 || tier.MinCents > MaxMoneyCents:
			errs.Add(Invalid(name("min_cents"), "must be between 1 and %d", int64(MaxMoneyCents)))
		case i > 0 && tier.MinCents <= t.Tiers[i-1].MinCents:
			errs.Add(Invalid(name("min_cents"), "must be more than the tier before's (%d): tiers rise", t.Tiers[i-1].MinCents))
		}
		pct := tier.BasisPoints() != 0
		switch {
		case tier.OffCents != 0 && pct:
			errs.Add(Invalid(name("percent_off"), "give off_cents or percent_off, not both"))
		case tier.OffCents == 0 && !pct:
			errs.Add(Invalid(name("off_cents"), "give off_cents (an amount) or percent_off"))
		case percents && tier.OffCents != 0:
			errs.Add(Invalid(name("off_cents"), "every tier takes a percent_off, as the first does"))
		case !percents && pct:
			errs.Add(Invalid(name("percent_off"), "every tier takes off_cents, as the first does"))
		case tier.OffCents < 0 || tier.OffCents > MaxMoneyCents:
			errs.Add(Invalid(name("off_cents"), "must be between 1 and %d", int64(MaxMoneyCents)))
		case pct && checkPercent(name("percent_off"), &tier.PercentOff, &tier.PercentOffBP, "") != nil:
			errs.Add(checkPercent(name("percent_off"), &tier.PercentOff, &tier.PercentOffBP, ""))
		case i > 0 && tier.OffCents < t.Tiers[i-1].OffCents:
			errs.Add(Invalid(name("off_cents"), "must be at least the tier before's (%d): a higher tier never takes less", t.Tiers[i-1].OffCents))
		case i > 0 && tier.BasisPoints() < t.Tiers[i-1].BasisPoints():
			errs.Add(Invalid(name("percent_off"), "must be at least the tier before's (%s): a higher tier never takes less", PercentWords(t.Tiers[i-1].BasisPoints())))
		}
	}
}

// targetLists are the lists of a target with their field names.
func (tt *TemplateTarget) lists() []struct {
	name string
	list *[]string
} {
	return []struct {
		name string
		list *[]string
	}{
		{"skus", &tt.SKUs}, {"product_ids", &tt.ProductIDs}, {"category_ids", &tt.CategoryIDs},
		{"exclude_skus", &tt.ExcludeSKUs}, {"exclude_product_ids", &tt.ExcludeProductIDs},
		{"exclude_category_ids", &tt.ExcludeCategoryIDs},
	}
}

// Empty reports whether the target has no entry in any list.
func (tt *TemplateTarget) Empty() bool {
	for _, l := range tt.lists() {
		if len(*l.list) > 0 {
			return false
		}
	}
	return true
}

// validateTarget checks applies_to (setting its default) and target, whose
// lists it sorts without repeats: the pricing package searches them by
// halves and shares them with the cached template (core.PricingCoupon).
func (t *Template) validateTarget(errs *FieldErrors) {
	switch {
	case t.AppliesTo == "" && t.Kind == KindFreeShipping:
		t.AppliesTo = AppliesToShipping
	case t.AppliesTo == "":
		t.AppliesTo = AppliesToOrder
	case !slices.Contains(AppliesToValues, t.AppliesTo):
		errs.Add(Invalid("applies_to", "must be %s", quoted(AppliesToValues)))
	case t.Kind == KindFreeShipping && t.AppliesTo != AppliesToShipping:
		errs.Add(Invalid("applies_to", `must be "shipping" for a free_shipping coupon`))
	case t.AppliesTo == AppliesToShipping && !slices.Contains([]string{KindFixed, KindPercent, KindTiered, KindFreeShipping}, t.Kind):
		errs.Add(Invalid("applies_to", `"shipping" is only for fixed, percent, tiered and free_shipping coupons`))
	}
	if t.FullPriceOnly && t.AppliesTo == AppliesToShipping {
		errs.Add(Invalid("full_price_only", `is for coupons on the order or on items, not on the shipping`))
	}
	if t.AppliesTo != AppliesToItems && !t.Target.Empty() {
		errs.Add(Invalid("target", `is only for applies_to "items"`))
	}
	t.Target.validateLists("target.", errs)
}

// validateLists checks each list of a target (a template's or its
// condition's, whose field names start with prefix) and sorts it without
// repeats; an empty list becomes nil.
func (tt *TemplateTarget) validateLists(prefix string, errs *FieldErrors) {
	for _, l := range tt.lists() {
		field := prefix + l.name
		if len(*l.list) > MaxTargetEntries {
			errs.Add(Invalid(field, "must hold at most %d entries", MaxTargetEntries))
			continue
		}
		for i, v := range *l.list {
			if !targetEntry(v) {
				errs.Add(Invalid(field, "entry %d must be 1 to %d printable characters", i+1, MaxTargetEntryRune))
				break
			}
		}
		if len(*l.list) == 0 {
			*l.list = nil // stored and answered as absent
			continue
		}
		slices.Sort(*l.list)
		*l.list = slices.Compact(*l.list)
	}
}

// targetEntry reports whether v is 1 to MaxTargetEntryRune printable
// characters (a space inside, none at either end).
func targetEntry(v string) bool {
	n := utf8.RuneCountInString(v)
	if !utf8.ValidString(v) || n < 1 || n > MaxTargetEntryRune || strings.TrimSpace(v) != v {
		return false
	}
	for _, r := range v {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}
