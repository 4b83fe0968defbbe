package api

import (
	"fmt"
	"net/http"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/admin"
	"github.com/couponsvc/couponsvc/services/core"

	"github.com/gin-gonic/gin"
)

// createTemplateRequest mirrors models.Template's settable fields; pointers
// tell a missing field from a zero one, and times are parsed here so that a
// malformed one is named.
type createTemplateRequest struct {
	CampaignID  *int64  `json:"campaign_id" binding:"required" schema:"id" doc:"the campaign the template belongs to"`
	Name        *string `json:"name" binding:"required" schema:"name" doc:"1-100 characters on one line, without control characters, characters that change the text direction or U+FFFD"`
	Description *string `json:"description" schema:"template_description" doc:"at most 2000 characters; line breaks (\\n or \\r\\n) but no other control characters, nor direction overrides or U+FFFD"`
	Kind        *string `json:"kind" binding:"required" schema:"template_kind"`
	// What the coupon applies to and its kind's fields, as each of its
	// actions sends them (docs/pricing.md, "Template fields").
	kindFields
	MinOrderCents  *int64          `json:"min_order_cents" schema:"money" doc:"the smallest subtotal of the targeted lines the coupon applies to"`
	MinQuantity    *int64          `json:"min_quantity" schema:"min_quantity" doc:"the fewest targeted units the coupon applies to (0: any)"`
	Priority       *int64          `json:"priority" schema:"priority" doc:"the order of the coupons of one order: lower first; 100 when left out"`
	Currency       *string         `json:"currency" schema:"currency" doc:"ISO 4217; the deployment's (COUPON_CURRENCY) when left out; must be the campaign's"`
	TotalStock     *int64          `json:"total_stock" binding:"required" schema:"total_stock" doc:"1..10,000,000"`
	PerUserLimit   *int64          `json:"per_user_limit" binding:"required" schema:"per_user_limit" doc:"1..100"`
	ClaimStartsAt  *string         `json:"claim_starts_at" format:"date-time" doc:"RFC 3339; now when left out"`
	ClaimEndsAt    *string         `json:"claim_ends_at" nullable:"true" format:"date-time" doc:"RFC 3339; optional"`
	ValidFrom      *string         `json:"valid_from" format:"date-time" doc:"absolute validity, with valid_until; claim_starts_at must be before valid_until and claim_ends_at not after it"`
	ValidUntil     *string         `json:"valid_until" format:"date-time" doc:"absolute validity, with valid_from, after it and not yet passed"`
	ValidDays      *int64          `json:"valid_days" schema:"valid_days" doc:"1..3650: a coupon claimed on day D is valid until the end of day D+N in COUPON_TIMEZONE (instead of valid_from/valid_until)"`
	RefundPolicy   *string         `json:"refund_policy" schema:"refund_policy"`
	ExtendOnRefund *bool           `json:"extend_on_refund" doc:"a refunded coupon's validity is extended by the time its order held it"`
	Status         *string         `json:"status" schema:"template_status"`
	Stacking       *string         `json:"stacking" schema:"stacking" doc:"exclusive (default): the only coupon on its order; combinable: may share an order with other combinable coupons"`
	CodeMode       *string         `json:"code_mode" schema:"code_mode"`
	Actions        []actionRequest `json:"actions" schema:"actions" doc:"further actions after the template's own kind (20% off + free shipping on one code): each a kind with its own applies_to, target, kind fields, cap and unit bounds, checked as the template's; priced in order, each on what the earlier ones left; the template's minimums and condition apply to all of them"`
	SharedCode     *string         `json:"shared_code" schema:"shared_code" doc:"with code_mode shared: the code every shopper types, 4-32 letters and digits; stored upper case with dashes and spaces dropped (its normal form), unique in that form among templates that are not archived"`
	Eligibility    *string         `json:"eligibility" schema:"eligibility" doc:"a rule over customer, order, channel and now (docs/eligibility.md), such as \"vip\" in customer.tags && channel == \"web\"; compiled when saved: a fault is 400 naming eligibility with its line and column; left out: every customer"`

	// Condition is what the cart must hold, apart from the target
	// (docs/pricing.md, "Conditions").
	Condition *conditionRequest `json:"condition" doc:"what the cart must hold for the coupon to apply at all, apart from what it discounts, judged on the cart before any discount (docs/pricing.md, Conditions); left out: none"`
}

