package models

import (
	"strconv"
	"strings"
)

// DetailField is one key=value pair of an audit entry's detail.
type DetailField struct {
	Key, Value string
}

// ParseAuditDetail reads the detail of an audit entry, written by the
// services as space-separated key=value pairs whose values are either bare
// words or Go-quoted strings (reason="shared publicly"), in their order. A
// part that is not a pair (such as "budget" before "drift=3") is kept with an
// empty key.
func ParseAuditDetail(detail string) []DetailField {
	var out []DetailField
	s := strings.TrimSpace(detail)
	for s != "" {
		key, rest, isPair := "", s, false
		if i := strings.IndexAny(s, "= "); i > 0 && s[i] == '=' {
			key, rest, isPair = s[:i], s[i+1:], true
		}
		var value string
		if strings.HasPrefix(rest, `"`) {
			if q, err := strconv.QuotedPrefix(rest); err == nil {
				value, _ = strconv.Unquote(q)
				rest = rest[len(q):]
			} else {
				value, rest = rest, ""
			}
		} else if i := strings.IndexByte(rest, ' '); i >= 0 {
			value, rest = rest[:i], rest[i:]
		} else {
			value, rest = rest, ""
		}
		if !isPair {
			key = ""
		}
		out = append(out, DetailField{Key: key, Value: value})
		s = strings.TrimLeft(rest, " ")
	}
	return out
}

// DetailValue returns the value of key in a parsed detail, and whether it
// is there.
func DetailValue(fields []DetailField, key string) (string, bool) {
	for _, f := range fields {
		if f.Key == key {
			return f.Value, true
		}
	}
	return "", false
}
