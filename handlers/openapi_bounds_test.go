package handlers_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/handlers"
)

// statedBound is a bound a description states in words: "1..100",
// "1-100 characters", "1 to 5 codes", "at most 2000", "up to 10^12".
type statedBound struct {
	lower, upper *float64
	text         string
}

var (
	boundNumber = `(\d[\d,_]*(?:\^\d+)?)`
	// A range: "1..100", "1-100", "5 to 86400"; an upper bound alone: "at most
	// 200", "up to 10^12". The word after it says what is counted.
	rangeBound = regexp.MustCompile(`(?:^|[^\w.^-])` + boundNumber + `\s*(?:\.\.|-|\s+to\s+)\s*` + boundNumber + `(\s+[a-z]+)?`)
	upperBound = regexp.MustCompile(`\b(?:at most|up to)\s+` + boundNumber + `(\s+[a-z]+)?`)
)

// parseBoundNumber reads "10,000,000", "1_000" or "10^12".
func parseBoundNumber(t *testing.T, s string) *float64 {
	s = strings.NewReplacer(",", "", "_", "").Replace(s)
	var f float64
	if base, exp, ok := strings.Cut(s, "^"); ok {
		b, err1 := strconv.ParseFloat(base, 64)
		e, err2 := strconv.Atoi(exp)
		if err1 != nil || err2 != nil {
			t.Fatalf("bound %q does not read as a number", s)
		}
		f = 1
		for range e {
			f *= b
		}
	} else {
		var err error
		if f, err = strconv.ParseFloat(s, 64); err != nil {
			t.Fatalf("bound %q does not read as a number", s)
		}
	}
	return &f
}

// notSchemaUnits are counted otherwise than a schema keyword counts: maxLength
// counts characters, not bytes; a number of days "from from" compares two
// values.
var notSchemaUnits = map[string]bool{"bytes": true, "days": true}

// yearsRule is the range of years of a date or time, which its pattern
// carries (TestOpenAPIRequestBoundsCarried checks it).
var yearsRule = regexp.MustCompile(`the years \d+ to \d+`)

func statedBounds(t *testing.T, desc string) []statedBound {
	var out []statedBound
	desc = yearsRule.ReplaceAllString(desc, "")
	for _, m := range rangeBound.FindAllStringSubmatch(desc, -1) {
		if notSchemaUnits[strings.TrimSpace(m[3])] || m[1]+"-"+m[2] == "0-9" && strings.Contains(desc, "a-z 0-9") {
			continue // the digits of a set of characters, "A-Z a-z 0-9"
		}
		out = append(out, statedBound{lower: parseBoundNumber(t, m[1]), upper: parseBoundNumber(t, m[2]), text: strings.TrimSpace(m[0])})
	}
	for _, m := range upperBound.FindAllStringSubmatch(desc, -1) {
		if notSchemaUnits[strings.TrimSpace(m[2])] {
			continue
		}
		out = append(out, statedBound{upper: parseBoundNumber(t, m[1]), text: m[0]})
	}
	return out
}

// keywordsOf names the schema keywords that carry a lower and an upper bound
// for a schema of the given type.
func keywordsOf(schema map[string]any) (lower, upper string) {
	switch schema["type"] {
	case "string":
		return "minLength", "maxLength"
	case "array":
		return "minItems", "maxItems"
	case "integer", "number":
		return "minimum", "maximum"
	}
	return "", ""
}

// boundsOfOneCase are the places whose description states a bound for one
// case only, which the schema cannot say without saying it of all: whether
// the lower bound alone (upper false) or both.
var boundsOfOneCase = map[string]struct{ upper bool }{
	// "percent: 1..100": the other kinds (and a percent given in the other
	// field) send 0, which the schema allows.
	"CreateTemplateRequest.percent_off":    {upper: false},
	"CreateTemplateRequest.percent_off_bp": {upper: false},
	"CreateTemplateRequest.get_percent_bp": {upper: false},
	"ActionRequest.percent_off":            {upper: false}, // an action's kind fields are the template's
	"ActionRequest.percent_off_bp":         {upper: false},
	"ActionRequest.get_percent_bp":         {upper: false},
	"TierRequest.percent_off":              {upper: false},
	"TierRequest.percent_off_bp":           {upper: false},
	"TierRequest.min_cents":                {upper: false},
	// "a shared code: 4-32 letters": the field takes a coupon code too.
	"RedeemRequest.coupon_code":      {upper: true},
	"HoldRequest.coupon_codes[]":     {upper: true},
	"ValidateRequest.coupon_codes[]": {upper: true},
}