// tierRequest is models.Tier as a request sends it.
type tierRequest struct {
	MinCents     int64 `json:"min_cents" schema:"tier_min" doc:"the targeted subtotal from which the tier applies (or min_quantity, not both)"`
	OffCents     int64 `json:"off_cents" schema:"money" doc:"the amount off (or percent_off, not both)"`
	PercentOff   int64 `json:"percent_off" schema:"tier_percent" doc:"the percent off the targeted lines, 1..100 (or off_cents, not both)"`
	PercentOffBP int64 `json:"percent_off_bp" schema:"percent_bp" doc:"percent_off in basis points, 1..10000 (or percent_off, not both)"`
	MinQuantity  int64 `json:"min_quantity" schema:"min_quantity" doc:"a quantity tier: the targeted units from which it applies, instead of min_cents (all tiers of one sort)"`
}

// kindFields are what a template's own kind and each of its actions send
// alike: the kind's fields, what it applies to and its unit bounds
// (docs/pricing.md, "Template fields" and "Several actions"). Pointers tell
// a missing field from a zero one, as in createTemplateRequest.
type kindFields struct {
	AppliesTo        *string        `json:"applies_to" schema:"applies_to"`
	Target           *targetRequest `json:"target" doc:"with applies_to items: the lines the coupon (or the action) applies to; each list is stored sorted without repeats"`
	FaceValueCents   *int64         `json:"face_value_cents" schema:"money" doc:"fixed: the discount; fixed_per_item: the discount of each targeted unit (at most its price); 0 or left out for the other kinds"`
	PercentOff       *int64         `json:"percent_off" schema:"percent_off" doc:"percent: 1..100, whole percents (or percent_off_bp, not both)"`
	PercentOffBP     *int64         `json:"percent_off_bp" schema:"percent_bp" doc:"percent: 1..10000 basis points, 0.01% steps (3333 is 33.33%; or percent_off, not both)"`
	MaxDiscountCents *int64         `json:"max_discount_cents" schema:"money" doc:"the cap of the discount, required by every kind but fixed; the coupon's budget value adds up the caps (a fixed kind's face value) of the template and its actions"`
	BuyQuantity      *int64         `json:"buy_quantity" schema:"set_quantity" doc:"buy_x_get_y: the units bought in each set"`
	GetQuantity      *int64         `json:"get_quantity" schema:"set_quantity" doc:"buy_x_get_y: the cheapest units of each set that take get_percent off"`
	GetPercent       *int64         `json:"get_percent" schema:"get_percent" doc:"buy_x_get_y: the percent off each set's get_quantity cheapest units (100: free; or get_percent_bp, not both)"`
	GetPercentBP     *int64         `json:"get_percent_bp" schema:"percent_bp" doc:"buy_x_get_y: get_percent in basis points, 1..10000 (10000: free; or get_percent, not both)"`
	MaxApplications  *int64         `json:"max_applications" schema:"max_applications" doc:"buy_x_get_y: the most sets discounted on one order (0: no limit but max_discount_cents)"`
	Tiers            []tierRequest  `json:"tiers" schema:"tiers" doc:"tiered: the steps, in increasing min_cents, each with off_cents or percent_off (all tiers of one sort, never decreasing)"`
	FullPriceOnly    *bool          `json:"full_price_only" doc:"true: the coupon skips the lines the shop marked down (compare_at_price_cents above unit_price_cents), as lines it does not target; not with applies_to shipping"`
	MaxUnitsPerLine  *int64         `json:"max_units_per_line" schema:"units_bound" doc:"the most units of one line the coupon discounts (0: no bound); not for buy_x_get_y nor the shipping"`
	MaxUnitsPerOrder *int64         `json:"max_units_per_order" schema:"units_bound" doc:"the most units of the order the coupon discounts (0: no bound; 1 with unit_order cheapest: the cheapest item, once); not for buy_x_get_y nor the shipping"`
	UnitOrder        *string        `json:"unit_order" schema:"unit_order" doc:"with a units bound: which units first, cheapest (default) or dearest (what is left of their price); only with max_units_per_line or max_units_per_order"`
}

