package pages

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"

	"github.com/gin-gonic/gin"
)

// templateForm is the create form of a template, as typed.
type templateForm struct {
	CampaignID, Name, Description, Kind          string
	FaceValue, PercentOff, MaxDiscount, MinOrder string
	TotalStock, PerUserLimit                     string
	ClaimStartsAt, ClaimEndsAt                   string
	Validity, ValidDays, ValidFrom, ValidUntil   string
	RefundPolicy                                 string
	CodeMode, SharedCode, Stacking               string
	ExtendOnRefund, StartPaused                  bool
	// What the coupon's own kind applies to, its target lists, full price
	// and unit bounds (scopeForm, its fields unprefixed).
	scopeForm
	// The other kinds' fields, as typed: Tiers a textarea of "min:
	// amount" or "min: percent%" lines.
	MinQuantity, Priority, Currency                       string
	BuyQuantity, GetQuantity, GetPercent, MaxApplications string
	Tiers                                                 string
	// PercentExact and GetPercentExact are percents with up to two
	// decimals ("33.33"), the service's percent_off_bp and get_percent_bp.
	PercentExact, GetPercentExact string
	// Actions are the further actions, models.MaxActions places
	// (template_action_form.go).
	Actions []actionForm
	// Condition is what the cart must hold, as typed (conditionForm).
	Condition conditionForm
	// Eligibility is the rule of who may use the coupons, as typed
	// (docs/eligibility.md); its compile error shows beside it.
	Eligibility string
	// Token names this filling of the form: sent twice, it creates one
	// template (createOnce).
	Token  string
	Errors formErrors
	// Words is the coupon in words, after "Say it in words"
	// (describeTemplate); "" otherwise.
	Words string
}

// targetFields are the target lists of the form, by the service's name
// after "target." (the form's field is "target_" and the name).
var targetFields = []struct{ Name, Label string }{
	{"skus", "SKUs"}, {"product_ids", "Product ids"}, {"category_ids", "Category ids"},
	{"exclude_skus", "Never these SKUs"}, {"exclude_product_ids", "Never these product ids"},
	{"exclude_category_ids", "Never these category ids"},
}

// templateFields maps the service's field names to the form's.
var templateFields = map[string]string{
	"campaign_id": "campaign_id", "name": "name", "description": "description", "kind": "kind",
	"face_value_cents": "face_value", "percent_off": "percent_off", "max_discount_cents": "max_discount",
	"min_order_cents": "min_order", "total_stock": "total_stock", "per_user_limit": "per_user_limit",
	"claim_starts_at": "claim_starts_at", "claim_ends_at": "claim_ends_at", "valid_days": "valid_days",
	"valid_from": "valid_from", "valid_until": "valid_until", "refund_policy": "refund_policy",
	"status": "start_paused", "code_mode": "code_mode", "shared_code": "shared_code", "stacking": "stacking",
	"applies_to": "applies_to", "target": "applies_to", "min_quantity": "min_quantity", "priority": "priority",
	"currency": "currency", "buy_quantity": "buy_quantity", "get_quantity": "get_quantity",
	"get_percent": "get_percent", "max_applications": "max_applications", "tiers": "tiers",
	"percent_off_bp": "percent_exact", "get_percent_bp": "get_percent_exact", "full_price_only": "full_price_only",
	"max_units_per_line": "max_units_per_line", "max_units_per_order": "max_units_per_order", "unit_order": "unit_order",
	"eligibility": "eligibility",
	"target.skus": "target_skus", "target.product_ids": "target_product_ids", "target.category_ids": "target_category_ids",
	"target.exclude_skus": "target_exclude_skus", "target.exclude_product_ids": "target_exclude_product_ids",
	"target.exclude_category_ids": "target_exclude_category_ids",
}

