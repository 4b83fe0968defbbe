package api_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/claims"
)

// plainNumber is a cell a spreadsheet reads as a number, never a formula.
var plainNumber = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

// readSpreadsheet parses a CSV answer as a spreadsheet opening the file
// would, and fails the test when a cell would run as a formula: one that
// begins with =, +, -, @, a tab or a carriage return and is not a plain
// number.
func readSpreadsheet(t *testing.T, name, body string) [][]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatalf("%s is not CSV: %v\n%s", name, err, body)
	}
	for i, rec := range recs {
		for j, cell := range rec {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) && !plainNumber.MatchString(cell) {
				t.Errorf("%s line %d cell %d is a formula: %q", name, i+1, j+1, cell)
			}
		}
	}
	return recs
}

// TestCSVFormulaInjection: values people or files chose (user ids,
// imported codes, template and cashier names) that begin like a formula
// come out of every CSV (the coupons export, an import's and an issue's
// result, the redemption report) with a single quote in front and
// otherwise as they are; negative figures stay numbers (docs/jobs.md).
func TestCSVFormulaInjection(t *testing.T) {
	const boot = "csv-bootstrap-token-0123456789abcdef"
	f := testsupport.NewFixture(t, testsupport.WithBootstrap(boot))
	svc := f.Env.Service
	call := func(method, target, contentType, body string) (int, string) {
		t.Helper()
		rec := f.Send(method, target, boot, contentType, body, false)
		return rec.Code, rec.Body.String()
	}
	ctx := context.Background()
	c, err := svc.CreateCampaign(ctx, "test", models.Campaign{Name: "c"})
	if err != nil {
		t.Fatal(err)
	}
	const name = `=HYPERLINK("http://x.example/","open")`
	tp, err := svc.CreateTemplate(ctx, "test", models.Template{CampaignID: c.ID, Name: name, Kind: models.KindFixed,
		FaceValueCents: 500, TotalStock: 20, PerUserLimit: 1, ValidDays: 3})
	if err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("/api/v1/templates/%d", tp.ID)
	a1, err := svc.Claim(ctx, claims.ClaimRequest{TemplateID: tp.ID, UserID: "@A1", IdempotencyKey: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	b2, err := svc.Claim(ctx, claims.ClaimRequest{TemplateID: tp.ID, UserID: "-2-3", IdempotencyKey: "k2"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Redeem(ctx, checkout.RedeemRequest{CouponCode: a1.Coupon.Code, OrderID: "ORDER-1",
		OrderAmountCents: 2000, Cashier: "@till"}); err != nil {
		t.Fatal(err)
	}
	runJobs := func() {
		t.Helper()
		for {
			ran, err := svc.RunJobOnce(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !ran {
				return
			}
		}
	}
	jobResult := func(raw string) string {
		t.Helper()
		var out struct {
			Job struct{ ID int64 } `json:"job"`
		}
		if err := json.Unmarshal([]byte(raw), &out); err != nil || out.Job.ID == 0 {
			t.Fatalf("job answer %s", raw)
		}
		runJobs()
		status, body := call("GET", fmt.Sprintf("/api/v1/jobs/%d/result.csv", out.Job.ID), "", "")
		if status != 200 {
			t.Fatalf("result: %d %s", status, body)
		}
		return body
	}

	t.Run("Export", func(t *testing.T) {
		status, body := call("GET", base+"/coupons.csv", "", "")
		if status != 200 {
			t.Fatalf("export: %d %s", status, body)
		}
		recs := readSpreadsheet(t, "coupons.csv", body)
		if len(recs) != 3 {
			t.Fatalf("export has %d lines, want header + 2:\n%s", len(recs), body)
		}
		got := fmt.Sprint(recs[1][:3], recs[1][8], recs[2][:3], recs[2][8])
		want := fmt.Sprint([]string{a1.Coupon.Code, "'@A1", "used"}, "ORDER-1", []string{b2.Coupon.Code, "'-2-3", "issued"}, "")
		if got != want {
			t.Fatalf("export rows %s, want %s", got, want)
		}
	})
	t.Run("ImportResult", func(t *testing.T) {
		file := "code\n=1+2\n@SUM(A1)\n-2+3\n+CMD\n\"=HYPERLINK(\"\"http://x.example/\"\")\"\nGOOD-0001\n"
		status, raw := call("POST", base+"/codes/import", "text/csv", file)
		if status != 202 {
			t.Fatalf("import: %d %s", status, raw)
		}
		recs := readSpreadsheet(t, "result.csv", jobResult(raw))
		want := [][]string{
			{"line", "code", "reason"},
			{"2", "'=1+2", "bad_characters"},
			{"3", "'@SUM(A1)", "bad_characters"},
			{"4", "'-2+3", "bad_characters"},
			{"5", "'+CMD", "bad_characters"},
			{"6", `'=HYPERLINK("http://x.example/")`, "bad_characters"},
		}
		if fmt.Sprintf("%q", recs) != fmt.Sprintf("%q", want) {
			t.Fatalf("import result %q, want %q", recs, want)
		}
	})
	t.Run("IssueResult", func(t *testing.T) {
		status, raw := call("POST", base+"/issue", "application/json", `{"user_ids":["@B2","-4-5"]}`)
		if status != 202 {
			t.Fatalf("issue: %d %s", status, raw)
		}
		recs := readSpreadsheet(t, "result.csv", jobResult(raw))
		if len(recs) != 3 || fmt.Sprint(recs[0]) != "[user_id result coupon_code]" ||
			fmt.Sprint(recs[1][:2], recs[2][:2]) != "['@B2 claimed] ['-4-5 claimed]" {
			t.Fatalf("issue result %q", recs)
		}
	})
	t.Run("Report", func(t *testing.T) {
		now := time.Now().UTC()
		q := fmt.Sprintf("from=%s&to=%s&group_by=template,cashier", now.AddDate(0, 0, -1).Format(time.DateOnly),
			now.AddDate(0, 0, 1).Format(time.DateOnly))
		status, body := call("GET", "/api/v1/reports/redemptions.csv?"+q, "", "")
		if status != 200 {
			t.Fatalf("report: %d %s", status, body)
		}
		recs := readSpreadsheet(t, "redemptions.csv", body)
		want := [][]string{
			{"template", "template_name", "cashier", "redemptions", "discount_cents", "refunds", "refunded_discount_cents",
				"net_redemptions", "net_discount_cents", "currency"},
			{fmt.Sprint(tp.ID), "'" + name, "'@till", "1", "500", "0", "0", "1", "500", "USD"},
		}
		if fmt.Sprintf("%q", recs) != fmt.Sprintf("%q", want) {
			t.Fatalf("report %q, want %q", recs, want)
		}
	})
}
