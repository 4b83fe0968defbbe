package web

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"time"
	"unicode"
)

var (
	timeType        = reflect.TypeFor[time.Time]()
	jsonMarshaler   = reflect.TypeFor[json.Marshaler]()
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
)

// components are the named schemas of the document: each named struct type
// of a request or an answer has one, and every other place it appears refers
// to it ($ref), so that a type reads the same wherever it is used.
type components struct {
	schemas map[string]any
	// bounds are the deployment's values of field schemas, by name, set
	// over fieldSchemas' (OpenAPIJSON).
	bounds map[string]map[string]any
	// kinds remembers which type (and how it is read) each name stands for:
	// two types of one name would be one schema, a bug caught by any test.
	kinds map[string]componentKind
}

type componentKind struct {
	t               reflect.Type
	request, answer bool
}

func newComponents() *components {
	return &components{schemas: map[string]any{}, kinds: map[string]componentKind{}, bounds: map[string]map[string]any{}}
}

// componentName is a type's schema name: its Go name, capitalised.
func componentName(t reflect.Type) string {
	r := []rune(t.Name())
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// named returns a reference to the component schema of the named struct t,
// made on first use. An answer's schema (the type a route row names as its
// Answer) has the fields of Envelope before the type's own.
func (cs *components) named(t reflect.Type, request, answer bool) map[string]any {
	if t.Name() == "" || t.Kind() != reflect.Struct {
		panic("couponsvc: a request or answer must be a named struct type, not " + t.String()) // a bug caught by any test
	}
	name := componentName(t)
	kind := componentKind{t: t, request: request, answer: answer}
	if prev, ok := cs.kinds[name]; ok {
		if prev != kind {
			panic("couponsvc: two schemas named " + name + ": " + prev.t.String() + " and " + t.String() +
				" (or one type both as a request, an answer or a field)") // a bug caught by any test
		}
		return ref(name)
	}
	cs.kinds[name] = kind
	cs.schemas[name] = map[string]any{} // a type that contains itself refers to this
	s := cs.typeSchema(t, request)
	if answer {
		envelope := cs.typeSchema(reflect.TypeFor[Envelope](), false)
		props := s["properties"].(map[string]any)
		for k, v := range envelope["properties"].(map[string]any) {
			props[k] = v
		}
		req, _ := s["required"].([]string)
		req = append(req, envelope["required"].([]string)...)
		sort.Strings(req)
		s["required"] = req
	}
	cs.schemas[name] = s
	return ref(name)
}

// ownJSON tells a type that writes (in an answer) or reads (in a request) its
// own JSON, such as json.RawMessage: its Go type says nothing of the JSON.
func ownJSON(t reflect.Type, request bool) bool {
	if request {
		return reflect.PointerTo(t).Implements(jsonUnmarshaler)
	}
	return t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler)
}

// schemaOf is the schema of a field's type: a reference to the component
// schema of a named struct, or the type's own schema.
func (cs *components) schemaOf(t reflect.Type, request bool) map[string]any {
	if t.Kind() == reflect.Struct && t.Name() != "" && t != timeType && !ownJSON(t, request) {
		return cs.named(t, request, false)
	}
	return cs.typeSchema(t, request)
}

