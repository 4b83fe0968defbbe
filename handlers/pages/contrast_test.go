package pages_test

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/templates"
)

// contrastPairs are the colour pairs of the pages that must be told apart,
// by WCAG 2.1: text 4.5:1 (small grey text included), the borders of
// controls, the focus ring and chart marks 3:1 (non-text contrast). Each
// names custom properties of app.css's :root, or #hex colours.
var contrastPairs = []struct {
	fg, bg string
	min    float64
	what   string
}{
	{"--ink", "--bg", 4.5, "text on the page"},
	{"--ink", "--card", 4.5, "text on a card"},
	{"--ink-2", "--card", 4.5, "secondary text"},
	{"--ink-3", "--bg", 4.5, "small grey text on the page"},
	{"--ink-3", "--card", 4.5, "small grey text on a card"},
	{"--ink-3", "--brand-soft", 4.5, "small grey text on a highlighted row"},
	{"--value", "--card", 4.5, "an offer's value on its card"},
	{"--value", "--bg", 4.5, "an offer's value on the page"},
	{"--brand", "--card", 4.5, "links"},
	{"--brand", "--bg", 4.5, "links on the page"},
	{"#ffffff", "--brand", 4.5, "primary button text"},
	{"#ffffff", "--err", 4.5, "danger button text"},
	{"--err", "--card", 4.5, "field errors"},
	{"--err", "--err-soft", 4.5, "error notices and badges"},
	{"--ok", "--ok-soft", 4.5, "open and issued badges"},
	{"--warn", "--warn-soft", 4.5, "paused and expired badges"},
	{"--control-border", "--card", 3, "input and button borders"},
	{"--control-border", "--bg", 3, "input and button borders on the page"},
	{"--err", "#fffafa", 3, "the border of a field with an error"},
	{"--focus", "--card", 3, "the focus ring"},
	{"--focus", "--bg", 3, "the focus ring on the page"},
	{"--chart-claims", "--card", 3, "chart bars: claims"},
	{"--chart-redemptions", "--card", 3, "chart bars: redemptions"},
	{"--chart-refunded", "--card", 3, "chart bars: refunded discounts"},
	{"--chart-axis", "--card", 4.5, "chart axis labels"},
}

// contrastRules are the rules that must draw with those properties, so that
// a colour written into a rule by hand does not slip past the pairs.
var contrastRules = map[string][]string{
	`.button {`: {"border: 1px solid var(--control-border)"},
	`input[type="text"], input[type="password"]`: {"border: 1px solid var(--control-border)"},
	`.choice { padding`:                          {"border: 1px solid var(--control-border)"},
	`.button:focus-visible`:                      {"outline: 3px solid var(--focus)"},
	`.muted {`:                                   {"color: var(--ink-3)"},
	`.chart .axis {`:                             {"fill: var(--chart-axis)"},
	`.chart .bar-claims {`:                       {"fill: var(--chart-claims)"},
	`.chart .bar-redemptions {`:                  {"fill: var(--chart-redemptions)"},
	`.chart .baseline {`:                         {"stroke: var(--control-border)"},
	`.has-error input`:                           {"border-color: var(--err)"},
	`.field-error {`:                             {"color: var(--err)"},
}

// TestContrast parses the stylesheet's custom properties and checks the
// WCAG contrast ratio of every declared pair, and that the rules use them.
func TestContrast(t *testing.T) {
	b, err := templates.FS.ReadFile("static/app.css")
	if err != nil {
		t.Fatal(err)
	}
	css := string(b)
	root := regexp.MustCompile(`(?s):root\s*\{(.*?)\n\}`).FindStringSubmatch(css)
	if root == nil {
		t.Fatal("no :root block in app.css")
	}
	props := map[string]string{}
	for _, m := range regexp.MustCompile(`(--[\w-]+)\s*:\s*([^;]+);`).FindAllStringSubmatch(root[1], -1) {
		props[m[1]] = strings.TrimSpace(m[2])
	}
	colour := func(name string) [3]float64 {
		t.Helper()
		v := name
		for i := 0; strings.HasPrefix(v, "--") || strings.HasPrefix(v, "var("); i++ {
			v = strings.TrimSuffix(strings.TrimPrefix(v, "var("), ")")
			got, ok := props[v]
			if !ok || i > 5 {
				t.Fatalf("%s: no custom property %s in :root", name, v)
			}
			v = got
		}
		rgb, err := parseHex(v)
		if err != nil {
			t.Fatalf("%s = %q: %v", name, v, err)
		}
		return rgb
	}
	for _, p := range contrastPairs {
		ratio := contrastRatio(colour(p.fg), colour(p.bg))
		if ratio < p.min {
			t.Errorf("%s: %s on %s is %.2f:1, want %.1f:1 or better", p.what, p.fg, p.bg, ratio, p.min)
		} else {
			t.Logf("%s: %s on %s is %.2f:1", p.what, p.fg, p.bg, ratio)
		}
	}
	for start, decls := range contrastRules {
		i := strings.Index(css, start)
		if i < 0 {
			t.Errorf("app.css has no rule starting %q", start)
			continue
		}
		end := strings.Index(css[i:], "}")
		body := css[i : i+end]
		for _, d := range decls {
			if !strings.Contains(body, d) {
				t.Errorf("the rule %q does not say %q:\n%s", start, d, body)
			}
		}
	}
	// The ratio itself, against the values WCAG's own examples give.
	if r := contrastRatio([3]float64{0, 0, 0}, [3]float64{255, 255, 255}); math.Abs(r-21) > 1e-9 {
		t.Fatalf("black on white = %v, want 21", r)
	}
	if r := contrastRatio([3]float64{0x77, 0x77, 0x77}, [3]float64{255, 255, 255}); math.Abs(r-4.48) > 0.01 {
		t.Fatalf("#777 on white = %.3f, want 4.48", r)
	}
}

// parseHex reads #rgb or #rrggbb.
func parseHex(s string) ([3]float64, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "#")
	if len(s) == 3 {
		s = string([]byte{s[0], s[0], s[1], s[1], s[2], s[2]})
	}
	if len(s) != 6 {
		return [3]float64{}, fmt.Errorf("not a #hex colour")
	}
	var out [3]float64
	for i := range 3 {
		v, err := strconv.ParseUint(s[2*i:2*i+2], 16, 8)
		if err != nil {
			return out, err
		}
		out[i] = float64(v)
	}
	return out, nil
}

// contrastRatio is WCAG 2.1's (L1 + 0.05) / (L2 + 0.05) of the relative
// luminances, the lighter over the darker.
func contrastRatio(a, b [3]float64) float64 {
	lum := func(c [3]float64) float64 {
		var l [3]float64
		for i, v := range c {
			v /= 255
			if v <= 0.03928 {
				l[i] = v / 12.92
			} else {
				l[i] = math.Pow((v+0.055)/1.055, 2.4)
			}
		}
		return 0.2126*l[0] + 0.7152*l[1] + 0.0722*l[2]
	}
	la, lb := lum(a), lum(b)
	return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
}
