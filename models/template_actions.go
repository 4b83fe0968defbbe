package models

import (
	"fmt"
	"slices"
)

// MaxActions is the most further actions a template carries (its own kind
// fields being its first action).
const MaxActions = 4

// TemplateAction is one further action of a template ("20% off + free
// shipping" on one code): a kind with its own target, kind fields, cap and
// unit bounds, checked as a template's are. The template's own kind fields
// are its first action; its minimums, priority, currency and stacking are
// the whole template's (docs/pricing.md, "Several actions").
type TemplateAction struct {
	Kind             string         `json:"kind" schema:"template_kind"`
	AppliesTo        string         `json:"applies_to" schema:"applies_to"`
	Target           TemplateTarget `json:"target"`
	FaceValueCents   int64          `json:"face_value_cents"`
	PercentOff       int64          `json:"percent_off"`
	PercentOffBP     int64          `json:"percent_off_bp"`
	MaxDiscountCents int64          `json:"max_discount_cents"`
	BuyQuantity      int64          `json:"buy_quantity"`
	GetQuantity      int64          `json:"get_quantity"`
	GetPercent       int64          `json:"get_percent"`
	GetPercentBP     int64          `json:"get_percent_bp"`
	MaxApplications  int64          `json:"max_applications"`
	Tiers            []Tier         `json:"tiers,omitempty"`
	FullPriceOnly    bool           `json:"full_price_only"`
	MaxUnitsPerLine  int64          `json:"max_units_per_line"`
	MaxUnitsPerOrder int64          `json:"max_units_per_order"`
	UnitOrder        string         `json:"unit_order,omitempty"`
}

// ValueCents is what the action adds to its template's budget value: its
// face value (fixed) or its cap (every other kind).
func (a *TemplateAction) ValueCents() int64 {
	if a.Kind == KindFixed {
		return a.FaceValueCents
	}
	return a.MaxDiscountCents
}

// AsTemplate is the action as a template of its fields alone: so that it
// is checked by the template's own rules, or to start a template whose own
// kind fields it gives.
func (a *TemplateAction) AsTemplate() Template {
	return Template{Kind: a.Kind, AppliesTo: a.AppliesTo, Target: a.Target, FaceValueCents: a.FaceValueCents,
		PercentOff: a.PercentOff, PercentOffBP: a.PercentOffBP, MaxDiscountCents: a.MaxDiscountCents,
		BuyQuantity: a.BuyQuantity, GetQuantity: a.GetQuantity, GetPercent: a.GetPercent, GetPercentBP: a.GetPercentBP,
		MaxApplications: a.MaxApplications, Tiers: a.Tiers, FullPriceOnly: a.FullPriceOnly,
		MaxUnitsPerLine: a.MaxUnitsPerLine, MaxUnitsPerOrder: a.MaxUnitsPerOrder, UnitOrder: a.UnitOrder}
}

// Action is the template's k-th action (0: its own kind fields, then
// Actions in order), as a TemplateAction.
func (t *Template) Action(k int) TemplateAction {
	if k > 0 {
		return t.Actions[k-1]
	}
	return TemplateAction{Kind: t.Kind, AppliesTo: t.AppliesTo, Target: t.Target, FaceValueCents: t.FaceValueCents,
		PercentOff: t.PercentOff, PercentOffBP: t.PercentOffBP, MaxDiscountCents: t.MaxDiscountCents,
		BuyQuantity: t.BuyQuantity, GetQuantity: t.GetQuantity, GetPercent: t.GetPercent, GetPercentBP: t.GetPercentBP,
		MaxApplications: t.MaxApplications, Tiers: t.Tiers, FullPriceOnly: t.FullPriceOnly,
		MaxUnitsPerLine: t.MaxUnitsPerLine, MaxUnitsPerOrder: t.MaxUnitsPerOrder, UnitOrder: t.UnitOrder}
}

// validateActions checks each further action by the rules of a template's
// kind fields, target and unit bounds, naming the field at fault with its
// place (actions[1].percent_off_bp), and leaves each in the form Validate
// leaves a template's (defaults set, percents in both forms, target lists
// sorted).
func (t *Template) validateActions(errs *FieldErrors) {
	if len(t.Actions) > MaxActions {
		errs.Add(Invalid("actions", "must hold at most %d actions (the template's own kind is its first)", MaxActions))
		return
	}
	if len(t.Actions) == 0 {
		t.Actions = nil // stored and answered as absent
		return
	}
	for i := range t.Actions {
		a := &t.Actions[i]
		at := a.AsTemplate()
		var own FieldErrors
		at.validateActionFields(&own)
		for _, fe := range own {
			errs.Add(Invalid(fmt.Sprintf("actions[%d].%s", i, fe.Field), "%s", fe.Message))
		}
		a.AppliesTo, a.Target, a.UnitOrder = at.AppliesTo, at.Target, at.UnitOrder
		a.PercentOff, a.PercentOffBP, a.GetPercent, a.GetPercentBP, a.Tiers = at.PercentOff, at.PercentOffBP, at.GetPercent, at.GetPercentBP, at.Tiers
	}
}

// validateActionFields checks what an action carries of a template: its
// kind and that kind's fields, applies_to and target, unit bounds.
func (t *Template) validateActionFields(errs *FieldErrors) {
	if !slices.Contains(TemplateKinds, t.Kind) {
		errs.Add(Invalid("kind", "must be %s", quoted(TemplateKinds)))
	} else {
		t.validateKindFields(errs)
	}
	t.validateTarget(errs)
	t.validateUnits(errs)
}
