package eligibility

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCompileErrorsNamePosition(t *testing.T) {
	cases := []struct {
		name, rule   string
		line, column int
		contains     string
	}{
		{"UnknownName", `customer.age > 18`, 1, 10, "age"},
		{"NotBoolean", `customer.orders_count + 1`, 0, 0, "bool"},
		{"SecondLine", "channel == \"web\" &&\n  customer.tags ==", 2, 0, ""},
		{"TypeMismatch", `channel == 3`, 1, 9, "mismatched types"},
		{"DisabledBuiltin", `now() != nil`, 0, 0, ""},
		{"RangeNotLiteral", `any(1..customer.orders_count, # > 2)`, 1, 6, "range"},
		{"RangeTooWide", `any(1..1000, # > 2)`, 1, 6, "range"},
		{"NestedPredicates", `any(customer.tags, any(customer.tags, # == "a"))`, 1, 1, "nest"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Compile(c.rule)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Compile(%q) = %v, want an *Error", c.rule, err)
			}
			if c.line != 0 && e.Line != c.line {
				t.Errorf("line = %d, want %d (%v)", e.Line, c.line, e)
			}
			if c.column != 0 && e.Column != c.column {
				t.Errorf("column = %d, want %d (%v)", e.Column, c.column, e)
			}
			if c.contains != "" && !strings.Contains(e.Error(), c.contains) {
				t.Errorf("error %q does not mention %q", e.Error(), c.contains)
			}
		})
	}
}

func TestCompileCostBound(t *testing.T) {
	long := strings.Repeat("customer.orders_count > 0 && ", 40) + "true"
	if _, err := Compile(long); err == nil || !strings.Contains(err.Error(), "500") {
		t.Fatalf("a rule over %d characters: %v", MaxRuleLen, err)
	}
	many := strings.Repeat("1+", 60) + "1 > 0"
	_, err := Compile(many)
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(e.Message, "exceeds maximum allowed nodes") {
		t.Fatalf("a rule of 121 numbers: %v", err)
	}
	if _, err := Compile(`any(1..100, # == customer.orders_count)`); err != nil {
		t.Fatalf("a range of 100: %v", err)
	}
}

func TestEval(t *testing.T) {
	// Sunday 2026-12-06 08:30 UTC is 09:30 in Paris and Saturday 22:30
	// in Honolulu.
	at := time.Date(2026, 12, 6, 8, 30, 0, 0, time.UTC)
	paris, _ := time.LoadLocation("Europe/Paris")
	honolulu, _ := time.LoadLocation("Pacific/Honolulu")
	vip := Env{Customer: Customer{Tags: []string{"vip", "staff"}, OrdersCount: 3}, Channel: ChannelWeb}
	cases := []struct {
		name, rule string
		env        Env
		want       bool
	}{
		{"Empty", ``, Env{}, true},
		{"TagAndChannel", `"vip" in customer.tags && channel == "web"`, vip, true},
		{"TagMissing", `"vip" in customer.tags && channel == "web"`, Env{Channel: ChannelWeb}, false},
		{"OtherChannel", `"vip" in customer.tags && channel == "web"`, Env{Customer: vip.Customer, Channel: ChannelTill}, false},
		{"FirstOrder", `customer.orders_count == 0`, Env{}, true},
		{"NotFirstOrder", `customer.orders_count == 0`, vip, false},
		{"AnyTag", `any(customer.tags, # startsWith "st")`, vip, true},
		{"CountTags", `count(customer.tags, len(#) > 3) == 1`, vip, true},
		{"Weekday", `now.weekday == 0`, Env{Now: NowIn(at, time.UTC)}, true},
		{"HourParis", `now.hour == 9`, Env{Now: NowIn(at, paris)}, true},
		{"WeekdayHonolulu", `now.weekday == 6 && now.hour == 22`, Env{Now: NowIn(at, honolulu)}, true},
		{"Hours", `now.hour >= 9 && now.hour < 17`, Env{Now: NowIn(at, time.UTC)}, false},
		{"Order", `order.subtotal_cents >= 5000 && order.items > 2 && order.currency == "EUR"`,
			Env{Order: Order{SubtotalCents: 5000, Items: 3, Currency: "EUR"}}, true},
		{"CampaignCounts", `customer.claims_in_campaign < 2 && customer.redemptions_in_campaign == 0`,
			Env{Customer: Customer{ClaimsInCampaign: 1}}, true},
		{"CampaignCountsOver", `customer.claims_in_campaign < 2`, Env{Customer: Customer{ClaimsInCampaign: 2}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prog, err := Compile(c.rule)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Eval(prog, c.env)
			if err != nil || got != c.want {
				t.Fatalf("Eval(%q) = %v, %v; want %v", c.rule, got, err, c.want)
			}
		})
	}
}

func TestEvalRunTimeError(t *testing.T) {
	prog, err := Compile(`customer.tags[3] == "a"`)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := Eval(prog, Env{}); ok || err == nil {
		t.Fatalf("an index past the tags: %v, %v; want false and an error", ok, err)
	}
}

func TestCacheCompilesOnce(t *testing.T) {
	var c Cache
	t0 := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	a, err := c.Program(1, t0, `channel == "web"`)
	if err != nil || a == nil {
		t.Fatal(a, err)
	}
	if b, _ := c.Program(1, t0, `channel == "web"`); b != a {
		t.Fatal("the same template compiled twice")
	}
	b, err := c.Program(1, t0.Add(time.Second), `channel == "till"`)
	if err != nil || b == a {
		t.Fatal("a changed template kept its old program")
	}
	if ok, _ := Eval(b, Env{Channel: ChannelTill}); !ok {
		t.Fatal("the new program is not the new rule")
	}
}