// action converts the kind fields of a template or an action of kind;
// Template.Validate checks them.
func (k *kindFields) action(kind string) models.TemplateAction {
	out := models.TemplateAction{Kind: kind, AppliesTo: valueOf(k.AppliesTo), FaceValueCents: valueOf(k.FaceValueCents),
		PercentOff: valueOf(k.PercentOff), PercentOffBP: valueOf(k.PercentOffBP), MaxDiscountCents: valueOf(k.MaxDiscountCents),
		BuyQuantity: valueOf(k.BuyQuantity), GetQuantity: valueOf(k.GetQuantity), GetPercent: valueOf(k.GetPercent),
		GetPercentBP: valueOf(k.GetPercentBP), MaxApplications: valueOf(k.MaxApplications), FullPriceOnly: valueOf(k.FullPriceOnly),
		MaxUnitsPerLine: valueOf(k.MaxUnitsPerLine), MaxUnitsPerOrder: valueOf(k.MaxUnitsPerOrder), UnitOrder: valueOf(k.UnitOrder)}
	if k.Target != nil {
		out.Target = models.TemplateTarget(*k.Target)
	}
	for _, tier := range k.Tiers {
		out.Tiers = append(out.Tiers, models.Tier(tier))
	}
	return out
}

// actionRequest is models.TemplateAction as a request sends it: a kind and
// its fields, as the template's own.
type actionRequest struct {
	Kind string `json:"kind" schema:"template_kind"`
	kindFields
}

// targetRequest is models.TemplateTarget as a request sends it: an unnamed
// struct, so that the document describes it in place, with its limits.
type targetRequest = struct {
	SKUs               []string `json:"skus" schema:"target_list" doc:"the lines of these SKUs"`
	ProductIDs         []string `json:"product_ids" schema:"target_list" doc:"the lines of these products"`
	CategoryIDs        []string `json:"category_ids" schema:"target_list" doc:"the lines in any of these categories"`
	ExcludeSKUs        []string `json:"exclude_skus" schema:"target_list" doc:"never the lines of these SKUs"`
	ExcludeProductIDs  []string `json:"exclude_product_ids" schema:"target_list" doc:"never the lines of these products"`
	ExcludeCategoryIDs []string `json:"exclude_category_ids" schema:"target_list" doc:"never the lines in any of these categories"`
}

// conditionRequest is models.TemplateCondition as a request sends it: an
// unnamed struct, described in place with its limits, as targetRequest.
type conditionRequest = struct {
	Target         *targetRequest `json:"target" doc:"the lines the condition counts: the lists of target; every line when no include list is given"`
	MinQuantity    int64          `json:"min_quantity" schema:"min_quantity" doc:"the fewest units of those lines the cart must hold (this or min_amount_cents, at least 1)"`
	MinAmountCents int64          `json:"min_amount_cents" schema:"money" doc:"the least amount of those lines, before any discount, the cart must hold"`
	Repeat         bool           `json:"repeat" doc:"max_units_per_order is per min_quantity units held: each min_quantity of them gives max_units_per_order more (buy 2 of A, get 1 of B, again for every 2 more); needs both"`
}

