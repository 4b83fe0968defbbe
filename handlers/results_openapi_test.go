package handlers_test

import (
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// resultWord is a result word as the OpenAPI document writes it.
var resultWord = regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)

// declaredWords reads the result words a response's description declares:
// "claimed", "redeemed or duplicate", "invalid_request: the body is..." name
// words; a description in prose ("This document") names none.
func declaredWords(description string) []string {
	head, _, _ := strings.Cut(description, ":")
	words := strings.Split(head, " or ")
	for _, w := range words {
		if !resultWord.MatchString(w) {
			return nil
		}
	}
	return words
}

// dryRuns are the operations that answer, with 200 and code 0, the word
// another operation would answer: validate answers the word the hold would
// (docs/checkout.md#validate).
var dryRuns = map[string]string{"POST /api/v1/checkout/validate": "POST /api/v1/holds"}

// TestOpenAPIResultWords: every result word the OpenAPI document declares, in
// an operation's answers, its x-error-results or the shared error responses,
// is a row of models.Results whose statuses include the status it is declared
// under: a success word (code 0 or 1) under a 2xx, an error word under a 4xx
// or 5xx.
func TestOpenAPIResultWords(t *testing.T) {
	doc := testsupport.FetchOpenAPI(t, testsupport.NewAPIEnv(t))
	rows := map[string][]models.Result{}
	for _, r := range models.Results {
		rows[r.Word] = append(rows[r.Word], r)
	}
	// check reports a word declared under status by where that no row allows.
	check := func(where string, status int, word string) {
		t.Helper()
		for _, r := range rows[word] {
			success := r.Code == models.CodeOK || r.Code == models.CodeDuplicate
			if success == (status < 400) && slices.Contains(r.Statuses(), status) {
				return
			}
		}
		t.Errorf("%s: %s under %d, which models.Results does not give it (%v)", where, word, status, rows[word])
	}
	statusOf := func(where, key string) int {
		t.Helper()
		status, err := strconv.Atoi(key)
		if err != nil {
			t.Fatalf("%s: response %q", where, key)
		}
		return status
	}

	// Every operation's words by status, to check the dry runs against.
	declared := map[string]map[int][]string{}
	checked := 0
	var ops []string
	for path, methods := range doc.Paths {
		for method, op := range methods {
			ops = append(ops, strings.ToUpper(method)+" "+path)
			where := strings.ToUpper(method) + " " + path
			words := map[int][]string{}
			declared[where] = words
			responses, _ := op["responses"].(map[string]any)
			for key, resp := range responses {
				resp := resp.(map[string]any)
				if _, isRef := resp["$ref"]; isRef {
					continue // a shared response, checked below
				}
				if content, _ := resp["content"].(map[string]any); content["application/json"] == nil {
					continue // no result body: HTML, a redirect, CSV, text
				}
				description, _ := resp["description"].(string)
				status := statusOf(where, key)
				words[status] = append(words[status], declaredWords(description)...)
			}
			lines, _ := op["x-error-results"].([]any)
			for _, l := range lines {
				key, list, ok := strings.Cut(l.(string), ": ")
				if !ok {
					t.Errorf("%s: x-error-results line %q", where, l)
					continue
				}
				status := statusOf(where, key)
				words[status] = append(words[status], strings.Split(list, ", ")...)
			}
		}
	}
	sort.Strings(ops)
	for _, where := range ops {
		for status, list := range declared[where] {
			for _, w := range list {
				checked++
				if other, ok := dryRuns[where]; ok && status == 200 && w != "ok" {
					// A verdict: the word the other operation answers as an error.
					if !slices.ContainsFunc([]int{404, 409, 422}, func(s int) bool { return slices.Contains(declared[other][s], w) }) {
						t.Errorf("%s: %s under 200, which %s does not answer", where, w, other)
					}
					continue
				}
				check(where, status, w)
			}
		}
	}
	components := doc.Raw["components"].(map[string]any)["responses"].(map[string]any)
	for key, resp := range components {
		description, _ := resp.(map[string]any)["description"].(string)
		for _, w := range declaredWords(description) {
			checked++
			check("components/responses/"+key, statusOf(key, key), w)
		}
	}
	// Many routes declare their words; a document that declares few was not
	// read.
	if checked < 300 {
		t.Errorf("only %d declared words checked", checked)
	}
	t.Logf("%d declared words checked in %d operations", checked, len(ops))
}

// TestResultTakenUsername: a username that is taken is answered as every
// other field at fault, 400 invalid_request naming it, as the document says.
func TestResultTakenUsername(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	body := `{"username":"dana","password":"long enough pw","role":"cashier"}`
	e.MustCall(t, 201, "POST", "/api/v1/users", testsupport.AdminToken, body)
	out := e.MustCall(t, 400, "POST", "/api/v1/users", testsupport.AdminToken, body)
	if out["code"] != float64(3) || out["result"] != "invalid_request" || out["field"] != "username" ||
		out["error"] != "username: is taken" {
		t.Fatalf("a taken username: %v", out)
	}
}