// templateFieldMessages replace the service's messages beside the fields of
// the form: the service speaks of cents and of its field names, the form of
// amounts and of what the admin sees.
var templateFieldMessages = map[string]string{
	"campaign_id":                 "Choose a campaign.",
	"name":                        "Enter a name of 1 to 100 characters, on one line, of ordinary text.",
	"face_value":                  "Enter the amount this coupon takes off, more than zero.",
	"percent_off":                 "Enter a percentage from 1 to 100.",
	"percent_exact":               "Enter a percentage from 0.01 to 100, or a whole one in Percent off, not both.",
	"get_percent_exact":           "Enter a percentage from 0.01 to 100, or a whole one in Percent off those, not both.",
	"max_discount":                "Enter the most this coupon may take off, more than zero.",
	"min_order":                   "Enter the smallest order this coupon works on, or leave it empty for any order.",
	"total_stock":                 "Enter how many coupons there are, from 1 to 10,000,000.",
	"per_user_limit":              "Enter how many one person may hold, from 1 to 100.",
	"valid_days":                  "Enter a number of days from 1 to 3,650.",
	"claim_ends_at":               "Claims must close after they open.",
	"valid_from":                  "Enter the first day the coupons are valid.",
	"valid_until":                 "The coupons must stop being valid after they start.",
	"claim_starts_at":             "Enter when claims open, such as 2026-03-01 09:00.",
	"min_quantity":                "Enter a number of items from 0 to 1,000,000, or leave it empty for any.",
	"priority":                    "Enter a priority from 0 (applies first) to 1,000.",
	"buy_quantity":                "Enter how many items are bought, from 1 to 1,000.",
	"get_quantity":                "Enter how many items are discounted, from 1 to 1,000.",
	"get_percent":                 "Enter a percentage from 1 to 100 (100: free).",
	"max_applications":            "Enter a number from 0 (no limit) to 1,000,000.",
	"max_units_per_line":          "Enter a number of units from 0 (all) to 1,000,000; not for buy some, get some, nor the shipping.",
	"max_units_per_order":         "Enter a number of items from 0 (all) to 1,000,000; not for buy some, get some, nor the shipping.",
	"unit_order":                  "Choose the cheapest or the dearest items first.",
	"target_skus":                 targetMessage,
	"target_product_ids":          targetMessage,
	"target_category_ids":         targetMessage,
	"target_exclude_skus":         targetMessage,
	"target_exclude_product_ids":  targetMessage,
	"target_exclude_category_ids": targetMessage,
}

// targetMessage is the error beside a target list.
const targetMessage = "Enter at most 1,000 entries, one a line or separated by commas, each 1 to 64 characters."

// bornExpiredMessages replace the service's messages when the validity
// would end before coupons are claimed (models.ErrBornExpired).
var bornExpiredMessages = map[string]string{
	"valid_until":     "This time has passed: every coupon claimed would already be expired.",
	"claim_starts_at": "Claims must open before the coupons stop being valid.",
	"claim_ends_at":   "Claims must close by the time the coupons stop being valid, or the last ones claimed would already be expired.",
}

// templateErrors puts a service's error beside each field of a template
// form it names (through fields), in the form's words; a field that has a
// message already (the form's own check of what was typed) keeps it. It
// reports whether err was one the form can show.
func templateErrors(errs formErrors, err error, fields map[string]string) bool {
	fresh := formErrors{}
	if !fresh.fromError(tierErrors(errs, err), fields) {
		return false
	}
	words := templateFieldMessages
	if errors.Is(err, models.ErrBornExpired) {
		words = bornExpiredMessages
	}
	for field, msg := range fresh {
		if w, ok := words[field]; ok {
			msg = w
		}
		errs.add(field, msg)
	}
	return true
}

// tierErrors puts the errors of single tiers (tiers[2].min_cents) beside
// the form's tiers, each saying its row, and returns err without them.
func tierErrors(errs formErrors, err error) error {
	named := models.FieldsOf(err)
	var rest models.FieldErrors
	var rows []string
	for _, fe := range named {
		var row int
		var sub string
		if n, _ := fmt.Sscanf(fe.Field, "tiers[%d].%s", &row, &sub); n != 2 {
			rest = append(rest, fe)
			continue
		}
		what := "the minimum must be more than zero and more than the row above's"
		if sub != "min_cents" {
			what = "give an amount or a percentage off, every row the same way, never less than the row above"
		}
		rows = append(rows, fmt.Sprintf("Row %d: %s.", row+1, what))
	}
	if len(rows) == 0 {
		return err
	}
	errs.add("tiers", strings.Join(rows, " "))
	if len(rest) == 0 {
		// Only the tiers were at fault: a form-level error the form shows
		// nowhere else, so that fromError still reports it as shown.
		return models.Invalid("tiers", "%s", strings.Join(rows, " "))
	}
	return rest.Err()
}

// newTemplatePage is the data of template_new.html.
type newTemplatePage struct {
	basePage
	Form      templateForm
	Campaigns []models.Campaign
	// Targets are the target lists' names and labels, in order.
	Targets []struct{ Name, Label string }
	// TargetGroups are the same lists in their two groups, with the values
	// seen on orders (targetGroups); Known are those values.
	TargetGroups []targetGroup
	Known        *checkout.KnownItems
}

// showNewTemplate shows an empty create form with sensible defaults.
func (p *Pages) showNewTemplate(c *gin.Context) {
	f := templateForm{Kind: models.KindFixed, TotalStock: "100", PerUserLimit: "1", Validity: "days", ValidDays: "30",
		RefundPolicy: models.RefundRestore, Stacking: models.StackingExclusive, CampaignID: c.Query("campaign"),
		scopeForm: scopeForm{AppliesTo: models.AppliesToOrder, Targets: map[string]string{}}, Actions: newActionForms(),
		Priority: strconv.Itoa(models.DefaultPriority), Token: newFormToken(), Errors: formErrors{}}
	p.renderNewTemplate(c, http.StatusOK, f)
}

