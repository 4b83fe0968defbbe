package api

import (
	"bytes"
	"errors"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
)

// The fuzz targets of the request decoding and validation. CI runs each for a
// short while (go test ./handlers/api -run '^$' -fuzz '^FuzzDecodeJSON$'
// -fuzztime 10s, and so on); the seeds below and the corpus committed under
// testdata/fuzz run with every go test.

// requestTypes makes one of each request type the JSON API decodes.
var requestTypes = []func() any{
	func() any { return &claimRequest{} },
	func() any { return &createCampaignRequest{} },
	func() any { return &createTemplateRequest{} },
	func() any { return &updateTemplateRequest{} },
	func() any { return &addStockRequest{} },
	func() any { return &createTokenRequest{} },
	func() any { return &createUserRequest{} },
}

// checkInvalid fails unless err is nil or a CodeInvalidRequest naming a field.
func checkInvalid(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var e *models.Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: %T %v, want a *models.Error", what, err, err)
	}
	if e.Code != models.CodeInvalidRequest || e.Field == "" || e.Message == "" {
		t.Fatalf("%s: code %d field %q message %q, want invalid_request naming a field", what, e.Code, e.Field, e.Message)
	}
	if !utf8.ValidString(e.Field) || len(e.Field) > 200 {
		t.Fatalf("%s: field %q is not a short text", what, e.Field)
	}
}

func addDecodeSeeds(f *testing.F) {
	for _, s := range []struct{ body, ct string }{
		{`{"user_id":"alice"}`, "application/json"},
		{`{"user_id":"alice"}`, "application/json; charset=utf-8"},
		{`{"user_id":"alice"}`, "text/plain"},
		{`{"user_id":"alice"}`, ""},
		{`{"user_id":"alice"}`, "application/json; charset"},
		{`{"name":"Spring","budget_cents":1000}`, "application/json"},
		{`{"name":"Spring","budget_cents":99999999999999999999}`, "application/json"},
		{`{"name":"Spring","budget_cents":1e3}`, "application/json"},
		{`{"name":"Spring","budget_cents":-0}`, "application/json"},
		{`{"campaign_id":1,"name":"Five off","kind":"fixed","face_value_cents":500,"total_stock":10,"per_user_limit":2,"valid_days":30}`, "application/json"},
		{`{"claim_ends_at":null}`, "application/json"},
		{`{"claim_ends_at":"2026-01-02T15:04:05Z"}`, "application/json"},
		{`{"claim_ends_at":12}`, "application/json"},
		{`{"delta":1,"reason":"more"}`, "application/json"},
		{`{"role":"app","name":"shop"}`, "application/json"},
		{`{"username":"bob","password":"12345678","role":"shopper"}`, "application/json"},
		{`{"":1}`, "application/json"},
		{`{"\u0000":1}`, "application/json"},
		{`{"name":"a"}{"name":"b"}`, "application/json"},
		{`{"name":"a"} x`, "application/json"},
		{`[]`, "application/json"},
		{`null`, "application/json"},
		{`"text"`, "application/json"},
		{`{"name":`, "application/json"},
		{`{"name":"\ud800"}`, "application/json"},
		{"{\"name\":\"\xff\"}", "application/json"},
		{`   `, "application/json"},
		{``, "application/json"},
		{`{"name":{"nested":[1,2,{"a":null}]}}`, "application/json"},
		{`{"user_id":true}`, "application/json"},
		{`{"user_id":"a","user_id":"b"}`, "application/json"},
		{`{"USER_ID":"a"}`, "application/json"},
		{`{"user_id":"a","User_Id":"b"}`, "application/json"},
		{`{"a":{"b":1,"b":2}}`, "application/json"},
		{`[{"user_id":"a"}]`, "application/json"},
		{` 0`, "application/json"},
	} {
		f.Add([]byte(s.body), s.ct)
	}
}