// template converts the request (DecodeJSON saw the required fields),
// naming the first malformed field.
func (r *createTemplateRequest) template() (models.Template, error) {
	if r.PercentOff != nil && r.PercentOffBP != nil {
		return models.Template{}, models.Invalid("percent_off_bp", "give percent_off (whole percents) or percent_off_bp (basis points), not both")
	}
	if r.GetPercent != nil && r.GetPercentBP != nil {
		return models.Template{}, models.Invalid("get_percent_bp", "give get_percent (whole percents) or get_percent_bp (basis points), not both")
	}
	for i, tier := range r.Tiers {
		if tier.PercentOff != 0 && tier.PercentOffBP != 0 {
			return models.Template{}, models.Invalid(fmt.Sprintf("tiers[%d].percent_off_bp", i), "give percent_off (whole percents) or percent_off_bp (basis points), not both")
		}
	}
	own := r.action(*r.Kind)
	t := own.AsTemplate()
	t.CampaignID, t.Name = *r.CampaignID, *r.Name
	t.TotalStock, t.PerUserLimit = *r.TotalStock, *r.PerUserLimit
	t.MinOrderCents, t.MinQuantity, t.ValidDays = valueOf(r.MinOrderCents), valueOf(r.MinQuantity), valueOf(r.ValidDays)
	t.Priority = models.DefaultPriority
	if r.Priority != nil {
		t.Priority = *r.Priority
	}
	for _, a := range r.Actions {
		t.Actions = append(t.Actions, a.action(a.Kind))
	}
	if c := r.Condition; c != nil {
		t.Condition = &models.TemplateCondition{MinQuantity: c.MinQuantity, MinAmountCents: c.MinAmountCents, Repeat: c.Repeat}
		if c.Target != nil {
			t.Condition.Target = models.TemplateTarget(*c.Target)
		}
	}
	t.Currency, t.Description, t.Eligibility = valueOf(r.Currency), valueOf(r.Description), valueOf(r.Eligibility)
	t.RefundPolicy, t.ExtendOnRefund = valueOf(r.RefundPolicy), valueOf(r.ExtendOnRefund)
	t.Status, t.Stacking, t.CodeMode, t.SharedCode = valueOf(r.Status), valueOf(r.Stacking), valueOf(r.CodeMode), valueOf(r.SharedCode)
	starts, err := web.ParseTime("claim_starts_at", r.ClaimStartsAt)
	if err != nil {
		return t, err
	}
	if starts != nil {
		t.ClaimStartsAt = *starts
	}
	if t.ClaimEndsAt, err = web.ParseTime("claim_ends_at", r.ClaimEndsAt); err != nil {
		return t, err
	}
	if t.ValidFrom, err = web.ParseTime("valid_from", r.ValidFrom); err != nil {
		return t, err
	}
	if t.ValidUntil, err = web.ParseTime("valid_until", r.ValidUntil); err != nil {
		return t, err
	}
	return t, nil
}

func (s *Server) createTemplate(c *gin.Context) {
	var req createTemplateRequest
	if !web.BindJSON(c, &req) {
		return
	}
	t, err := req.template()
	if err != nil {
		web.RespondError(c, err)
		return
	}
	out, err := s.admin.CreateTemplate(c.Request.Context(), web.Principal(c).Name, t)
	web.Answer(c, err, http.StatusCreated, "ok", templateAnswer{Template: valueOf(out)})
}

// listTemplates lists the templates on offer (active, claim window open,
// coupons still valid); an admin may ask for all with ?all=1.
func (s *Server) listTemplates(c *gin.Context) {
	after, limit, ok := pageQuery(c)
	if !ok {
		return
	}
	all := c.Query("all") == "1"
	if all {
		// No credentials is 401 and the wrong role 403, as requireRole answers.
		switch p := web.Principal(c); {
		case p == nil:
			web.RespondError(c, &models.Error{Code: models.CodeUnauthorized, Message: "only admins see paused templates: log in or send an API token"})
			return
		case p.Role != models.RoleAdmin:
			web.RespondError(c, &models.Error{Code: models.CodeUnauthorized, Forbidden: true, Message: "only admins see paused templates"})
			return
		}
	}
	out, err := s.core.ListTemplates(c.Request.Context(), !all)
	if err != nil {
		web.RespondError(c, err)
		return
	}
	page, next := pageOf(out, func(x *core.TemplateView) int64 { return x.ID }, after, limit)
	web.Respond(c, http.StatusOK, "ok", templatesAnswer{Templates: page, Next: Next{next}})
}

func (s *Server) getTemplate(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	// Others than admins see only what the list shows them: a template not
	// on offer yet is not found, as an id that does not exist.
	view := s.core.ViewOffer
	if p := web.Principal(c); p != nil && p.Role == models.RoleAdmin {
		view = s.core.ViewTemplate
	}
	out, err := view(c.Request.Context(), id)
	if err != nil {
		web.RespondError(c, err)
		return
	}
	web.Respond(c, http.StatusOK, "ok", templateStockAnswer{Template: out.Template, Remaining: out.Remaining})
}