func (p *Pages) renderNewTemplate(c *gin.Context, status int, f templateForm) {
	camps, err := p.core.ListCampaigns(c.Request.Context())
	if err != nil {
		p.fail(c, err)
		return
	}
	if len(camps) == 0 {
		p.flash(c, false, "Create a campaign first: every template belongs to one.")
		redirect(c, "/admin/campaigns/new")
		return
	}
	known, err := p.checkout.KnownItems(c.Request.Context(), knownItemsShown)
	if err != nil {
		p.fail(c, err)
		return
	}
	p.render(c, status, "template_new", &newTemplatePage{basePage: basePage{Title: "New template", Nav: "admin"},
		Form: f, Campaigns: camps, Targets: targetFields, TargetGroups: targetGroups(known), Known: known})
}

// createTemplate creates a template from the form; on a mistake the form comes
// back as typed with the error beside the field.
func (p *Pages) createTemplate(c *gin.Context) {
	f := readTemplateForm(c)
	campaignCurrency := p.campaignCurrency(c, f.CampaignID)
	handleForm(p, c, formPost[models.Template]{errs: f.Errors,
		read: func() models.Template { return f.template(p, campaignCurrency) },
		// What was typed cannot be sent: check the rest as the service
		// would, so that every mistake is named in this one answer.
		recheck: func(t models.Template) error {
			var errs models.FieldErrors
			errs.Add(t.Validate())
			if t.Currency != campaignCurrency {
				errs.Add(models.Invalid("currency", "must be %s, the currency of the campaign", campaignCurrency))
			}
			return errs.Err()
		},
		act: func(t models.Template) (outcome, error) {
			return p.createOnce(c, formToken(c), func() (outcome, error) {
				out, err := p.admin.CreateTemplate(c.Request.Context(), web.Principal(c).Name, t)
				if err != nil {
					return outcome{}, err
				}
				return done(fmt.Sprintf("Created “%s”.", out.Name), fmt.Sprintf("/admin/templates/%d", out.ID)), nil
			})
		},
		refused: func(_ models.Template, err error) bool {
			return templateErrors(f.Errors, err, actionFieldsOf(f.Actions))
		},
		show: func(status int) { p.renderNewTemplate(c, status, f) },
	})
}

// readTemplateForm reads the create form of a template as typed, its token
// kept (or a fresh one when it came without).
func readTemplateForm(c *gin.Context) templateForm {
	f := templateForm{
		CampaignID: c.PostForm("campaign_id"), Name: c.PostForm("name"), Description: c.PostForm("description"),
		Kind: c.PostForm("kind"), FaceValue: c.PostForm("face_value"), PercentOff: c.PostForm("percent_off"),
		MaxDiscount: c.PostForm("max_discount"), MinOrder: c.PostForm("min_order"),
		TotalStock: c.PostForm("total_stock"), PerUserLimit: c.PostForm("per_user_limit"),
		ClaimStartsAt: c.PostForm("claim_starts_at"), ClaimEndsAt: c.PostForm("claim_ends_at"),
		Validity: c.PostForm("validity"), ValidDays: c.PostForm("valid_days"), ValidFrom: c.PostForm("valid_from"),
		ValidUntil: c.PostForm("valid_until"), RefundPolicy: c.PostForm("refund_policy"),
		CodeMode: c.PostForm("code_mode"), SharedCode: strings.TrimSpace(c.PostForm("shared_code")),
		Stacking:       c.PostForm("stacking"),
		ExtendOnRefund: c.PostForm("extend_on_refund") != "", StartPaused: c.PostForm("start_paused") != "",
		scopeForm: readScopeForm(c, ""), MinQuantity: c.PostForm("min_quantity"), Priority: c.PostForm("priority"),
		Currency: strings.ToUpper(strings.TrimSpace(c.PostForm("currency"))), BuyQuantity: c.PostForm("buy_quantity"),
		GetQuantity: c.PostForm("get_quantity"), GetPercent: c.PostForm("get_percent"),
		MaxApplications: c.PostForm("max_applications"), Tiers: c.PostForm("tiers"),
		PercentExact: c.PostForm("percent_exact"), GetPercentExact: c.PostForm("get_percent_exact"),
		Eligibility: strings.TrimSpace(c.PostForm("eligibility")), Actions: readActionForms(c),
		Token: postedOrNewToken(c), Errors: formErrors{},
		Condition: readConditionForm(c),
	}
	return f
}

