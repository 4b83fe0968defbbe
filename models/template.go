package models

import (
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/couponsvc/couponsvc/models/eligibility"
)

// Template kinds, refund policies and statuses (see docs/README.md).
const (
	KindFixed        = "fixed"
	KindPercent      = "percent"
	KindFixedPerItem = "fixed_per_item" // face_value_cents off each targeted unit
	KindBuyXGetY     = "buy_x_get_y"    // of each set of buy+get units, get_percent off the get cheapest
	KindTiered       = "tiered"         // the highest of tiers met on the targeted subtotal
	KindFreeShipping = "free_shipping"  // the shipping, up to max_discount_cents

	AppliesToOrder    = "order"    // every discountable line
	AppliesToItems    = "items"    // the lines target selects
	AppliesToShipping = "shipping" // the shipping

	RefundRestore = "restore" // a refunded coupon goes back to its holder
	RefundRecycle = "recycle" // a refunded coupon is revoked and its slot returns to the pool

	StackingExclusive  = "exclusive"  // the only coupon on its order
	StackingCombinable = "combinable" // may share an order with other combinable coupons

	TemplateActive = "active"
	TemplatePaused = "paused"
	// TemplateArchived is final: the template takes no claims again and its
	// shared code is free for another template (docs/shared-codes.md).
	TemplateArchived = "archived"

	UnitsCheapest = "cheapest" // a bounded coupon discounts the cheapest units first
	UnitsDearest  = "dearest"  // ... or the dearest

	CodeModeUnique = "unique" // a code per claimed coupon
	CodeModeShared = "shared" // one code every shopper types at checkout
	// CodeModeAutomatic is an offer with no code: it applies to every cart
	// it admits (docs/automatic-offers.md).
	CodeModeAutomatic = "automatic"
)

// Bounds of a template (see docs/README.md).
const (
	MaxTotalStock      = 10_000_000
	MaxPerUserLimit    = 100
	MaxValidDays       = 3650
	MaxMoneyCents      = 100_000_000_000 // one billion in currency units
	MaxDescriptionRune = 2000
	// MaxEligibilityRunes bounds a template's eligibility rule.
	MaxEligibilityRunes = eligibility.MaxRuleLen
)

