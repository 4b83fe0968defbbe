package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// TestPatchTemplateNullable: in a PATCH a field left out keeps its value, null
// removes a field that may be empty (claim_ends_at) and is refused naming the
// field for the others, and a value sets the field; a combination the template
// cannot hold is refused naming the field and changes nothing.
func TestPatchTemplateNullable(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	e.MustCall(t, 201, "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"Spring","budget_cents":0}`)
	e.MustCall(t, 201, "POST", "/api/v1/templates", testsupport.AdminToken,
		`{"campaign_id":1,"name":"Five off","description":"first words","kind":"fixed","face_value_cents":500,"total_stock":10,`+
			`"per_user_limit":2,"valid_days":30,"claim_starts_at":"2026-01-01T00:00:00Z","claim_ends_at":"2030-01-01T00:00:00Z"}`)
	patch := func(t *testing.T, want int, body string) map[string]any {
		t.Helper()
		return e.MustCall(t, want, "PATCH", "/api/v1/templates/1", testsupport.AdminToken, body)
	}
	// state is what a PATCH may change, as GET shows it.
	state := func(t *testing.T) map[string]any {
		t.Helper()
		tp := e.TemplateJSON(t, 1)
		return map[string]any{"name": tp["name"], "description": tp["description"], "claim_starts_at": tp["claim_starts_at"],
			"claim_ends_at": tp["claim_ends_at"], "status": tp["status"], "valid_days": tp["valid_days"],
			"valid_from": tp["valid_from"], "valid_until": tp["valid_until"]}
	}
	want := map[string]any{"name": "Five off", "description": "first words", "claim_starts_at": "2026-01-01T00:00:00Z",
		"claim_ends_at": "2030-01-01T00:00:00Z", "status": "active", "valid_days": float64(30), "valid_from": nil, "valid_until": nil}
	check := func(t *testing.T, what string) {
		t.Helper()
		if got := state(t); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: the template is\n%v\nwant\n%v", what, got, want)
		}
	}
	check(t, "as created")

	t.Run("ClaimEndsAt", func(t *testing.T) {
		patch(t, 200, `{"name":"Renamed"}`)
		want["name"] = "Renamed"
		check(t, "claim_ends_at left out")

		out := patch(t, 200, `{"claim_ends_at":null}`)
		if v, ok := out["template"].(map[string]any)["claim_ends_at"]; !ok || v != nil {
			t.Fatalf("the answer to null shows claim_ends_at %v", v)
		}
		want["claim_ends_at"] = nil
		check(t, "claim_ends_at null")
		patch(t, 200, `{"claim_ends_at":null}`)
		check(t, "claim_ends_at null again")

		patch(t, 200, `{"claim_ends_at":"2031-05-06T07:08:09+02:00"}`)
		want["claim_ends_at"] = "2031-05-06T05:08:09Z"
		check(t, "claim_ends_at set")

		out = patch(t, 400, `{"claim_ends_at":"2025-12-31T00:00:00Z"}`)
		if out["field"] != "claim_ends_at" || out["result"] != "invalid_request" {
			t.Fatalf("claim_ends_at before claim_starts_at: %v", out)
		}
		// Moving the start past the end is refused too, naming the end.
		out = patch(t, 400, `{"claim_starts_at":"2032-01-01T00:00:00Z"}`)
		if out["field"] != "claim_ends_at" {
			t.Fatalf("claim_starts_at after claim_ends_at: %v", out)
		}
		// Both in one request, the end removed: the start may move.
		patch(t, 200, `{"claim_starts_at":"2032-01-01T00:00:00Z","claim_ends_at":null}`)
		want["claim_starts_at"], want["claim_ends_at"] = "2032-01-01T00:00:00Z", nil
		check(t, "claim_starts_at moved, claim_ends_at removed")
		for _, bad := range []string{`5`, `""`, `"tomorrow"`, `{}`} {
			if out := patch(t, 400, `{"claim_ends_at":`+bad+`}`); out["field"] != "claim_ends_at" {
				t.Fatalf("claim_ends_at %s: %v", bad, out)
			}
		}
		check(t, "after the refused values")
	})

	// The fields that cannot be empty: null is refused naming the field
	// (today's encoding/json would read it as left out and answer 200).
	for _, tc := range []struct{ field, value, stored string }{
		{"name", `"Ten off"`, "Ten off"},
		{"description", `"new words"`, "new words"},
		{"claim_starts_at", `"2026-06-01T00:00:00Z"`, "2026-06-01T00:00:00Z"},
		{"status", `"paused"`, "paused"},
	} {
		t.Run(tc.field, func(t *testing.T) {
			out := patch(t, 400, `{"`+tc.field+`":null}`)
			if out["field"] != tc.field || out["result"] != "invalid_request" || out["code"] != float64(3) {
				t.Fatalf("%s null: %v", tc.field, out)
			}
			check(t, tc.field+" null")
			patch(t, 200, `{}`)
			check(t, tc.field+" left out")
			patch(t, 200, `{"`+tc.field+`":`+tc.value+`}`)
			want[tc.field] = tc.stored
			check(t, tc.field+" set")
		})
	}
	patch(t, 200, `{"description":""}`)
	want["description"] = ""
	check(t, "description emptied")

	// The validity is not for PATCH: null is refused as any unknown field.
	for _, field := range []string{"valid_until", "valid_from", "valid_days", "total_stock", "per_user_limit"} {
		if out := patch(t, 400, `{"`+field+`":null}`); out["field"] != field {
			t.Fatalf("%s null: %v", field, out)
		}
	}
	check(t, "after the unknown fields")
}

// TestPagesEditClearsClaimEnd: the edit form removes the end of the claim
// window when its field is left empty, and keeps an end that is typed.
func TestPagesEditClearsClaimEnd(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	admin := e.Client(t)
	admin.Login("admin")
	tpl := e.Template(t, "$5 off")
	edit := fmt.Sprintf("/admin/templates/%d", tpl.ID)
	get := func() *models.Template {
		tp, err := e.Service.GetTemplate(context.Background(), tpl.ID)
		if err != nil {
			t.Fatal(err)
		}
		return tp
	}
	form := url.Values{"name": {"$5 off, edited"}, "description": {""}, "claim_starts_at": {"2026-01-01T09:00"},
		"claim_ends_at": {"2031-02-03T04:05"}}
	if p := admin.Form(edit, edit, form); p.Status != http.StatusSeeOther {
		t.Fatalf("edit with an end: %v", p)
	}
	if tp := get(); tp.ClaimEndsAt == nil || tp.ClaimEndsAt.UTC().Format("2006-01-02 15:04") != "2031-02-03 04:05" || tp.Description != "" {
		t.Fatalf("after setting the end: %v %q", tp.ClaimEndsAt, tp.Description)
	}
	form.Set("claim_ends_at", "  ")
	if p := admin.Form(edit, edit, form); p.Status != http.StatusSeeOther {
		t.Fatalf("edit without an end: %v", p)
	}
	if tp := get(); tp.ClaimEndsAt != nil {
		t.Fatalf("an empty end left %v", tp.ClaimEndsAt)
	}
	// Claims must still open: an empty start is an error beside the field.
	form.Set("claim_starts_at", "")
	if p := admin.Form(edit, edit, form); p.Status != http.StatusBadRequest || testsupport.FieldErrorBeside(p.Body, "edit-starts") == "" {
		t.Fatalf("edit without a start: %v", p)
	}
}