// template converts the form; fields that do not apply to the chosen kind,
// target or validity are left out, so that a value typed before switching
// does not count. Amounts are read with the digits of the currency (the
// one typed, else campaignCurrency, the chosen campaign's); times in the
// deployment's zone (p.formTime).
func (f *templateForm) template(p *Pages, campaignCurrency string) models.Template {
	e := f.Errors
	t := models.Template{Name: f.Name, Description: strings.TrimSpace(f.Description), Kind: f.Kind,
		RefundPolicy: f.RefundPolicy, ExtendOnRefund: f.ExtendOnRefund, Status: models.TemplateActive,
		CodeMode: f.CodeMode, Currency: f.Currency, Stacking: f.Stacking, Eligibility: f.Eligibility}
	if t.Currency == "" {
		t.Currency = campaignCurrency
	}
	digits := models.CurrencyDigits(t.Currency)
	money := func(field, value string, required bool) int64 {
		return formMoneyDigits(e, field, value, required, digits)
	}
	if f.CodeMode == models.CodeModeShared {
		t.SharedCode = f.SharedCode
	}
	t.CampaignID = formInt(e, "campaign_id", f.CampaignID, false)
	if t.CampaignID <= 0 {
		e.add("campaign_id", "Choose a campaign.")
	}
	switch f.Kind {
	case models.KindFixed:
		t.FaceValueCents = money("face_value", f.FaceValue, true)
	case models.KindPercent:
		t.PercentOff, t.PercentOffBP = formPercentPair(e, "percent_off", f.PercentOff, "percent_exact", f.PercentExact)
		t.MaxDiscountCents = money("max_discount", f.MaxDiscount, true)
	case models.KindFixedPerItem:
		t.FaceValueCents = money("face_value", f.FaceValue, true)
		t.MaxDiscountCents = money("max_discount", f.MaxDiscount, true)
	case models.KindBuyXGetY:
		t.BuyQuantity = formInt(e, "buy_quantity", f.BuyQuantity, true)
		t.GetQuantity = formInt(e, "get_quantity", f.GetQuantity, true)
		t.GetPercent, t.GetPercentBP = formPercentPair(e, "get_percent", f.GetPercent, "get_percent_exact", f.GetPercentExact)
		t.MaxApplications = formInt(e, "max_applications", f.MaxApplications, false)
		t.MaxDiscountCents = money("max_discount", f.MaxDiscount, true)
	case models.KindTiered:
		t.Tiers = formTiers(e, f.Tiers, digits)
		t.MaxDiscountCents = money("max_discount", f.MaxDiscount, true)
	case models.KindFreeShipping:
		t.MaxDiscountCents = money("max_discount", f.MaxDiscount, true)
	default:
		e.add("kind", "Choose what the coupon takes off.")
	}
	var first models.TemplateAction
	f.scope(e, f.Kind, &first)
	t.AppliesTo, t.Target, t.FullPriceOnly = first.AppliesTo, first.Target, first.FullPriceOnly
	t.MaxUnitsPerLine, t.MaxUnitsPerOrder, t.UnitOrder = first.MaxUnitsPerLine, first.MaxUnitsPerOrder, first.UnitOrder
	t.Actions = actions(f.Actions, e, money)
	t.Condition = f.Condition.condition(e, digits)
	t.MinOrderCents = money("min_order", f.MinOrder, false)
	t.MinQuantity = formInt(e, "min_quantity", f.MinQuantity, false)
	t.Priority = models.DefaultPriority
	if strings.TrimSpace(f.Priority) != "" {
		t.Priority = formInt(e, "priority", f.Priority, false)
	}
	t.TotalStock = formInt(e, "total_stock", f.TotalStock, true)
	t.PerUserLimit = formInt(e, "per_user_limit", f.PerUserLimit, true)
	if starts := p.formTime(e, "claim_starts_at", f.ClaimStartsAt); starts != nil {
		t.ClaimStartsAt = *starts
	}
	t.ClaimEndsAt = p.formTime(e, "claim_ends_at", f.ClaimEndsAt)
	if f.Validity == "dates" {
		t.ValidFrom = p.formTime(e, "valid_from", f.ValidFrom)
		t.ValidUntil = p.formTime(e, "valid_until", f.ValidUntil)
		if f.ValidFrom == "" {
			e.add("valid_from", "Enter the first day the coupons are valid.")
		}
		if f.ValidUntil == "" {
			e.add("valid_until", "Enter when the coupons stop being valid.")
		}
	} else {
		t.ValidDays = formInt(e, "valid_days", f.ValidDays, true)
	}
	if f.StartPaused {
		t.Status = models.TemplatePaused
	}
	if t.ClaimStartsAt.IsZero() && t.ClaimEndsAt != nil && !t.ClaimEndsAt.After(time.Now()) {
		e.add("claim_ends_at", "This must be in the future.")
	}
	return t
}