// Template describes a kind of coupon: its value, its stock, who may claim how
// many, when, and how long the coupons stay valid.
type Template struct {
	ID             int64  `gorm:"primaryKey" json:"id"`
	CampaignID     int64  `json:"campaign_id"`
	Name           string `json:"name"`
	Description    string `json:"description"`
	Kind           string `json:"kind" schema:"template_kind"`
	FaceValueCents int64  `json:"face_value_cents"`
	PercentOff     int64  `json:"percent_off"`
	// PercentOffBP is the percent kind's percent in basis points (0.01%):
	// Validate sets it from PercentOff when only that is given, and sets
	// PercentOff to it when it is a whole percent (else 0).
	PercentOffBP     int64      `json:"percent_off_bp"`
	MaxDiscountCents int64      `json:"max_discount_cents"`
	MinOrderCents    int64      `json:"min_order_cents"`
	TotalStock       int64      `json:"total_stock"`
	PerUserLimit     int64      `json:"per_user_limit"`
	ClaimStartsAt    time.Time  `json:"claim_starts_at"`
	ClaimEndsAt      *time.Time `json:"claim_ends_at"`
	ValidFrom        *time.Time `json:"valid_from"`
	ValidUntil       *time.Time `json:"valid_until"`
	ValidDays        int64      `json:"valid_days"`
	RefundPolicy     string     `json:"refund_policy" schema:"refund_policy"`
	ExtendOnRefund   bool       `json:"extend_on_refund"`
	Stacking         string     `json:"stacking" schema:"stacking"`
	CodeMode         string     `json:"code_mode" schema:"code_mode"`
	// SharedCode is the code of a shared template, upper case (see
	// ParseSharedCode); empty in code mode unique.
	SharedCode string `json:"shared_code,omitempty"`
	// What the template applies to and its kind's fields (docs/pricing.md).
	AppliesTo   string         `json:"applies_to" schema:"applies_to"`
	Target      TemplateTarget `gorm:"serializer:json" json:"target"`
	MinQuantity int64          `json:"min_quantity"`
	BuyQuantity int64          `json:"buy_quantity"`
	GetQuantity int64          `json:"get_quantity"`
	GetPercent  int64          `json:"get_percent"`
	// GetPercentBP is GetPercent in basis points, set as PercentOffBP is.
	GetPercentBP    int64  `json:"get_percent_bp"`
	MaxApplications int64  `json:"max_applications"`
	Tiers           []Tier `gorm:"serializer:json" json:"tiers,omitempty"`
	// FullPriceOnly skips the lines the shop marked down (compare-at price
	// above the price), as if the template did not target them.
	FullPriceOnly bool `json:"full_price_only"`
	// MaxUnitsPerLine and MaxUnitsPerOrder bound the units the coupon
	// discounts (0: no bound), UnitOrder says which first (UnitsCheapest,
	// the default with a bound, or UnitsDearest; empty without one).
	MaxUnitsPerLine  int64  `json:"max_units_per_line"`
	MaxUnitsPerOrder int64  `json:"max_units_per_order"`
	UnitOrder        string `json:"unit_order,omitempty"`
	// Actions are the template's further actions, each priced after the
	// ones before it on what they left, its own kind fields being the
	// first (docs/pricing.md, "Several actions"); none for a template of
	// one action.
	Actions []TemplateAction `gorm:"serializer:json" json:"actions,omitempty"`
	// Condition is what the cart must hold for the coupons to apply at
	// all, apart from what they discount (nil: none; docs/pricing.md,
	// "Conditions"). Its column is cart_condition: CONDITION is a reserved
	// word in MySQL.
	Condition *TemplateCondition `gorm:"column:cart_condition;serializer:json" json:"condition,omitempty"`
	// Priority orders the coupons of one order: lower first (0..1000).
	Priority int64 `json:"priority"`
	// Eligibility is a rule over the customer, the order, the channel and
	// the time ('' admits everyone), compiled when saved
	// (docs/eligibility.md).
	Eligibility string `json:"eligibility,omitempty"`
	// Currency is the ISO 4217 code of the template's amounts.
	Currency  string    `json:"currency"`
	Status    string    `json:"status" schema:"template_status"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// TemplateTarget selects the lines of an items template: a line matches
// when it meets any include list (or every line when none is given) and no
// exclude list (docs/pricing.md).
type TemplateTarget struct {
	SKUs               []string `json:"skus,omitempty" schema:"target_list"`
	ProductIDs         []string `json:"product_ids,omitempty" schema:"target_list"`
	CategoryIDs        []string `json:"category_ids,omitempty" schema:"target_list"`
	ExcludeSKUs        []string `json:"exclude_skus,omitempty" schema:"target_list"`
	ExcludeProductIDs  []string `json:"exclude_product_ids,omitempty" schema:"target_list"`
	ExcludeCategoryIDs []string `json:"exclude_category_ids,omitempty" schema:"target_list"`
}

// Tier is one step of a tiered template: from MinCents of targeted
// subtotal, OffCents off or a percent of the targeted lines (one of them),
// PercentOff in whole percents or PercentOffBP in basis points (set as the
// template's PercentOffBP is).
type Tier struct {
	MinCents     int64 `json:"min_cents" schema:"tier_min"`
	OffCents     int64 `json:"off_cents,omitempty" schema:"money"`
	PercentOff   int64 `json:"percent_off,omitempty" schema:"tier_percent"`
	PercentOffBP int64 `json:"percent_off_bp,omitempty" schema:"percent_bp"`
	// MinQuantity makes a quantity tier: from so many targeted units,
	// instead of MinCents (docs/pricing.md, "Kinds").
	MinQuantity int64 `json:"min_quantity,omitempty" schema:"min_quantity"`
}

// BasisPoints is the tier's percent in basis points (0 for an amount tier).
func (t *Tier) BasisPoints() int64 { return basisPoints(t.PercentOff, t.PercentOffBP) }

// PercentBasisPoints is the percent kind's percent in basis points
// (10,000 is 100%), from percent_off_bp or else percent_off.
func (t *Template) PercentBasisPoints() int64 { return basisPoints(t.PercentOff, t.PercentOffBP) }

// GetPercentBasisPoints is buy_x_get_y's get percent in basis points.
func (t *Template) GetPercentBasisPoints() int64 { return basisPoints(t.GetPercent, t.GetPercentBP) }

// basisPoints is bp when set, else the whole percent times 100: the rule
// services/pricing applies to the same two fields (docs/pricing.md,
// "Percents").
func basisPoints(whole, bp int64) int64 {
	if bp != 0 {
		return bp
	}
	return whole * 100
}

// ValueCents is the budget value of one coupon, the most it can take off an
// order: its face value (fixed) or its discount cap (every other kind, where
// Validate requires one), so that a campaign's budget stays exact.
// A template of several actions adds up the value of each.
func (t *Template) ValueCents() int64 {
	v := t.MaxDiscountCents
	if t.Kind == KindFixed {
		v = t.FaceValueCents
	}
	for i := range t.Actions {
		v += t.Actions[i].ValueCents()
	}
	return v
}

// Validate checks every bound of a template (docs/README.md, and
// docs/pricing.md for the kinds and targets) and names every field at
// fault, the first in Field (see FieldErrors): a form hears of all its
// mistakes at once. Defaults: claim_starts_at now, refund_policy restore,
// stacking exclusive, code_mode unique, status active, applies_to order
// (shipping for free_shipping). A shared code is normalised to upper case;
// each target list is sorted and its repeats dropped. An empty currency is
// left empty: the service sets the deployment's.
func (t *Template) Validate() error {
	var errs FieldErrors
	t.Name = strings.TrimSpace(t.Name)
	errs.Add(CheckTemplateText(t.Name, t.Description))
	if t.CampaignID <= 0 {
		errs.Add(Invalid("campaign_id", "is required"))
	}
	t.validatePricing(&errs)
	if t.MinOrderCents < 0 || t.MinOrderCents > MaxMoneyCents {
		errs.Add(Invalid("min_order_cents", "must be between 0 and %d", int64(MaxMoneyCents)))
	}
	if t.TotalStock < 1 || t.TotalStock > MaxTotalStock {
		errs.Add(Invalid("total_stock", "must be between 1 and %d", MaxTotalStock))
	}
	if t.PerUserLimit < 1 || t.PerUserLimit > MaxPerUserLimit {
		errs.Add(Invalid("per_user_limit", "must be between 1 and %d", MaxPerUserLimit))
	}
	t.validateWindows(&errs)
	errs.Add(CheckEligibility(t.Eligibility))
	errs.Add(eitherOr("refund_policy", &t.RefundPolicy, RefundRestore, RefundRecycle))
	errs.Add(eitherOr("stacking", &t.Stacking, StackingExclusive, StackingCombinable))
	errs.Add(t.validateCodeMode())
	if t.Status != TemplateArchived {
		errs.Add(eitherOr("status", &t.Status, TemplateActive, TemplatePaused))
	}
	return errs.Err()
}

// Channels is every channel a checkout request may name for the
// eligibility rules (docs/eligibility.md).
var Channels = []string{eligibility.ChannelWeb, eligibility.ChannelTill, eligibility.ChannelAPI}

// CheckEligibility compiles a template's eligibility rule, refusing one
// that does not compile or costs too much with the field eligibility and
// the position of the fault (docs/eligibility.md).
func CheckEligibility(rule string) error {
	if _, err := eligibility.Compile(rule); err != nil {
		return Invalid("eligibility", "%s", err.Error())
	}
	return nil
}

// CheckTemplateText checks a template's name (trimmed) and description as
// Validate does, naming each at fault: an edit form checks them with the rest
// of what was typed when a date cannot be read.
func CheckTemplateText(name, description string) error {
	var errs FieldErrors
	errs.Add(validateName("name", strings.TrimSpace(name)))
	if utf8.RuneCountInString(description) > MaxDescriptionRune {
		errs.Add(Invalid("description", "must be valid text of at most %d characters", MaxDescriptionRune))
	} else {
		errs.Add(CheckText("description", description, MultiLine))
	}
	return errs.Err()
}

// validateCodeMode checks code_mode and shared_code together.
func (t *Template) validateCodeMode() error {
	switch t.CodeMode {
	case "":
		t.CodeMode = CodeModeUnique
	case CodeModeUnique, CodeModeShared, CodeModeAutomatic:
	default:
		return Invalid("code_mode", "must be %q, %q or %q", CodeModeUnique, CodeModeShared, CodeModeAutomatic)
	}
	if t.CodeMode != CodeModeShared {
		if t.SharedCode != "" {
			return Invalid("shared_code", `is only for code_mode "shared"`)
		}
		return nil
	}
	if t.SharedCode == "" {
		return Invalid("shared_code", `is required with code_mode "shared"`)
	}
	code, err := ParseSharedCode("shared_code", t.SharedCode)
	if err != nil {
		return err
	}
	t.SharedCode = code
	return nil
}

// eitherOr sets an empty *v to def, and refuses any value but def and other.
func eitherOr(field string, v *string, def, other string) error {
	switch *v {
	case "":
		*v = def
	case def, other:
	default:
		return Invalid(field, "must be %q or %q", def, other)
	}
	return nil
}

func (t *Template) validateWindows(errs *FieldErrors) {
	if t.ClaimEndsAt != nil && !t.ClaimEndsAt.After(t.ClaimStartsAt) {
		errs.Add(Invalid("claim_ends_at", "must be after claim_starts_at"))
	}
	absolute := t.ValidFrom != nil || t.ValidUntil != nil
	switch {
	case absolute && t.ValidDays != 0:
		errs.Add(Invalid("valid_days", "give either valid_days or valid_from and valid_until, not both"))
	case absolute:
		if t.ValidFrom == nil {
			errs.Add(Invalid("valid_from", "is required with valid_until"))
		}
		if t.ValidUntil == nil {
			errs.Add(Invalid("valid_until", "is required with valid_from"))
		}
		if t.ValidFrom != nil && t.ValidUntil != nil && !t.ValidUntil.After(*t.ValidFrom) {
			errs.Add(Invalid("valid_until", "must be after valid_from"))
		}
	default:
		if t.ValidDays < 1 || t.ValidDays > MaxValidDays {
			errs.Add(Invalid("valid_days", "must be between 1 and %d (or give valid_from and valid_until)", MaxValidDays))
		}
	}
}

// ValidityFor returns the validity window of a coupon claimed at claimedAt.
// A coupon claimed on day D (of the deployment's time zone loc) and valid N
// days is valid until the end of day D+N: the midnight that starts day
// D+N+1 there (docs/time.md).
func (t *Template) ValidityFor(claimedAt time.Time, loc *time.Location) (from, until time.Time) {
	if t.ValidDays > 0 {
		return claimedAt, EndOfDays(claimedAt, int(t.ValidDays), loc)
	}
	return *t.ValidFrom, *t.ValidUntil
}

// EndOfDays returns the end of the day n days after t's day in loc: the
// first instant of the day after, in UTC. A day starts at its first
// instant, also when its midnight is skipped by a change of the clocks.
func EndOfDays(t time.Time, n int, loc *time.Location) time.Time {
	y, m, d := t.In(loc).Date()
	return StartOfDay(y, m, d+n+1, loc)
}

// StartOfDay returns the first instant of the day y-m-d (normalised as
// time.Date does) in loc, in UTC. Where the clocks skip midnight that day
// (some zones change at 00:00), it is the first instant after the gap.
func StartOfDay(y int, m time.Month, d int, loc *time.Location) time.Time {
	y, m, d = time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Date() // normalised
	t := time.Date(y, m, d, 0, 0, 0, 0, loc)
	// time.Date may answer an instant of the day before for a midnight in a
	// gap; the day starts at the end of the gap, at most a few hours on.
	for t.In(loc).Day() != d {
		t = t.Add(15 * time.Minute).Truncate(15 * time.Minute)
	}
	return t.UTC()
}

// Why a template takes no claims (see ClaimRefusal). The claim script in
// Redis answers with the same words.
const (
	RefusedPaused = "paused"
	// RefusedCampaignPaused: the template is active, its campaign paused.
	RefusedCampaignPaused = "campaign_paused"
	RefusedNotYet         = "not_yet" // before claim_starts_at
	RefusedClosed         = "closed"  // at or after claim_ends_at
	RefusedExpired        = "expired" // at or after an absolute valid_until
	RefusedArchived       = "archived"
)

// ClaimRefusal is the one rule of when a template takes claims, stock and
// limits aside: it returns "" when it does at now, else why not (a Refused
// word) and the time the reason refers to (zero for paused). A template
// with absolute validity takes no claim from valid_until on, whatever its
// claim window says: the coupon would be born expired.
func (t *Template) ClaimRefusal(now time.Time) (reason string, at time.Time) {
	switch {
	case t.Status == TemplateArchived:
		return RefusedArchived, time.Time{}
	case t.Status != TemplateActive:
		return RefusedPaused, time.Time{}
	case now.Before(t.ClaimStartsAt):
		return RefusedNotYet, t.ClaimStartsAt
	case t.ClaimEndsAt != nil && !now.Before(*t.ClaimEndsAt):
		return RefusedClosed, *t.ClaimEndsAt
	case t.ValidDays == 0 && t.ValidUntil != nil && !now.Before(*t.ValidUntil):
		return RefusedExpired, *t.ValidUntil
	}
	return "", time.Time{}
}

// Claimable returns nil when the template takes claims at now, else a
// CodeNotClaimable error that says why (see ClaimRefusal).
func (t *Template) Claimable(now time.Time) error {
	if reason, at := t.ClaimRefusal(now); reason != "" {
		return NotClaimable(reason, at)
	}
	return nil
}

// NotClaimable returns the CodeNotClaimable error of a ClaimRefusal.
func NotClaimable(reason string, at time.Time) *Error {
	when := at.UTC().Format(time.RFC3339)
	switch reason {
	case RefusedNotYet:
		return Errorf(CodeNotClaimable, "claims open at %s", when)
	case RefusedClosed:
		return Errorf(CodeNotClaimable, "claims closed at %s", when)
	case RefusedExpired:
		return Errorf(CodeNotClaimable, "claims closed at %s, when the coupons stopped being valid", when)
	case RefusedArchived:
		return Errorf(CodeNotClaimable, "this coupon is archived")
	}
	if reason == RefusedCampaignPaused {
		return Errorf(CodeNotClaimable, "this coupon's campaign is paused")
	}
	return Errorf(CodeNotClaimable, "this coupon is paused")
}

// ErrBornExpired marks (with errors.Is) a template refused because coupons
// claimed in its claim window would already be expired.
var ErrBornExpired = errors.New("coupons would be born expired")

// ValidateIssuable refuses a template with absolute validity whose coupons
// would be born expired: valid_until at or before now, before claims open,
// or before claims close. It names the field to change: valid_until when it
// has passed, else the end of the claim window that outlasts it.
func (t *Template) ValidateIssuable(now time.Time) error {
	if t.ValidDays != 0 || t.ValidUntil == nil {
		return nil
	}
	until := *t.ValidUntil
	when := until.UTC().Format(time.RFC3339)
	bad := func(field, format string, args ...any) error {
		e := Invalid(field, format, args...)
		e.Err = ErrBornExpired
		return e
	}
	switch {
	case !until.After(now):
		return bad("valid_until", "has passed (%s): every coupon claimed would be born expired", when)
	case !until.After(t.ClaimStartsAt):
		return bad("claim_starts_at", "must be before valid_until (%s): every coupon claimed would be born expired", when)
	case t.ClaimEndsAt != nil && t.ClaimEndsAt.After(until):
		return bad("claim_ends_at", "must not be after valid_until (%s): coupons claimed after it would be born expired", when)
	}
	return nil
}

// Discount returns the discount of a coupon of this template on an order, in
// cents: fixed min(face, amount); percent floor(amount*bp/10000) capped. It is
// the amount-only rule kept for the tests that compare services/pricing
// with it (see Price); no production code calls it.
func (t *Template) Discount(orderAmountCents int64) int64 {
	if t.Kind == KindPercent {
		return min(t.UncappedDiscount(orderAmountCents), t.MaxDiscountCents)
	}
	return min(t.FaceValueCents, orderAmountCents)
}

// UncappedDiscount is the discount before a percent coupon's cap,
// floor(amount*bp/10000), so that a checkout can say when the cap cut it;
// for a fixed coupon it is Discount.
func (t *Template) UncappedDiscount(orderAmountCents int64) int64 {
	if t.Kind == KindPercent {
		// amount <= MaxMoneyCents and bp <= 10,000 keep the product far from overflow.
		return orderAmountCents * t.PercentBasisPoints() / 10_000
	}
	return t.Discount(orderAmountCents)
}
