package pages

import (
	"github.com/gin-gonic/gin"

	"github.com/couponsvc/couponsvc/models"
)

// actionForm is the template form's further action ("and also take
// off"), as typed: a kind (empty: none), its amount or percent, its cap
// and whether it is on the order or the shipping (docs/pricing.md,
// "Several actions").
type actionForm struct {
	Kind, Amount, Percent, MaxDiscount, AppliesTo string
}

// actionFields maps the service's names of the first further action's
// fields to the form's.
var actionFields = map[string]string{
	"actions[0].kind": "also_kind", "actions[0].face_value_cents": "also_amount",
	"actions[0].percent_off": "also_percent", "actions[0].percent_off_bp": "also_percent",
	"actions[0].max_discount_cents": "also_max_discount", "actions[0].applies_to": "also_applies_to",
	"actions": "also_kind",
}

// actionFieldMessages are the messages beside the further action's fields.
var actionFieldMessages = map[string]string{
	"also_kind":         "Choose what the coupon also takes off, or nothing more.",
	"also_amount":       "Enter the amount it also takes off, more than zero.",
	"also_percent":      "Enter a percentage from 1 to 100.",
	"also_max_discount": "Enter the most it also takes off, more than zero.",
	"also_applies_to":   "Choose the order or the shipping.",
}

func init() {
	for k, v := range actionFields {
		templateFields[k] = v
	}
	for k, v := range actionFieldMessages {
		templateFieldMessages[k] = v
	}
}

// readActionForm reads the further action of the template form.
func readActionForm(c *gin.Context) actionForm {
	return actionForm{Kind: c.PostForm("also_kind"), Amount: c.PostForm("also_amount"), Percent: c.PostForm("also_percent"),
		MaxDiscount: c.PostForm("also_max_discount"), AppliesTo: c.PostForm("also_applies_to")}
}

// actions converts the further action: none when no kind is chosen; the
// fields of another kind left out. money reads an amount of the
// template's currency, naming the form's field at fault.
func (a *actionForm) actions(e formErrors, money func(field, value string, required bool) int64) []models.TemplateAction {
	if a.Kind == "" {
		return nil
	}
	act := models.TemplateAction{Kind: a.Kind, AppliesTo: a.AppliesTo}
	switch a.Kind {
	case models.KindFixed:
		act.FaceValueCents = money("also_amount", a.Amount, true)
	case models.KindPercent:
		act.PercentOff = formInt(e, "also_percent", a.Percent, true)
		act.MaxDiscountCents = money("also_max_discount", a.MaxDiscount, true)
	case models.KindFreeShipping:
		act.AppliesTo = models.AppliesToShipping
		act.MaxDiscountCents = money("also_max_discount", a.MaxDiscount, true)
	default:
		e.add("also_kind", actionFieldMessages["also_kind"])
	}
	return []models.TemplateAction{act}
}
