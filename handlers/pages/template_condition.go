package pages

import (
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/couponsvc/couponsvc/models"
)

// conditionForm is the template form's condition on the cart, as typed
// (docs/pricing.md, "Conditions"): the lists of what counts, the items
// and the amount of them the cart must hold, and whether each so many
// items give the unit bound again.
type conditionForm struct {
	SKUs, ProductIDs, CategoryIDs                      string
	ExcludeSKUs, ExcludeProductIDs, ExcludeCategoryIDs string
	MinQuantity, MinAmount                             string
	Repeat                                             bool
}

// conditionFields map the service's names of the condition's fields to
// the form's.
var conditionFields = map[string]string{
	"condition.target.skus": "cond_skus", "condition.target.product_ids": "cond_product_ids",
	"condition.target.category_ids": "cond_category_ids", "condition.target.exclude_skus": "cond_exclude_skus",
	"condition.target.exclude_product_ids": "cond_exclude_product_ids", "condition.target.exclude_category_ids": "cond_exclude_category_ids",
	"condition.min_quantity": "cond_min_quantity", "condition.min_amount_cents": "cond_min_amount", "condition.repeat": "cond_repeat",
}

// conditionMessages are the condition's errors in the form's words.
var conditionMessages = map[string]string{
	"cond_skus": targetMessage, "cond_product_ids": targetMessage, "cond_category_ids": targetMessage,
	"cond_exclude_skus": targetMessage, "cond_exclude_product_ids": targetMessage, "cond_exclude_category_ids": targetMessage,
	"cond_min_quantity": "Enter how many of these items the cart must hold (1 to 1,000,000), or an amount of them.",
	"cond_min_amount":   "Enter how much of these items the cart must hold, or a number of them.",
	"cond_repeat":       "Give a number of items here and a most items in the order: so many discounted for each so many bought.",
}

// readConditionForm reads the condition's fields of a posted form.
func readConditionForm(c *gin.Context) conditionForm {
	return conditionForm{SKUs: c.PostForm("cond_skus"), ProductIDs: c.PostForm("cond_product_ids"),
		CategoryIDs: c.PostForm("cond_category_ids"), ExcludeSKUs: c.PostForm("cond_exclude_skus"),
		ExcludeProductIDs: c.PostForm("cond_exclude_product_ids"), ExcludeCategoryIDs: c.PostForm("cond_exclude_category_ids"),
		MinQuantity: c.PostForm("cond_min_quantity"), MinAmount: c.PostForm("cond_min_amount"),
		Repeat: c.PostForm("cond_repeat") != ""}
}

// empty reports whether nothing of the condition was typed: no condition.
func (cf *conditionForm) empty() bool {
	return strings.TrimSpace(cf.SKUs+cf.ProductIDs+cf.CategoryIDs+cf.ExcludeSKUs+cf.ExcludeProductIDs+cf.ExcludeCategoryIDs+
		cf.MinQuantity+cf.MinAmount) == "" && !cf.Repeat
}

// condition converts the condition's fields (nil when none was typed);
// amounts are read with the currency's digits.
func (cf *conditionForm) condition(e formErrors, digits int) *models.TemplateCondition {
	if cf.empty() {
		return nil
	}
	return &models.TemplateCondition{
		Target: models.TemplateTarget{SKUs: formList(cf.SKUs), ProductIDs: formList(cf.ProductIDs),
			CategoryIDs: formList(cf.CategoryIDs), ExcludeSKUs: formList(cf.ExcludeSKUs),
			ExcludeProductIDs: formList(cf.ExcludeProductIDs), ExcludeCategoryIDs: formList(cf.ExcludeCategoryIDs)},
		MinQuantity:    formInt(e, "cond_min_quantity", cf.MinQuantity, false),
		MinAmountCents: formMoneyDigits(e, "cond_min_amount", cf.MinAmount, false, digits),
		Repeat:         cf.Repeat,
	}
}

// init adds the condition's fields to the template form's maps, kept in
// this file with the rest of the condition.
func init() {
	for k, v := range conditionFields {
		templateFields[k] = v
	}
	for k, v := range conditionMessages {
		templateFieldMessages[k] = v
	}
}
