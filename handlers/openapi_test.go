package handlers_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/handlers"
	"github.com/couponsvc/couponsvc/internal/testsupport"
)

// TestOpenAPIMatchesRouter fails when a route of the router is missing from
// the document, or the document names a route that does not exist.
func TestOpenAPIMatchesRouter(t *testing.T) {
	e := &testsupport.APIEnv{Fixture: testsupport.NewFixture(t)}
	router := e.Router
	doc := testsupport.FetchOpenAPI(t, e)

	pages := map[string]bool{}
	for _, rt := range handlers.RouteTable() {
		if rt.Page || rt.Asset {
			pages[rt.Method+" "+rt.Path] = true
		}
	}
	routes := map[string]bool{}
	for _, r := range router.Routes() {
		if pages[r.Method+" "+r.Path] {
			continue // pages are for people: not in the API's document
		}
		path := testsupport.GinParam.ReplaceAllString(r.Path, "{$1}")
		key := r.Method + " " + path
		routes[key] = true
		if doc.Paths[path][strings.ToLower(r.Method)] == nil {
			t.Errorf("the route %s %s is missing from the OpenAPI document", r.Method, r.Path)
		}
	}
	var documented []string
	for path, ops := range doc.Paths {
		for method := range ops {
			key := strings.ToUpper(method) + " " + path
			documented = append(documented, key)
			if !routes[key] {
				t.Errorf("the OpenAPI document names %s, which is not a route", key)
			}
		}
	}
	sort.Strings(documented)
	t.Logf("%d routes, %d documented operations", len(routes), len(documented))
}

