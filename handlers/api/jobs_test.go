package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/admin"
)

// TestJobsAPI runs a job of each kind through the API: 202 with the job,
// its progress at /api/v1/jobs/:id, its result CSV, and the export.
func TestJobsAPI(t *testing.T) {
	const boot = "jobs-bootstrap-token-0123456789abcdef"
	f := testsupport.NewFixture(t, testsupport.WithBootstrap(boot))
	env, router := f.Env, f.Router
	call := func(method, target, contentType, body string) (int, string) {
		t.Helper()
		rec := f.Send(method, target, boot, contentType, body, false)
		return rec.Code, rec.Body.String()
	}
	decode := func(raw string) map[string]any {
		t.Helper()
		var out map[string]any
		if err := json.Unmarshal([]byte(raw), &out); err != nil {
			t.Fatalf("answer is not JSON: %q", raw)
		}
		return out
	}
	ctx := context.Background()
	c, err := env.Service.CreateCampaign(ctx, "test", models.Campaign{Name: "c"})
	if err != nil {
		t.Fatal(err)
	}
	tp, err := env.Service.CreateTemplate(ctx, "test", models.Template{CampaignID: c.ID, Name: "t", Kind: "fixed",
		FaceValueCents: 100, TotalStock: 20, PerUserLimit: 1, ValidDays: 3})
	if err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("/api/v1/templates/%d", tp.ID)
	// runJob runs the queued jobs and answers the job's status.
	runJob := func(out map[string]any) map[string]any {
		t.Helper()
		for {
			ran, err := env.Service.RunJobOnce(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !ran {
				break
			}
		}
		id := int64(out["job"].(map[string]any)["id"].(float64))
		status, raw := call("GET", fmt.Sprintf("/api/v1/jobs/%d", id), "", "")
		if status != 200 {
			t.Fatalf("job status: %d %s", status, raw)
		}
		return decode(raw)
	}
	result := func(job map[string]any) string {
		t.Helper()
		status, raw := call("GET", job["result_url"].(string), "", "")
		if status != 200 {
			t.Fatalf("result: %d %s", status, raw)
		}
		return raw
	}

	t.Run("Generate", func(t *testing.T) {
		status, raw := call("POST", base+"/codes", "application/json", `{"count":5,"pattern":"API-####-####"}`)
		if status != 202 {
			t.Fatalf("generate: %d %s", status, raw)
		}
		out := decode(raw)
		if out["state"] != "queued" || out["total"] != 5.0 || out["result"] != "ok" {
			t.Fatalf("generate answered %s", raw)
		}
		job := runJob(out)
		if job["state"] != "done" || job["done"] != 5.0 || job["errors"] != 0.0 {
			t.Fatalf("job: %v", job)
		}
		if lines := strings.Split(strings.TrimSpace(result(job)), "\n"); len(lines) != 6 || lines[0] != "code" || !strings.HasPrefix(lines[1], "API") {
			t.Fatalf("result: %q", lines)
		}
	})
	t.Run("Import", func(t *testing.T) {
		status, raw := call("POST", base+"/codes/import", "text/csv", "code,user_id\nLEGACY-0001,\nLEGACY-0001,\nBAD!,\nLEGACY-0002,dora\n")
		if status != 202 {
			t.Fatalf("import: %d %s", status, raw)
		}
		job := runJob(decode(raw))
		if job["done"] != 4.0 || job["errors"] != 2.0 {
			t.Fatalf("job: %v", job)
		}
		if got := result(job); got != "line,code,reason\n3,LEGACY-0001,duplicate_in_file\n4,BAD!,bad_characters\n" {
			t.Fatalf("report: %q", got)
		}
	})
	t.Run("IssueJSON", func(t *testing.T) {
		status, raw := call("POST", base+"/issue", "application/json", `{"user_ids":["ann","ben","ann","dora"]}`)
		if status != 202 {
			t.Fatalf("issue: %d %s", status, raw)
		}
		got := result(runJob(decode(raw)))
		lines := strings.Split(strings.TrimSpace(got), "\n")
		if len(lines) != 5 || lines[0] != "user_id,result,coupon_code" || !strings.HasPrefix(lines[1], "ann,claimed,") ||
			lines[3] != "ann,duplicate_in_list," || lines[4] != "dora,user_limit_reached," {
			t.Fatalf("result: %q", got)
		}
	})
	t.Run("IssueCSV", func(t *testing.T) {
		status, raw := call("POST", base+"/issue", "text/csv", "user_id\ncarl\n")
		if status != 202 {
			t.Fatalf("issue: %d %s", status, raw)
		}
		if got := result(runJob(decode(raw))); !strings.HasPrefix(got, "user_id,result,coupon_code\ncarl,claimed,") {
			t.Fatalf("result: %q", got)
		}
	})
	t.Run("Export", func(t *testing.T) {
		req := httptest.NewRequest("GET", base+"/coupons.csv", nil)
		req.Header.Set("Authorization", "Bearer "+boot)
		rec := httptest.NewRecorder()
		router.ServeHTTP(rec, req)
		body, _ := io.ReadAll(rec.Body)
		lines := strings.Split(strings.TrimSpace(string(body)), "\n")
		// 5 generated, 2 imported, ann, ben, carl.
		if rec.Code != 200 || rec.Header().Get("Content-Type") != "text/csv; charset=utf-8" || len(lines) != 11 {
			t.Fatalf("export: %d %s %d lines\n%s", rec.Code, rec.Header().Get("Content-Type"), len(lines), body)
		}
	})
	t.Run("Errors", func(t *testing.T) {
		for _, tt := range []struct {
			method, target, contentType, body string
			status                            int
			field                             string
		}{
			{"POST", base + "/codes", "application/json", `{"count":5,"pattern":"API-###"}`, 400, "pattern"},
			{"POST", base + "/codes", "application/json", `{"count":0}`, 400, "count"},
			{"POST", base + "/codes", "application/json", `{"pattern":"########"}`, 400, "count"},
			{"POST", base + "/codes", "application/json", `{"count":100}`, 409, ""},
			{"POST", "/api/v1/templates/999999/codes", "application/json", `{"count":1}`, 404, ""},
			{"POST", base + "/codes/import", "application/json", `{}`, 415, "Content-Type"},
			{"POST", base + "/codes/import", "text/csv", "user_id\nx\n", 400, "file"},
			{"POST", base + "/issue", "application/json", `{"user_ids":["ok","not ok"]}`, 400, "user_ids[1]"},
			{"POST", base + "/issue", "text/plain", "x", 415, "Content-Type"},
			{"GET", base + "/coupons.csv?status=gone", "", "", 400, "status"},
			{"GET", base + "/coupons.csv?from=yesterday", "", "", 400, "from"},
			{"GET", "/api/v1/jobs/999999", "", "", 404, ""},
		} {
			status, raw := call(tt.method, tt.target, tt.contentType, tt.body)
			if status != tt.status {
				t.Errorf("%s %s %s: %d %s, want %d", tt.method, tt.target, tt.body, status, raw, tt.status)
				continue
			}
			if out := decode(raw); tt.field != "" && out["field"] != tt.field {
				t.Errorf("%s %s %s: %s, want the field %s", tt.method, tt.target, tt.body, raw, tt.field)
			}
		}
	})
	t.Run("ImportLarge", func(t *testing.T) {
		// Far above the 64 KiB of other requests, within the import's 50 MiB.
		var b strings.Builder
		b.WriteString("code\n")
		for i := range 100_000 {
			fmt.Fprintf(&b, "LARGE-%07d\n", i)
		}
		status, raw := call("POST", base+"/codes/import", "text/csv", b.String())
		if status != 202 || decode(raw)["total"] != 100_000.0 {
			t.Fatalf("import of %d bytes: %d %.300s, want 202 with 100000 rows", b.Len(), status, raw)
		}
	})
	t.Run("ImportTooLarge", func(t *testing.T) {
		big := "code\n" + strings.Repeat("ABCDEFGHJKLMNPQRSTUVWXYZ23456789\n", (50<<20)/33+10)
		status, raw := call("POST", base+"/codes/import", "text/csv", big)
		if status != 413 || decode(raw)["field"] != "file" {
			t.Fatalf("import of %d bytes: %d %s, want 413 naming file", len(big), status, raw)
		}
	})
	t.Run("ErrArchived", func(t *testing.T) {
		// An archived template makes no coupons, by any job (docs/jobs.md).
		archived := models.TemplateArchived
		if _, err := env.Service.UpdateTemplate(ctx, "test", tp.ID, admin.TemplatePatch{Status: &archived}); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct{ target, contentType, body string }{
			{base + "/codes", "application/json", `{"count":1}`},
			{base + "/codes/import", "text/csv", "code\nARCHIVED-0001\n"},
			{base + "/issue", "application/json", `{"user_ids":["erin"]}`},
		} {
			status, raw := call("POST", tt.target, tt.contentType, tt.body)
			if out := decode(raw); status != 409 || out["result"] != "not_claimable" ||
				out["error"] != "the template is archived: it makes no more coupons" {
				t.Errorf("POST %s: %d %s, want 409 not_claimable", tt.target, status, raw)
			}
		}
	})
}
