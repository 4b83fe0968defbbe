package main

import (
	"os"
	"regexp"
	"sort"
	"testing"
)

// TestEveryVariableInTheREADME: every COUPON_* variable couponsvc reads has
// its row in the README's configuration table.
func TestEveryVariableInTheREADME(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var read []string
	files, _ := os.ReadDir(".")
	for _, f := range files {
		name := f.Name()
		if len(name) < 3 || name[len(name)-3:] != ".go" || regexp.MustCompile(`_test\.go$`).MatchString(name) {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`getenv\("(COUPON_[A-Z_]+)"\)`).FindAllSubmatch(src, -1) {
			read = append(read, string(m[1]))
		}
	}
	sort.Strings(read)
	if len(read) < 20 {
		t.Fatalf("found only %d variables read: %v", len(read), read)
	}
	for _, v := range read {
		if !regexp.MustCompile("(?m)^\\| `" + v + "` \\|").Match(readme) {
			t.Errorf("%s is read but has no row in the README's configuration table", v)
		}
	}
	t.Logf("%d variables, each in the README", len(read))
}