// TestOpenAPIDocument checks the document's own consistency: version, unique
// operation ids, path parameters declared, every $ref resolving, a success
// answer for every operation.
func TestOpenAPIDocument(t *testing.T) {
	doc := testsupport.FetchOpenAPI(t, testsupport.NewAPIEnv(t))
	if doc.Raw["openapi"] != "3.0.3" {
		t.Fatalf("openapi %v", doc.Raw["openapi"])
	}
	ids := map[string]string{}
	for path, ops := range doc.Paths {
		inPath := map[string]bool{}
		for _, m := range regexp.MustCompile(`\{([^}]+)\}`).FindAllStringSubmatch(path, -1) {
			inPath[m[1]] = true
		}
		for method, op := range ops {
			where := strings.ToUpper(method) + " " + path
			id, _ := op["operationId"].(string)
			if id == "" || ids[id] != "" {
				t.Errorf("%s: operationId %q missing or also used by %s", where, id, ids[id])
			}
			ids[id] = where
			// A generated client names its methods after them: a verb and
			// a noun in camel case, as the handler is named.
			if !regexp.MustCompile(`^[a-z]+[A-Z][A-Za-z]*$|^(healthz|readyz)$`).MatchString(id) {
				t.Errorf("%s: operationId %q is not a camel-case name like createTemplate", where, id)
			}
			declared := map[string]bool{}
			params, _ := op["parameters"].([]any)
			for _, p := range params {
				p := p.(map[string]any)
				if p["in"] == "path" {
					declared[p["name"].(string)] = true
					if p["required"] != true {
						t.Errorf("%s: path parameter %v not required", where, p["name"])
					}
				}
			}
			if fmt.Sprint(declared) != fmt.Sprint(inPath) {
				t.Errorf("%s: path parameters declared %v, in the path %v", where, declared, inPath)
			}
			responses, _ := op["responses"].(map[string]any)
			ok := false
			for status := range responses {
				ok = ok || status[0] == '2' || status[0] == '3'
			}
			if !ok {
				t.Errorf("%s: no success answer in %v", where, responses)
			}
			if op["summary"] == "" || op["tags"] == nil {
				t.Errorf("%s: no summary or tags", where)
			}
		}
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if r, ok := v["$ref"].(string); ok {
				if testsupport.ResolveRef(doc.Raw, r) == nil {
					t.Errorf("$ref %s does not resolve", r)
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc.Raw)
}

// jsonType is the JSON Schema type a decoded field of Go type t takes.
func jsonType(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if m, ok := reflect.PointerTo(t).MethodByName("ValueType"); ok && m.Type.NumIn() == 1 {
		t = reflect.New(t).MethodByName("ValueType").Call(nil)[0].Interface().(reflect.Type)
	}
	switch {
	case reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()):
		return "" // reads its own JSON: the field's tags say what
	case t.Kind() == reflect.String:
		return "string"
	case t.Kind() == reflect.Bool:
		return "boolean"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return "integer"
	case t.Kind() == reflect.Slice:
		return "array"
	case t.Kind() == reflect.Struct || t.Kind() == reflect.Map:
		return "object"
	}
	return "?"
}

// TestOpenAPIRequestBodies checks each documented request body against the
// struct its handler decodes: every json field documented with its type, no
// other, required exactly where binding:"required" says, nullable exactly for
// the optional pointers; and no body documented where the handler reads none.
func TestOpenAPIRequestBodies(t *testing.T) {
	doc := testsupport.FetchOpenAPI(t, testsupport.NewAPIEnv(t))
	bodies := 0
	for _, rt := range handlers.RouteTable() {
		where := rt.Method + " " + rt.Path
		schema := doc.RequestBodySchema(rt.Method, rt.Path)
		if rt.Request == nil {
			if schema != nil {
				t.Errorf("%s: a request body is documented, the handler reads none", where)
			}
			continue
		}
		bodies++
		if schema == nil {
			t.Errorf("%s: the request body (%s) is not documented", where, rt.Request)
			continue
		}
		if schema["type"] != "object" || schema["additionalProperties"] != false {
			t.Errorf("%s: the body must be an object without other properties: %v", where, schema)
		}
		props, _ := schema["properties"].(map[string]any)
		var required []string
		seen := map[string]bool{}
		// The fields as the decoder sees them: those of an embedded struct
		// too (cartFields), in place of the embedded struct itself.
		for _, f := range reflect.VisibleFields(rt.Request) {
			if f.Anonymous && f.Tag.Get("json") == "" && f.Type.Kind() == reflect.Struct {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				t.Errorf("%s: %s.%s has no json name", where, rt.Request, f.Name)
				continue
			}
			seen[name] = true
			isRequired := f.Tag.Get("binding") == "required"
			if isRequired {
				required = append(required, name)
			}
			p, ok := props[name].(map[string]any)
			if !ok {
				t.Errorf("%s: the field %s (%s) is not documented", where, name, f.Type)
				continue
			}
			want := jsonType(f.Type)
			if want == "" && p["type"] == nil {
				t.Errorf("%s: %s (%s) reads its own JSON: give it a format or schema tag saying what", where, name, f.Type)
			}
			if want != "" && p["type"] != want {
				t.Errorf("%s: %s is documented as %v, the struct reads %s (%s)", where, name, p["type"], want, f.Type)
			}
			nullable := f.Type.Kind() == reflect.Pointer && !isRequired || f.Tag.Get("nullable") == "true"
			if (p["nullable"] == true) != nullable {
				t.Errorf("%s: %s nullable %v, want %v", where, name, p["nullable"], nullable)
			}
			if p["description"] == nil && p["enum"] == nil {
				t.Errorf("%s: %s has neither a description nor an enumeration", where, name)
			}
		}
		for name := range props {
			if !seen[name] {
				t.Errorf("%s: %s is documented but not a field of %s", where, name, rt.Request)
			}
		}
		var documented []string
		reqs, _ := schema["required"].([]any)
		for _, r := range reqs {
			documented = append(documented, r.(string))
		}
		sort.Strings(required)
		sort.Strings(documented)
		if fmt.Sprint(required) != fmt.Sprint(documented) {
			t.Errorf("%s: required %v documented, %v tagged", where, documented, required)
		}
	}
	if bodies == 0 {
		t.Fatal("no route with a request body")
	}
	t.Logf("%d request bodies checked", bodies)
}

// TestOpenAPIRequiredFieldsEnforced sends each route's body with all the
// fields the table's struct marks required but one, and wants that one named
// in a 400: binding:"required" is documentation, so this keeps it honest.
func TestOpenAPIRequiredFieldsEnforced(t *testing.T) {
	r := testsupport.NewRig(t, handlers.Options{})
	code := r.Coupon("alice")
	e := &testsupport.APIEnv{Fixture: r.Fixture}
	before := e.Counts(t)
	checked := 0
	for _, rt := range handlers.RouteTable() {
		if rt.Request == nil || len(rt.Roles) == 0 {
			continue
		}
		values := map[string]any{}
		var names []string
		for i := range rt.Request.NumField() {
			f := rt.Request.Field(i)
			if f.Tag.Get("binding") != "required" {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			names = append(names, name)
			switch jsonType(f.Type) {
			case "integer":
				values[name] = 1
			case "boolean":
				values[name] = false
			case "array":
				values[name] = []string{"x"}
			default:
				values[name] = "x"
			}
		}
		target := strings.NewReplacer(":id", fmt.Sprint(r.TemplateID), ":code", code).Replace(rt.Path)
		q := r.Credentials(callers[rt.Roles[0]][0], "")
		for _, missing := range names {
			body := map[string]any{}
			for k, v := range values {
				if k != missing {
					body[k] = v
				}
			}
			b, _ := json.Marshal(body)
			q.Method, q.Target, q.Body = rt.Method, target, string(b)
			q.Headers = map[string]string{"Idempotency-Key": "required-" + rt.Method + rt.Path + "-" + missing}
			a := r.Do(q)
			checked++
			if a.Status != 400 || a.Body["field"] != missing {
				t.Errorf("%s %s without %s: %v, want 400 naming %s", rt.Method, target, missing, a, missing)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no required field checked")
	}
	if after := e.Counts(t); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("refused requests changed rows: %v → %v", before, after)
	}
	t.Logf("%d required fields checked", checked)
}

// TestOpenAPIRoles checks that the document names for each operation the
// roles of the table, which TestSecurityMatrix checks the router enforces.
func TestOpenAPIRoles(t *testing.T) {
	doc := testsupport.FetchOpenAPI(t, testsupport.NewAPIEnv(t))
	for _, rt := range handlers.RouteTable() {
		path := testsupport.GinParam.ReplaceAllString(rt.Path, "{$1}")
		op := doc.Paths[path][strings.ToLower(rt.Method)]
		if rt.Page || rt.Asset {
			if op != nil {
				t.Errorf("the page %s %s is in the API's document", rt.Method, rt.Path)
			}
			continue
		}
		if op == nil {
			t.Errorf("%s %s is not documented", rt.Method, rt.Path)
			continue
		}
		var documented []string
		if roles, ok := op["x-roles"].([]any); ok {
			for _, r := range roles {
				documented = append(documented, r.(string))
			}
		}
		if fmt.Sprint(documented) != fmt.Sprint(rt.Roles) {
			t.Errorf("%s %s: x-roles %v, the table says %v", rt.Method, rt.Path, documented, rt.Roles)
		}
		// Every operation declares its security: public ones none ([]), the
		// API's without a role optional credentials, the others a token or
		// the session.
		security, declared := op["security"].([]any)
		if !declared || (len(security) == 0) != (!rt.API && rt.Roles == nil) {
			t.Errorf("%s %s: security %v, but roles %v", rt.Method, rt.Path, op["security"], rt.Roles)
		}
		if rt.Roles != nil && !strings.Contains(fmt.Sprint(op["description"]), "Role: "+strings.Join(rt.Roles, ", ")+".") {
			t.Errorf("%s %s: the description does not name the roles %v: %v", rt.Method, rt.Path, rt.Roles, op["description"])
		}
	}
}