// FuzzDecodeJSON: whatever the body and content type, decodeJSON never panics
// and returns nil or an invalid_request naming the field at fault, for every
// request type of the API.
func FuzzDecodeJSON(f *testing.F) {
	addDecodeSeeds(f)
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		for _, newRequest := range requestTypes {
			dst := newRequest()
			r := httptest.NewRequest("POST", "/", bytes.NewReader(body))
			r.Header.Set("Content-Type", contentType)
			err := web.DecodeJSON(r, dst)
			checkInvalid(t, "decodeJSON", err)
			if trimmed := bytes.TrimSpace(body); err == nil && (len(trimmed) == 0 || trimmed[0] != '{') {
				t.Fatalf("a body that is not an object passed: %q", body)
			}
		}
	})
}

// TestDecodeJSONStrict: a body is the documented object, each key once
// (compared as encoding/json matches them, regardless of case, at any
// depth); the error names the key given twice.
func TestDecodeJSONStrict(t *testing.T) {
	for _, c := range []struct{ body, field, msg string }{
		{`null`, "body", "must be a JSON object"},
		{` [ ]`, "body", "must be a JSON object"},
		{`"text"`, "body", "must be a JSON object"},
		{`0`, "body", "must be a JSON object"},
		{`false`, "body", "must be a JSON object"},
		{`{"user_id":"a","user_id":"b"}`, "user_id", "appears more than once in the body"},
		{`{"user_id":"a","USER_ID":"b"}`, "USER_ID", "appears more than once in the body"},
		{`{"user_id":{"x":[1,{"y":1,"y":2}]}}`, "y", "appears more than once in the body"},
		{`{"":1,"":2}`, "body", "holds a field twice"},
		{`{"user_id":"a"}`, "", ""},
		{`{"user_id":"a","x":{"user_id":1}}`, "x", "is not a known field"}, // the same name at another depth is no duplicate
	} {
		r := httptest.NewRequest("POST", "/", bytes.NewReader([]byte(c.body)))
		r.Header.Set("Content-Type", "application/json")
		err := web.DecodeJSON(r, &claimRequest{})
		var e *models.Error
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: %v", c.body, err)
		case c.field != "" && (!errors.As(err, &e) || e.Field != c.field || e.Message != c.msg):
			t.Errorf("%s: %v, want %s: %s", c.body, err, c.field, c.msg)
		}
	}
}

