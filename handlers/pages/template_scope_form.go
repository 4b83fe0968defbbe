package pages

import (
	"github.com/gin-gonic/gin"

	"github.com/couponsvc/couponsvc/models"
)

// scopeForm is what one action of the template form applies to, as
// typed: the order, some items (its six target lists) or the shipping,
// whether it skips marked-down items, and its unit bounds
// (docs/pricing.md, "What a coupon targets" and "Unit selection"). The
// template's own kind and each further action carry one, their fields
// named with Prefix ("" for the template's own, "act1_" for the second
// further action).
type scopeForm struct {
	Prefix    string
	AppliesTo string
	// Targets are the six target lists by their name (targetFields), each
	// a textarea of entries one a line or separated by commas.
	Targets       map[string]string
	FullPriceOnly bool
	// The unit bounds as typed (empty: none) and which units first.
	MaxUnitsPerLine, MaxUnitsPerOrder, UnitOrder string
}

// readScopeForm reads the fields of a scope named with prefix.
func readScopeForm(c *gin.Context, prefix string) scopeForm {
	s := scopeForm{Prefix: prefix, AppliesTo: c.PostForm(prefix + "applies_to"), Targets: map[string]string{},
		FullPriceOnly:   c.PostForm(prefix+"full_price_only") != "",
		MaxUnitsPerLine: c.PostForm(prefix + "max_units_per_line"), MaxUnitsPerOrder: c.PostForm(prefix + "max_units_per_order"),
		UnitOrder: c.PostForm(prefix + "unit_order")}
	for _, tf := range targetFields {
		s.Targets[tf.Name] = c.PostForm(prefix + "target_" + tf.Name)
	}
	return s
}

// Name is the form's name (and id) of the scope's field called field.
func (s scopeForm) Name(field string) string { return s.Prefix + field }

// scope converts what an action of kind applies to into a. The fields
// that do not apply are left out, so that a value typed before switching
// does not count: free shipping is always on the shipping (left to the
// service's default), the target lists count for some items only, the
// unit bounds not for buy_x_get_y nor the shipping, full price not on
// the shipping. Whether what is left is allowed is the service's to say.
func (s *scopeForm) scope(e formErrors, kind string, a *models.TemplateAction) {
	if kind != models.KindFreeShipping {
		a.AppliesTo = s.AppliesTo
	}
	onShipping := kind == models.KindFreeShipping || a.AppliesTo == models.AppliesToShipping
	a.FullPriceOnly = s.FullPriceOnly && !onShipping
	if kind != models.KindBuyXGetY && !onShipping {
		a.MaxUnitsPerLine = formInt(e, s.Name("max_units_per_line"), s.MaxUnitsPerLine, false)
		a.MaxUnitsPerOrder = formInt(e, s.Name("max_units_per_order"), s.MaxUnitsPerOrder, false)
		if a.MaxUnitsPerLine > 0 || a.MaxUnitsPerOrder > 0 {
			a.UnitOrder = s.UnitOrder
		}
	}
	if a.AppliesTo == models.AppliesToItems {
		a.Target = s.target()
	}
}

// target reads the six target lists.
func (s *scopeForm) target() models.TemplateTarget {
	return models.TemplateTarget{SKUs: formList(s.Targets["skus"]), ProductIDs: formList(s.Targets["product_ids"]),
		CategoryIDs: formList(s.Targets["category_ids"]), ExcludeSKUs: formList(s.Targets["exclude_skus"]),
		ExcludeProductIDs: formList(s.Targets["exclude_product_ids"]), ExcludeCategoryIDs: formList(s.Targets["exclude_category_ids"])}
}

// scopeLists is the data of the partial "scopelists" (template_new.html):
// one scope's target lists in their two groups, with their values and
// errors.
type scopeLists struct {
	Scope  scopeForm
	Groups []targetGroup
	Errors formErrors
}

// Lists is the scope's target lists for the partial "scopelists".
func (s scopeForm) Lists(groups []targetGroup, errs formErrors) scopeLists {
	return scopeLists{Scope: s, Groups: groups, Errors: errs}
}
