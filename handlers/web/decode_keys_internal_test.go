package web

import (
	"fmt"
	"testing"
)

var keyBodies = []string{
	`{}`, `{"a":1}`, `{"a":1,"A":2}`, `{"a":{"b":1,"b":2}}`, `{"a":[{"x":1},{"x":2}],"b":"a"}`,
	`{"lines":[{"line_id":"l1","sku":"s","quantity":1,"unit_price_cents":100,"category_ids":["c"]}],"order_id":"o"}`,
	`{"a":"\"a\"","a\u0041":1,"aa":2}`, `{"\u0061":1,"a":2}`, `{"a":1,}`, `{"a":1,"a":2,`, `{"a" 1}`, `{"a":1}{"a":1}`,
	`{"K":1,"k":2}`, `{"\u212a":1,"k":2}`, "{\"\u212a\":1,\"k\":2}", `{"a":tru"e","a":1}`, `{"a":1:2,"a":3}`, `[{"a":1,"a":2}]`,
	`{"a":[1,2,[3,{"b":{"c":null,"C":true}}]]}`, `{"a":-1.5e3,"b":false,"c":null}`, " {\n\t\"a\" : [ ] , \"b\" : { } }\r\n",
	`{"a":"x\\","a":1}`, `{"a":"x\\\"","b":1}`, `"a"`, `1`, ``, `{`, `{"a"`, `{"a":`, `{"a":[`, `{"a":1]`,
}

func deep(n int) string {
	s := ""
	for range n {
		s += `{"a":`
	}
	s += "1"
	for range n {
		s += `,"a":2}`
	}
	return s
}

func manyKeys(n int, dup bool) string {
	s := "{"
	for i := range n {
		s += fmt.Sprintf(`"k%d":%d,`, i, i)
	}
	if dup {
		s += `"K3":0,`
	}
	return s + `"end":0}`
}

// The fast path answers as the token walk does, on every body.
func checkDuplicateKeyAgrees(t *testing.T, body string) {
	got, want := duplicateKey([]byte(body)), duplicateKeyTokens([]byte(body))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("duplicateKey(%q) = %v, the token walk says %v", body, got, want)
	}
}

func TestDuplicateKeyFastPathAgreesWithTheTokenWalk(t *testing.T) {
	bodies := append([]string{deep(10), deep(100), manyKeys(40, false), manyKeys(40, true), manyKeys(5, true)}, keyBodies...)
	for _, b := range bodies {
		checkDuplicateKeyAgrees(t, b)
	}
	if !noDuplicateKey([]byte(keyBodies[5])) {
		t.Error("a cart's body goes to the token walk")
	}
}

func FuzzDuplicateKeyFastPath(f *testing.F) {
	for _, b := range keyBodies {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body string) {
		checkDuplicateKeyAgrees(t, body)
	})
}