// FuzzCreateTemplate: a create-template body goes through decoding, the
// handler's conversion and the model's validation without a panic and with
// nil or an invalid_request naming a field; a template that passes keeps every
// bound of docs/README.md (templates: fields and bounds).
func FuzzCreateTemplate(f *testing.F) {
	for _, s := range []string{
		`{"campaign_id":1,"name":"Five off","kind":"fixed","face_value_cents":500,"total_stock":10,"per_user_limit":2,"valid_days":30}`,
		`{"campaign_id":1,"name":"Ten pct","kind":"percent","percent_off":10,"max_discount_cents":1000,"total_stock":10000000,"per_user_limit":100,"valid_from":"2026-01-01T00:00:00Z","valid_until":"2026-02-01T00:00:00Z"}`,
		`{"campaign_id":1,"name":"x","kind":"percent","percent_off":100,"max_discount_cents":1,"total_stock":1,"per_user_limit":1,"valid_days":1}`,
		`{"campaign_id":1,"name":"x","kind":"percent","percent_off_bp":3333,"max_discount_cents":1,"total_stock":1,"per_user_limit":1,"valid_days":1,"max_units_per_order":1}`,
		`{"campaign_id":1,"name":"x","kind":"fixed","face_value_cents":1,"total_stock":1,"per_user_limit":1,"valid_days":1,"claim_starts_at":"2026-01-01T00:00:00+14:00","claim_ends_at":"2026-01-01T00:00:00-12:00"}`,
		`{"campaign_id":1,"name":"x","kind":"fixed","face_value_cents":1,"total_stock":1,"per_user_limit":1,"valid_days":1,"valid_from":"2026-01-01T00:00:00Z"}`,
		`{"campaign_id":1,"name":"   ","kind":"fixed","face_value_cents":1,"total_stock":1,"per_user_limit":1,"valid_days":1}`,
		`{"campaign_id":-1,"name":"x","kind":"fixed","face_value_cents":9223372036854775807,"total_stock":1,"per_user_limit":1,"valid_days":1}`,
		`{"campaign_id":1,"name":"x","kind":"fixed","face_value_cents":1,"total_stock":1,"per_user_limit":1,"valid_days":3651,"refund_policy":"recycle","status":"paused","extend_on_refund":true}`,
		`{"campaign_id":1,"name":"x","kind":"fixed","face_value_cents":1,"total_stock":1,"per_user_limit":1,"valid_days":1,"claim_starts_at":"0001-01-01T00:00:00Z"}`,
		`{"campaign_id":1,"name":"x","kind":"fixed","face_value_cents":1,"total_stock":1,"per_user_limit":1,"valid_days":1,"valid_from":"9999-12-31T23:59:59Z","valid_until":"9999-12-31T23:59:59.999999999Z"}`,
		`{"campaign_id":1,"name":"x","kind":"tiered","tiers":[{"min_cents":100,"off_cents":10},{"min_cents":200,"off_cents":30}],"max_discount_cents":30,"total_stock":1,"per_user_limit":1,"valid_days":1}`,
		`{"campaign_id":1,"name":"x","kind":"buy_x_get_y","buy_quantity":2,"get_quantity":1,"get_percent":100,"max_discount_cents":3000,"applies_to":"items","target":{"skus":["b","a","b"]},"total_stock":1,"per_user_limit":1,"valid_days":1}`,
		`{"campaign_id":1,"name":"x","kind":"free_shipping","max_discount_cents":1000,"priority":0,"currency":"JPY","total_stock":1,"per_user_limit":1,"valid_days":1}`,
		`{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest("POST", "/", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		var req createTemplateRequest
		if err := web.DecodeJSON(r, &req); err != nil {
			checkInvalid(t, "decodeJSON", err)
			return
		}
		tpl, err := req.template()
		if err != nil {
			checkInvalid(t, "template()", err)
			return
		}
		if tpl.ClaimStartsAt.IsZero() {
			tpl.ClaimStartsAt = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		}
		err = tpl.Validate()
		checkInvalid(t, "Validate", err)
		if err == nil {
			checkValidTemplate(t, &tpl)
		}
	})
}

// FuzzTemplateValidate: models.Template.Validate over every field, including
// values no JSON decoder would produce.
func FuzzTemplateValidate(f *testing.F) {
	f.Add("Five off", "", "fixed", int64(500), int64(0), int64(0), int64(0), int64(10), int64(2), int64(30),
		int64(0), int64(0), int64(1767225600), int64(0), "", "")
	f.Add("Pct", "desc", "percent", int64(0), int64(10), int64(1000), int64(100), int64(10_000_000), int64(100), int64(0),
		int64(1767225600), int64(1769904000), int64(1767225600), int64(1767225601), "recycle", "paused")
	f.Add("x", "\xff", "percent", int64(-1), int64(99), int64(1), int64(-1), int64(0), int64(101), int64(3651),
		int64(1), int64(0), int64(0), int64(-1), "other", "gone")
	f.Add("", "", "", int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0),
		int64(0), int64(0), int64(0), int64(0), "", "")
	f.Fuzz(func(t *testing.T, name, desc, kind string, face, pct, maxd, minOrder, stock, perUser, validDays,
		from, until, starts, ends int64, policy, status string) {
		tpl := models.Template{CampaignID: 1, Name: name, Description: desc, Kind: kind, FaceValueCents: face,
			PercentOff: pct, MaxDiscountCents: maxd, MinOrderCents: minOrder, TotalStock: stock, PerUserLimit: perUser,
			ValidDays: validDays, ClaimStartsAt: time.Unix(starts, 0).UTC(), RefundPolicy: policy, Status: status}
		if from != 0 {
			tpl.ValidFrom = ptr(time.Unix(from, 0).UTC())
		}
		if until != 0 {
			tpl.ValidUntil = ptr(time.Unix(until, 0).UTC())
		}
		if ends != 0 {
			tpl.ClaimEndsAt = ptr(time.Unix(ends, 0).UTC())
		}
		err := tpl.Validate()
		checkInvalid(t, "Validate", err)
		if err == nil {
			checkValidTemplate(t, &tpl)
		}
	})
}

func ptr[T any](v T) *T { return &v }

// checkValidTemplate checks the bounds (docs/README.md) of a template that
// passed Validate, and that what is computed from it stays in range.
func checkValidTemplate(t *testing.T, tpl *models.Template) {
	t.Helper()
	n := utf8.RuneCountInString(tpl.Name)
	switch {
	case n < 1 || n > 100:
		t.Fatalf("name of %d characters passed", n)
	case tpl.Kind == models.KindFixed && (tpl.FaceValueCents <= 0 || tpl.PercentOff != 0 || tpl.PercentOffBP != 0 || tpl.MaxDiscountCents != 0):
		t.Fatalf("fixed template passed: %+v", tpl)
	case tpl.Kind == models.KindPercent && (tpl.PercentOffBP < 1 || tpl.PercentOffBP > models.MaxBasisPoints ||
		tpl.PercentOff != 0 && tpl.PercentOff*100 != tpl.PercentOffBP || tpl.MaxDiscountCents <= 0 || tpl.FaceValueCents != 0):
		t.Fatalf("percent template passed: %+v", tpl)
	case !slices.Contains(models.TemplateKinds, tpl.Kind):
		t.Fatalf("kind %q passed", tpl.Kind)
	case tpl.Kind != models.KindFixed && (tpl.MaxDiscountCents < 1 || tpl.MaxDiscountCents > models.MaxMoneyCents):
		t.Fatalf("%s template without a cap passed: %+v", tpl.Kind, tpl)
	case tpl.Kind == models.KindTiered && (len(tpl.Tiers) < 1 || len(tpl.Tiers) > models.MaxTiers):
		t.Fatalf("tiered template with %d tiers passed", len(tpl.Tiers))
	case tpl.Kind != models.KindTiered && len(tpl.Tiers) > 0:
		t.Fatalf("%s template with tiers passed", tpl.Kind)
	case tpl.AppliesTo != models.AppliesToItems && !tpl.Target.Empty():
		t.Fatalf("applies_to %q with a target passed", tpl.AppliesTo)
	case tpl.Priority < 0 || tpl.Priority > models.MaxPriority:
		t.Fatalf("priority %d passed", tpl.Priority)
	case tpl.TotalStock < 1 || tpl.TotalStock > models.MaxTotalStock:
		t.Fatalf("total_stock %d passed", tpl.TotalStock)
	case tpl.PerUserLimit < 1 || tpl.PerUserLimit > models.MaxPerUserLimit:
		t.Fatalf("per_user_limit %d passed", tpl.PerUserLimit)
	case tpl.MinOrderCents < 0:
		t.Fatalf("min_order_cents %d passed", tpl.MinOrderCents)
	case tpl.RefundPolicy != models.RefundRestore && tpl.RefundPolicy != models.RefundRecycle:
		t.Fatalf("refund_policy %q passed", tpl.RefundPolicy)
	case tpl.Status != models.TemplateActive && tpl.Status != models.TemplatePaused:
		t.Fatalf("status %q passed", tpl.Status)
	case tpl.ValueCents() <= 0 || tpl.ValueCents() > models.MaxMoneyCents:
		t.Fatalf("budget value %d passed", tpl.ValueCents())
	case tpl.ClaimEndsAt != nil && !tpl.ClaimEndsAt.After(tpl.ClaimStartsAt):
		t.Fatalf("claim window %v..%v passed", tpl.ClaimStartsAt, tpl.ClaimEndsAt)
	}
	claimed := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	from, until := tpl.ValidityFor(claimed, time.UTC)
	if !until.After(from) {
		t.Fatalf("validity %v..%v is empty", from, until)
	}
	for _, amount := range []int64{0, 1, 99, 100, 12345, models.MaxMoneyCents} {
		d := tpl.Discount(amount)
		if d < 0 || d > amount || d > tpl.ValueCents() {
			t.Fatalf("discount %d on %d with %+v", d, amount, tpl)
		}
	}
}
