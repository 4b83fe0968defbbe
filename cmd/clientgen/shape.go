package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/couponsvc/couponsvc/models"
)

// enumNames names each enumeration of the document by its values (sorted,
// joined by commas): its Go type in the client, whose constants oapi-codegen
// prefixes with the type's name (TemplateKindFixed, AppliesToOrder). An
// enumeration this table does not know stops the generator, so that a new
// one gets a name rather than an anonymous type.
var enumNames = map[string]string{
	enumKey(models.TemplateKinds...):                                                                               "TemplateKind",
	enumKey(models.AppliesToValues...):                                                                             "AppliesTo",
	enumKey(models.RefundRestore, models.RefundRecycle):                                                            "RefundPolicy",
	enumKey(models.TemplateActive, models.TemplatePaused, models.TemplateArchived):                                 "TemplateStatus",
	enumKey(models.CodeModeUnique, models.CodeModeShared, models.CodeModeAutomatic):                                "CodeMode",
	enumKey(models.CampaignActive, models.CampaignPaused):                                                          "CampaignStatus",
	enumKey(models.RevokePublicReasonKeys()...):                                                                    "RevokeReason",
	enumKey(models.StackingExclusive, models.StackingCombinable):                                                   "Stacking",
	enumKey(models.RoleAdmin, models.RoleCashier, models.RoleApp):                                                  "TokenRole",
	enumKey(models.RoleShopper, models.RoleCashier, models.RoleAdmin):                                              "UserRole",
	enumKey(models.CouponIssued, models.CouponHeld, models.CouponUsed, models.CouponRevoked, models.CouponExpired): "CouponStatus",
	enumKey(models.EventTypes...):                                                                                  "EventType",
	enumKey(models.UnitsCheapest, models.UnitsDearest):                                                             "UnitOrder",
	enumKey(models.ChooseValues...):                                                                                "Choose",
	enumKey(models.LeftOutReasons...):                                                                              "LeftOutReason",
	enumKey(models.Channels...):                                                                                    "Channel",
}

func enumKey(values ...string) string {
	v := append([]string(nil), values...)
	sort.Strings(v)
	return strings.Join(v, ",")
}

// goNames renames fields whose JSON name reads wrong as a Go name, by
// schema and property: a checkout's coupon carries a result code beside the
// coupon's code.
var goNames = map[[2]string]string{
	{"CheckoutCoupon", "code"}: "ResultCode",
}

// goTypeNames give the objects the document describes in place (with
// their limits) the Go type of the same object elsewhere, by schema and
// property: a template's target is one type, sent and read.
var goTypeNames = map[[2]string]string{
	{"CreateTemplateRequest", "target"}:    "TemplateTarget",
	{"CreateTemplateRequest", "condition"}: "TemplateCondition",
}

// goShape rewrites the document's component schemas into the shape the Go
// types are made from: every string enumeration becomes a named schema the
// properties refer to (a typed field, in a request and in an answer alike),
// goNames are set as x-go-name and goTypeNames as x-go-type. The document the service serves is
// left as it is: these are the Go client's names.
func goShape(doc map[string]any) error {
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	enums := map[string]any{}
	var hoist func(s map[string]any) (map[string]any, error)
	hoist = func(s map[string]any) (map[string]any, error) {
		if items, ok := s["items"].(map[string]any); ok {
			h, err := hoist(items)
			if err != nil {
				return nil, err
			}
			s["items"] = h
			return s, nil
		}
		values, ok := s["enum"].([]any)
		if !ok || s["type"] != "string" {
			return s, nil
		}
		strs := make([]string, len(values))
		for i, v := range values {
			strs[i] = v.(string)
		}
		name, ok := enumNames[enumKey(strs...)]
		if !ok {
			return nil, fmt.Errorf("the enumeration %v has no Go name in cmd/clientgen/shape.go", strs)
		}
		enums[name] = map[string]any{"type": "string", "enum": values}
		return map[string]any{"$ref": "#/components/schemas/" + name}, nil
	}
	for name, s := range schemas {
		props, _ := s.(map[string]any)["properties"].(map[string]any)
		for prop, p := range props {
			h, err := hoist(p.(map[string]any))
			if err != nil {
				return fmt.Errorf("%s.%s: %w", name, prop, err)
			}
			if goName, ok := goNames[[2]string{name, prop}]; ok {
				h["x-go-name"] = goName
			}
			if typeName, ok := goTypeNames[[2]string{name, prop}]; ok {
				h["x-go-type"] = typeName
			}
			props[prop] = h
		}
	}
	for name, e := range enums {
		if _, taken := schemas[name]; taken {
			return fmt.Errorf("the enumeration %s is also a schema's name", name)
		}
		schemas[name] = e
	}
	return nil
}
