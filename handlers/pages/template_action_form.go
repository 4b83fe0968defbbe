package pages

import (
	"fmt"
	"maps"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/couponsvc/couponsvc/models"
)

// actionForm is one further action of the template form ("and also take
// off"), as typed: a kind (empty: none, the action is left out), its
// amount or percent, its cap, and what it applies to with its target
// lists and unit bounds (docs/pricing.md, "Several actions"). The form
// has models.MaxActions of them, each with its fields named by its place
// (actionPrefix).
type actionForm struct {
	scopeForm
	// Index is the action's place among the form's further actions, from 0.
	Index                              int
	Kind, Amount, Percent, MaxDiscount string
}

// actionField is one field of a further action: its name in the form
// after the action's prefix, the service's names of it after
// "actions[i].", and the message beside it when the service refuses it.
type actionField struct {
	Form    string
	Service []string
	Message string
}

// actionFields describe every field of a further action, once for every
// place i: the form's names, the map of the service's names to them and
// their messages are made from it (init).
var actionFields = func() []actionField {
	fields := []actionField{
		{"kind", []string{"kind"}, "Choose what the coupon also takes off, or nothing more."},
		{"applies_to", []string{"applies_to", "target"}, "Choose the order, some items or the shipping (an amount, a percentage or free shipping)."},
		{"amount", []string{"face_value_cents"}, "Enter the amount it also takes off, more than zero."},
		{"percent", []string{"percent_off", "percent_off_bp"}, "Enter a percentage from 0.01 to 100."},
		{"max_discount", []string{"max_discount_cents"}, "Enter the most it also takes off, more than zero."},
		{"full_price_only", []string{"full_price_only"}, "Full-price items only is for the order or some items, not the shipping."},
		{"max_units_per_line", []string{"max_units_per_line"}, templateFieldMessages["max_units_per_line"]},
		{"max_units_per_order", []string{"max_units_per_order"}, templateFieldMessages["max_units_per_order"]},
		{"unit_order", []string{"unit_order"}, templateFieldMessages["unit_order"]},
	}
	for _, tf := range targetFields {
		fields = append(fields, actionField{"target_" + tf.Name, []string{"target." + tf.Name}, targetMessage})
	}
	return fields
}()

// actionPrefix starts the names of the form's fields of the further
// action at place i ("act1_percent").
func actionPrefix(i int) string { return fmt.Sprintf("act%d_", i) }

func init() {
	for i := range models.MaxActions {
		addActionFields(templateFields, i, i)
		for _, af := range actionFields {
			templateFieldMessages[actionPrefix(i)+af.Form] = af.Message
			describeFields = append(describeFields, actionPrefix(i)+af.Form)
		}
	}
	templateFields["actions"] = actionPrefix(0) + "kind"
}

// addActionFields maps the service's names of its further action k
// (actions[k].percent_off_bp) to the form's fields of the action at
// place i (act1_percent) in fields.
func addActionFields(fields map[string]string, k, i int) {
	for _, af := range actionFields {
		for _, name := range af.Service {
			fields[fmt.Sprintf("actions[%d].%s", k, name)] = actionPrefix(i) + af.Form
		}
	}
}

// readActionForms reads the form's further actions, every place.
func readActionForms(c *gin.Context) []actionForm {
	out := make([]actionForm, models.MaxActions)
	for i := range out {
		p := actionPrefix(i)
		out[i] = actionForm{scopeForm: readScopeForm(c, p), Index: i, Kind: c.PostForm(p + "kind"),
			Amount: c.PostForm(p + "amount"), Percent: c.PostForm(p + "percent"), MaxDiscount: c.PostForm(p + "max_discount")}
	}
	return out
}

// newActionForms are the further actions of an empty form: none chosen,
// each on the order.
func newActionForms() []actionForm {
	out := make([]actionForm, models.MaxActions)
	for i := range out {
		out[i] = actionForm{scopeForm: scopeForm{Prefix: actionPrefix(i), AppliesTo: models.AppliesToOrder, Targets: map[string]string{}}, Index: i}
	}
	return out
}

// Open reports whether the action shows opened: the first, one with a
// kind chosen, or one with a mistake.
func (a actionForm) Open(errs formErrors) bool {
	if a.Index == 0 || a.Kind != "" {
		return true
	}
	for field := range errs {
		if strings.HasPrefix(field, a.Prefix) {
			return true
		}
	}
	return false
}

// Number is the action's place as the page counts it, from 1.
func (a actionForm) Number() int { return a.Index + 1 }

// actions converts the further actions that have a kind, in their order;
// the others are left out. money reads an amount of the template's
// currency, naming the form's field at fault.
func actions(forms []actionForm, e formErrors, money func(field, value string, required bool) int64) []models.TemplateAction {
	var out []models.TemplateAction
	for i := range forms {
		if forms[i].Kind != "" {
			out = append(out, forms[i].action(e, money))
		}
	}
	return out
}

// action converts one further action; the fields of another kind are left
// out. A percent may have up to two decimals ("12.5").
func (a *actionForm) action(e formErrors, money func(field, value string, required bool) int64) models.TemplateAction {
	act := models.TemplateAction{Kind: a.Kind}
	switch a.Kind {
	case models.KindFixed:
		act.FaceValueCents = money(a.Name("amount"), a.Amount, true)
	case models.KindPercent:
		bp, ok := parsePercent(a.Percent)
		if !ok {
			e.add(a.Name("percent"), "Enter a percentage such as 10 or 12.5, with at most two decimals.")
		}
		act.PercentOffBP = bp
		act.MaxDiscountCents = money(a.Name("max_discount"), a.MaxDiscount, true)
	case models.KindFreeShipping:
		act.MaxDiscountCents = money(a.Name("max_discount"), a.MaxDiscount, true)
	default:
		e.add(a.Name("kind"), templateFieldMessages[a.Name("kind")])
	}
	a.scope(e, a.Kind, &act)
	return act
}

// actionFieldsOf maps the service's names of the template's fields to the
// form's, the further actions' by where each came from: the service
// counts only the actions sent (those with a kind), so that with an empty
// place before it, its actions[0] may be the form's second action.
func actionFieldsOf(forms []actionForm) map[string]string {
	fields, cloned := templateFields, false
	k := 0
	for i := range forms {
		if forms[i].Kind == "" {
			continue
		}
		if k != i {
			if !cloned {
				fields, cloned = maps.Clone(templateFields), true
			}
			addActionFields(fields, k, i)
		}
		k++
	}
	return fields
}