// typeSchema derives a JSON schema from a Go type the way encoding/json renders
// or reads it: json tags, "-" (left out), embedded structs (their fields
// inlined, shadowed by the outer ones), doc:"..." tags (descriptions). In an
// answer a field is required unless omitempty and a pointer is nullable; in a
// request (a body decoded strictly, no other fields allowed) a field is
// required when tagged binding:"required", and an optional pointer field is
// nullable (null reads as left out).
func (cs *components) typeSchema(t reflect.Type, request bool) map[string]any {
	switch {
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case t.Kind() == reflect.Pointer:
		s := cs.schemaOf(t.Elem(), request)
		if _, isRef := s["$ref"]; isRef {
			return map[string]any{"type": "object", "nullable": true, "allOf": []any{s}} // OpenAPI 3.0 ignores whatever stands beside a $ref
		}
		return nullable(s)
	case ownJSON(t, request):
		return map[string]any{} // any JSON value; the field's format or schema tag says which
	case t.Kind() == reflect.Slice:
		return arrayOf(cs.schemaOf(t.Elem(), request))
	case t.Kind() == reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": cs.schemaOf(t.Elem(), request)}
	case t.Kind() == reflect.Struct:
		props := map[string]any{}
		required := map[string]bool{}
		cs.structFields(t, props, required, request, true)
		var req []string
		for name := range required {
			req = append(req, name)
		}
		sort.Strings(req)
		return object(props, req...)
	case t.Kind() == reflect.Bool:
		return map[string]any{"type": "boolean"}
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return map[string]any{"type": "integer", "format": "int64"}
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return map[string]any{"type": "number"}
	case t.Kind() == reflect.String:
		return map[string]any{"type": "string"}
	}
	return map[string]any{}
}

// structFields adds the fields of t. An embedded pointer to a struct may be
// nil, and then its fields are left out: none of them is required (present
// false).
func (cs *components) structFields(t reflect.Type, props map[string]any, required map[string]bool, request, present bool) {
	// Embedded structs first, so that the outer struct's fields shadow theirs.
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Tag.Get("json") == "" {
			switch {
			case f.Type.Kind() == reflect.Struct:
				cs.structFields(f.Type, props, required, request, present)
			case f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct:
				cs.structFields(f.Type.Elem(), props, required, request, false)
			}
		}
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		embedded := f.Anonymous && tag == "" &&
			(f.Type.Kind() == reflect.Struct || f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct)
		if !f.IsExported() || tag == "-" || embedded {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		isRequired := present && !strings.Contains(opts, "omitempty")
		if request {
			isRequired = f.Tag.Get("binding") == "required"
		}
		if isRequired {
			required[name] = true
		} else {
			delete(required, name)
		}
		props[name] = cs.fieldSchema(f, request, isRequired)
	}
}

// fieldSchema is the schema of a struct field with what its tags add.
func (cs *components) fieldSchema(f reflect.StructField, request, isRequired bool) map[string]any {
	t := f.Type
	if request && t.Kind() == reflect.Pointer {
		t = t.Elem() // nullable only when optional, below
	}
	if o, ok := reflect.Zero(t).Interface().(optionalField); ok {
		t = o.ValueType() // documented as its value; nullable when tagged so, below
	}
	s := cs.schemaOf(t, request)
	if _, isRef := s["$ref"]; isRef {
		return s // OpenAPI 3.0 ignores whatever stands beside a $ref
	}
	if _, isRef := s["allOf"]; isRef {
		return s // a nullable reference
	}
	if format := f.Tag.Get("format"); format != "" {
		s["type"], s["format"] = "string", format // a time kept as text, say: still nullable when a pointer
	}
	if name := f.Tag.Get("schema"); name != "" {
		extra, ok := fieldSchemas[name]
		if !ok {
			panic("couponsvc: no field schema " + name + " for " + f.Name) // a bug caught by any test
		}
		for k, v := range extra {
			s[k] = v
		}
		for k, v := range cs.bounds[name] {
			s[k] = v
		}
	}
	if doc := f.Tag.Get("doc"); doc != "" {
		s["description"] = doc
	}
	if f.Tag.Get("deprecated") == "true" {
		s["deprecated"] = true // a field kept for the integrations that read it; its doc says what replaces it
	}
	if request && s["format"] == "date-time" {
		// A time a request names is in the years' range (models.ParseTime).
		s["pattern"] = YearPattern
		if desc, _ := s["description"].(string); desc != "" {
			s["description"] = desc + "; " + TimeRule
		} else {
			s["description"] = TimeRule
		}
	}
	if request && (f.Type.Kind() == reflect.Pointer && !isRequired || f.Tag.Get("nullable") == "true") {
		s["nullable"] = true
	}
	return s
}
