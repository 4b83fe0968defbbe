package web

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// indexedField names the value of body that a type error at offset is
// about with its array indices ("lines[0].quantity"), where encoding/json
// names only the keys ("lines.quantity"): the last value before offset whose
// path without indices is field. It answers field when it finds none.
func indexedField(body []byte, field string, offset int64) string {
	type level struct {
		array   bool
		next    int    // array: the index of the next element
		index   int    // array: the index of the element being read
		key     string // object: the key of the value being read
		haveKey bool   // object: the key was read, its value not yet begun
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var stack []level
	best := field
	for dec.InputOffset() < offset {
		tok, err := dec.Token()
		if err != nil {
			return best
		}
		if d, ok := tok.(json.Delim); ok && (d == ']' || d == '}') {
			stack = stack[:len(stack)-1]
			continue
		}
		if n := len(stack); n > 0 && !stack[n-1].array && !stack[n-1].haveKey {
			key, _ := tok.(string)
			stack[n-1].key, stack[n-1].haveKey = key, true
			continue
		}
		// tok begins a value.
		if n := len(stack); n > 0 {
			if top := &stack[n-1]; top.array {
				top.index = top.next
				top.next++
			} else {
				top.haveKey = false
			}
		}
		var path, plain strings.Builder
		for _, l := range stack {
			if l.array {
				path.WriteString("[" + strconv.Itoa(l.index) + "]")
				continue
			}
			if plain.Len() > 0 {
				plain.WriteByte('.')
			}
			if path.Len() > 0 {
				path.WriteByte('.')
			}
			path.WriteString(l.key)
			plain.WriteString(l.key)
		}
		if plain.String() == field && path.Len() > 0 {
			best = path.String()
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, level{array: d == '['})
		}
	}
	return best
}