// TestOpenAPIStatedBoundsAreKeywords fails when the description of a request
// property or parameter states a numeric bound ("at most N", "N..M", "N-M",
// "1 to N", "up to N") that its schema's keywords do not carry with the same
// value, so that a client generated from the document checks what the
// service enforces.
func TestOpenAPIStatedBoundsAreKeywords(t *testing.T) {
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(handlers.OpenAPIDocument(), &doc); err != nil {
		t.Fatal(err)
	}
	type place struct {
		name   string
		schema map[string]any
		desc   string
	}
	var places []place
	// The schemas a request reads: those of request bodies, and every schema
	// they refer to.
	requestSchemas := map[string]bool{}
	var visit func(v any)
	visit = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				name := strings.TrimPrefix(ref, "#/components/schemas/")
				if !requestSchemas[name] {
					requestSchemas[name] = true
					visit(doc.Components.Schemas[name])
				}
			}
			for _, x := range v {
				visit(x)
			}
		case []any:
			for _, x := range v {
				visit(x)
			}
		}
	}
	for path, ops := range doc.Paths {
		for method, raw := range ops {
			var op struct {
				Parameters []struct {
					Name        string         `json:"name"`
					Description string         `json:"description"`
					Schema      map[string]any `json:"schema"`
				} `json:"parameters"`
				RequestBody map[string]any `json:"requestBody"`
			}
			if json.Unmarshal(raw, &op) != nil {
				continue // not an operation
			}
			for _, p := range op.Parameters {
				desc := p.Description
				if d, _ := p.Schema["description"].(string); d != "" {
					desc += " " + d
				}
				places = append(places, place{fmt.Sprintf("%s %s parameter %s", strings.ToUpper(method), path, p.Name), p.Schema, desc})
			}
			visit(op.RequestBody)
		}
	}
	walkProps := func(prefix string, schema map[string]any) {
		props, _ := schema["properties"].(map[string]any)
		for name, v := range props {
			s := v.(map[string]any)
			desc, _ := s["description"].(string)
			places = append(places, place{prefix + "." + name, s, desc})
			if items, ok := s["items"].(map[string]any); ok {
				d, _ := items["description"].(string)
				places = append(places, place{prefix + "." + name + "[]", items, d})
			}
		}
	}
	for name := range requestSchemas {
		walkProps(name, doc.Components.Schemas[name])
	}
	sort.Slice(places, func(i, j int) bool { return places[i].name < places[j].name })

	checked := 0
	for _, p := range places {
		for _, b := range statedBounds(t, p.desc) {
			checked++
			lowerKey, upperKey := keywordsOf(p.schema)
			if lowerKey == "" {
				t.Errorf("%s states %q, but its schema (type %v) has no keyword for it", p.name, b.text, p.schema["type"])
				continue
			}
			oneCase, isOneCase := boundsOfOneCase[p.name]
			if got, ok := p.schema[upperKey].(float64); (!ok || got != *b.upper) && !oneCase.upper {
				t.Errorf("%s states %q, but its schema has %s %v", p.name, b.text, upperKey, p.schema[upperKey])
			}
			if b.lower != nil && !isOneCase {
				got, ok := p.schema[lowerKey].(float64)
				if !ok && lowerKey != "minimum" {
					got, ok = 0, true // no minLength nor minItems: 0
				}
				if !ok || got != *b.lower {
					t.Errorf("%s states %q, but its schema has %s %v", p.name, b.text, lowerKey, p.schema[lowerKey])
				}
			}
		}
	}
	// The request properties whose bounds this test was written for, at least,
	// and the others stated (order_id, lines, shared_code...).
	if checked < 35 {
		t.Fatalf("checked %d stated bounds, want at least 35: the scan of the document misses places", checked)
	}
}

func TestStatedBoundsParse(t *testing.T) {
	for _, tc := range []struct {
		desc         string
		lower, upper []float64
	}{
		{"1..10,000,000", []float64{1}, []float64{10_000_000}},
		{"1-100 characters on one line", []float64{1}, []float64{100}},
		{"how long the hold lasts: 5 to 86400 seconds (default 900)", []float64{5}, []float64{86400}},
		{"0 (no budget) up to 10^12", nil, []float64{1e12}},
		{"at most 200 characters, at least 16 of them", nil, []float64{200}},
		{"1 to 100,000 user ids", []float64{1}, []float64{100_000}},
		{"ISO 4217; RFC 3339; day D+N; 100 when left out", nil, nil},
		{"at most 394 bytes; at most 31 days from from", nil, nil},
		{"1-64 characters of A-Z a-z 0-9 . _ : @ -", []float64{1}, []float64{64}},
	} {
		var lower, upper []float64
		for _, b := range statedBounds(t, tc.desc) {
			if b.lower != nil {
				lower = append(lower, *b.lower)
			}
			upper = append(upper, *b.upper)
		}
		if fmt.Sprint(lower) != fmt.Sprint(tc.lower) || fmt.Sprint(upper) != fmt.Sprint(tc.upper) {
			t.Errorf("%q: lower %v upper %v, want %v %v", tc.desc, lower, upper, tc.lower, tc.upper)
		}
	}
}