// updateTemplateRequest holds what PATCH may change. A field left out keeps
// its value; null removes claim_ends_at and is refused for the fields that
// cannot be empty, rather than read as left out.
type updateTemplateRequest struct {
	Name          web.Optional[string] `json:"name" schema:"name" doc:"1-100 characters on one line, without control characters, characters that change the text direction or U+FFFD"`
	Description   web.Optional[string] `json:"description" schema:"template_description" doc:"at most 2000 characters; line breaks (\\n or \\r\\n) but no other control characters, nor direction overrides or U+FFFD"`
	ClaimStartsAt web.Optional[string] `json:"claim_starts_at" format:"date-time" doc:"RFC 3339"`
	ClaimEndsAt   web.Optional[string] `json:"claim_ends_at" nullable:"true" format:"date-time" doc:"RFC 3339, or null to remove the end"`
	Status        web.Optional[string] `json:"status" schema:"template_status" doc:"archived is final"`
	CodeMode      web.Optional[string] `json:"code_mode" schema:"code_mode" doc:"back to unique drops the shared code"`
	SharedCode    web.Optional[string] `json:"shared_code" schema:"shared_code"`
	Eligibility   web.Optional[string] `json:"eligibility" schema:"eligibility" doc:"the template's eligibility rule (docs/eligibility.md); \"\" admits every customer; binds the checkouts after the change"`
}

// patch converts the request, naming the first malformed field.
func (r *updateTemplateRequest) patch() (admin.TemplatePatch, error) {
	var p admin.TemplatePatch
	var starts *string
	err := web.FirstErr(r.Name.NotNull("name", &p.Name), r.Description.NotNull("description", &p.Description),
		r.ClaimStartsAt.NotNull("claim_starts_at", &starts), r.Status.NotNull("status", &p.Status),
		r.CodeMode.NotNull("code_mode", &p.CodeMode), r.SharedCode.NotNull("shared_code", &p.SharedCode),
		r.Eligibility.NotNull("eligibility", &p.Eligibility))
	if err != nil {
		return p, err
	}
	if p.ClaimStartsAt, err = web.ParseTime("claim_starts_at", starts); err != nil {
		return p, err
	}
	switch {
	case r.ClaimEndsAt.Null:
		p.ClearClaimEndsAt = true
	case r.ClaimEndsAt.Set:
		if p.ClaimEndsAt, err = web.ParseTime("claim_ends_at", &r.ClaimEndsAt.Value); err != nil {
			return p, err
		}
	}
	return p, nil
}

func (s *Server) updateTemplate(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	var req updateTemplateRequest
	if !web.BindJSON(c, &req) {
		return
	}
	p, err := req.patch()
	if err != nil {
		web.RespondError(c, err)
		return
	}
	out, err := s.admin.UpdateTemplate(c.Request.Context(), web.Principal(c).Name, id, p)
	web.Answer(c, err, http.StatusOK, "ok", templateAnswer{Template: valueOf(out)})
}

type addStockRequest struct {
	Delta  *int64  `json:"delta" binding:"required" schema:"stock_delta" doc:"stock to add, 1..10,000,000; total_stock stays at most 10,000,000"`
	Reason *string `json:"reason" binding:"required" schema:"reason" doc:"why, for the audit log: 1-500 characters on one line, without control characters, characters that change the text direction or U+FFFD"`
}

func (s *Server) addStock(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	var req addStockRequest
	if !web.BindJSON(c, &req) {
		return
	}
	out, err := s.admin.AddStock(c.Request.Context(), web.Principal(c).Name, id, *req.Delta, *req.Reason)
	web.Answer(c, err, http.StatusOK, "ok", templateAnswer{Template: valueOf(out)})
}

// deleteTemplate deletes a template that never issued a coupon
// (docs/flows.md#delete).
func (s *Server) deleteTemplate(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	err := s.admin.DeleteTemplate(c.Request.Context(), web.Principal(c).Name, id)
	web.Answer(c, err, http.StatusOK, "ok", web.NoPayload{})
}
