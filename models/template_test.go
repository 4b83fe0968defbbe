package models_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
)

var t0 = time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

func fixedTemplate() models.Template {
	return models.Template{
		CampaignID: 1, Name: "Ten off", Kind: models.KindFixed, FaceValueCents: 1000,
		TotalStock: 100, PerUserLimit: 2, ClaimStartsAt: t0, ValidDays: 30,
	}
}

func percentTemplate() models.Template {
	return models.Template{
		CampaignID: 1, Name: "Fifteen percent", Kind: models.KindPercent, PercentOff: 15, MaxDiscountCents: 2500,
		TotalStock: 100, PerUserLimit: 1, ClaimStartsAt: t0,
		ValidFrom: ptr(t0), ValidUntil: ptr(t0.Add(24 * time.Hour)),
	}
}

// assertInvalid checks that err is invalid_request naming field.
func assertInvalid(t *testing.T, err error, field string) {
	t.Helper()
	var e *models.Error
	if err == nil || !asError(err, &e) {
		t.Fatalf("error = %v, want invalid_request on %s", err, field)
	}
	if e.Code != models.CodeInvalidRequest || e.Field != field || e.Message == "" {
		t.Fatalf("error = code %d field %q message %q, want invalid_request on %s", e.Code, e.Field, e.Message, field)
	}
}

func TestTemplateValidate(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		for name, tp := range map[string]models.Template{"fixed": fixedTemplate(), "percent": percentTemplate()} {
			if err := tp.Validate(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if tp.RefundPolicy != models.RefundRestore || tp.Status != models.TemplateActive || tp.Stacking != models.StackingExclusive {
				t.Fatalf("%s: defaults refund_policy %q status %q stacking %q, want restore, active and exclusive",
					name, tp.RefundPolicy, tp.Status, tp.Stacking)
			}
		}
	})
	t.Run("OKBounds", func(t *testing.T) {
		cases := map[string]func(*models.Template){
			"name 100 runes":         func(tp *models.Template) { tp.Name = strings.Repeat("é", 100) },
			"name trimmed":           func(tp *models.Template) { tp.Name = "  x  " },
			"description 2000 runes": func(tp *models.Template) { tp.Description = strings.Repeat("ü", 2000) },
			"face value 1":           func(tp *models.Template) { tp.FaceValueCents = 1 },
			"face value max":         func(tp *models.Template) { tp.FaceValueCents = models.MaxMoneyCents },
			"min order max":          func(tp *models.Template) { tp.MinOrderCents = models.MaxMoneyCents },
			"stock 1":                func(tp *models.Template) { tp.TotalStock = 1 },
			"stock max":              func(tp *models.Template) { tp.TotalStock = models.MaxTotalStock },
			"limit 1":                func(tp *models.Template) { tp.PerUserLimit = 1 },
			"limit 100":              func(tp *models.Template) { tp.PerUserLimit = 100 },
			"valid days 1":           func(tp *models.Template) { tp.ValidDays = 1 },
			"valid days 3650":        func(tp *models.Template) { tp.ValidDays = 3650 },
			"claim ends later":       func(tp *models.Template) { tp.ClaimEndsAt = ptr(t0.Add(time.Nanosecond)) },
			"recycle paused":         func(tp *models.Template) { tp.RefundPolicy, tp.Status = "recycle", "paused" },
		}
		for name, mutate := range cases {
			tp := fixedTemplate()
			mutate(&tp)
			if err := tp.Validate(); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
		for _, p := range []int64{1, 99} {
			tp := percentTemplate()
			tp.PercentOff = p
			if err := tp.Validate(); err != nil {
				t.Errorf("percent_off %d: %v", p, err)
			}
		}
	})
	cases := []struct {
		name   string
		base   func() models.Template
		mutate func(*models.Template)
		field  string
	}{
		{"ErrNameEmpty", fixedTemplate, func(tp *models.Template) { tp.Name = "" }, "name"},
		{"ErrNameBlank", fixedTemplate, func(tp *models.Template) { tp.Name = " \t " }, "name"},
		{"ErrNameTooLong", fixedTemplate, func(tp *models.Template) { tp.Name = strings.Repeat("x", 101) }, "name"},
		{"ErrNameControl", fixedTemplate, func(tp *models.Template) { tp.Name = "a\x00b" }, "name"},
		{"ErrNameNewline", fixedTemplate, func(tp *models.Template) { tp.Name = "a\nb" }, "name"},
		{"ErrNameBadUTF8", fixedTemplate, func(tp *models.Template) { tp.Name = "a\xffb" }, "name"},
		{"ErrDescriptionTooLong", fixedTemplate, func(tp *models.Template) { tp.Description = strings.Repeat("x", 2001) }, "description"},
		{"ErrDescriptionBadUTF8", fixedTemplate, func(tp *models.Template) { tp.Description = "\xc3" }, "description"},
		{"ErrCampaignMissing", fixedTemplate, func(tp *models.Template) { tp.CampaignID = 0 }, "campaign_id"},
		{"ErrCampaignNegative", fixedTemplate, func(tp *models.Template) { tp.CampaignID = -1 }, "campaign_id"},
		{"ErrKindEmpty", fixedTemplate, func(tp *models.Template) { tp.Kind = "" }, "kind"},
		{"ErrKindUnknown", fixedTemplate, func(tp *models.Template) { tp.Kind = "Fixed" }, "kind"},
		{"ErrFaceValueZero", fixedTemplate, func(tp *models.Template) { tp.FaceValueCents = 0 }, "face_value_cents"},
		{"ErrFaceValueNegative", fixedTemplate, func(tp *models.Template) { tp.FaceValueCents = -1 }, "face_value_cents"},
		{"ErrFaceValueHuge", fixedTemplate, func(tp *models.Template) { tp.FaceValueCents = models.MaxMoneyCents + 1 }, "face_value_cents"},
		{"ErrFixedWithPercent", fixedTemplate, func(tp *models.Template) { tp.PercentOff = 10 }, "percent_off"},
		{"ErrFixedWithCap", fixedTemplate, func(tp *models.Template) { tp.MaxDiscountCents = 10 }, "max_discount_cents"},
		{"ErrPercentZero", percentTemplate, func(tp *models.Template) { tp.PercentOff = 0 }, "percent_off"},
		{"ErrPercent101", percentTemplate, func(tp *models.Template) { tp.PercentOff = 101 }, "percent_off"},
		{"ErrPercentNegative", percentTemplate, func(tp *models.Template) { tp.PercentOff = -5 }, "percent_off"},
		{"ErrCapZero", percentTemplate, func(tp *models.Template) { tp.MaxDiscountCents = 0 }, "max_discount_cents"},
		{"ErrCapHuge", percentTemplate, func(tp *models.Template) { tp.MaxDiscountCents = models.MaxMoneyCents + 1 }, "max_discount_cents"},
		{"ErrPercentWithFace", percentTemplate, func(tp *models.Template) { tp.FaceValueCents = 100 }, "face_value_cents"},
		{"ErrMinOrderNegative", fixedTemplate, func(tp *models.Template) { tp.MinOrderCents = -1 }, "min_order_cents"},
		{"ErrMinOrderHuge", fixedTemplate, func(tp *models.Template) { tp.MinOrderCents = models.MaxMoneyCents + 1 }, "min_order_cents"},
		{"ErrStockZero", fixedTemplate, func(tp *models.Template) { tp.TotalStock = 0 }, "total_stock"},
		{"ErrStockNegative", fixedTemplate, func(tp *models.Template) { tp.TotalStock = -1 }, "total_stock"},
		{"ErrStockHuge", fixedTemplate, func(tp *models.Template) { tp.TotalStock = models.MaxTotalStock + 1 }, "total_stock"},
		{"ErrLimitZero", fixedTemplate, func(tp *models.Template) { tp.PerUserLimit = 0 }, "per_user_limit"},
		{"ErrLimitHuge", fixedTemplate, func(tp *models.Template) { tp.PerUserLimit = 101 }, "per_user_limit"},
		{"ErrClaimEndsAtStart", fixedTemplate, func(tp *models.Template) { tp.ClaimEndsAt = ptr(t0) }, "claim_ends_at"},
		{"ErrClaimEndsBeforeStart", fixedTemplate, func(tp *models.Template) { tp.ClaimEndsAt = ptr(t0.Add(-time.Hour)) }, "claim_ends_at"},
		{"ErrValidityMissing", fixedTemplate, func(tp *models.Template) { tp.ValidDays = 0 }, "valid_days"},
		{"ErrValidDaysNegative", fixedTemplate, func(tp *models.Template) { tp.ValidDays = -1 }, "valid_days"},
		{"ErrValidDaysHuge", fixedTemplate, func(tp *models.Template) { tp.ValidDays = 3651 }, "valid_days"},
		{"ErrValidityBoth", percentTemplate, func(tp *models.Template) { tp.ValidDays = 3 }, "valid_days"},
		{"ErrValidFromMissing", percentTemplate, func(tp *models.Template) { tp.ValidFrom = nil }, "valid_from"},
		{"ErrValidUntilMissing", percentTemplate, func(tp *models.Template) { tp.ValidUntil = nil }, "valid_until"},
		{"ErrValidUntilEqual", percentTemplate, func(tp *models.Template) { tp.ValidUntil = ptr(*tp.ValidFrom) }, "valid_until"},
		{"ErrValidUntilBefore", percentTemplate, func(tp *models.Template) { tp.ValidUntil = ptr(tp.ValidFrom.Add(-time.Second)) }, "valid_until"},
		{"ErrRefundPolicy", fixedTemplate, func(tp *models.Template) { tp.RefundPolicy = "refund" }, "refund_policy"},
		{"ErrStacking", fixedTemplate, func(tp *models.Template) { tp.Stacking = "stackable" }, "stacking"},
		{"ErrStatus", fixedTemplate, func(tp *models.Template) { tp.Status = "deleted" }, "status"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tp := c.base()
			c.mutate(&tp)
			assertInvalid(t, tp.Validate(), c.field)
		})
	}
}

func TestTemplateValueCents(t *testing.T) {
	f, p := fixedTemplate(), percentTemplate()
	if got := f.ValueCents(); got != 1000 {
		t.Errorf("fixed value = %d, want 1000", got)
	}
	if got := p.ValueCents(); got != 2500 {
		t.Errorf("percent value = %d, want its cap 2500", got)
	}
}

func TestTemplateDiscount(t *testing.T) {
	f, p := fixedTemplate(), percentTemplate() // 1000 off; 15% capped at 2500
	cases := []struct {
		tp     models.Template
		amount int64
		want   int64
	}{
		{f, 5000, 1000}, {f, 1000, 1000}, {f, 999, 999}, {f, 1, 1},
		{p, 10000, 1500}, {p, 99, 14}, {p, 6, 0}, {p, 16666, 2499}, {p, 16667, 2500}, {p, 1_000_000, 2500},
		{p, models.MaxMoneyCents, 2500},
	}
	for _, c := range cases {
		if got := c.tp.Discount(c.amount); got != c.want {
			t.Errorf("%s on %d = %d, want %d", c.tp.Kind, c.amount, got, c.want)
		}
	}
}

func TestTemplateClaimable(t *testing.T) {
	tp := fixedTemplate()
	tp.ClaimEndsAt = ptr(t0.Add(time.Hour))
	if err := tp.Validate(); err != nil {
		t.Fatal(err)
	}
	t.Run("OK", func(t *testing.T) {
		for _, now := range []time.Time{t0, t0.Add(time.Hour - time.Nanosecond)} {
			if err := tp.Claimable(now); err != nil {
				t.Errorf("at %v: %v", now, err)
			}
		}
	})
	t.Run("ErrNotClaimable", func(t *testing.T) {
		paused := tp
		paused.Status = models.TemplatePaused
		for name, c := range map[string]struct {
			tp  models.Template
			now time.Time
		}{
			"before start": {tp, t0.Add(-time.Nanosecond)},
			"at end":       {tp, t0.Add(time.Hour)},
			"after end":    {tp, t0.Add(48 * time.Hour)},
			"paused":       {paused, t0.Add(time.Minute)},
		} {
			if err := c.tp.Claimable(c.now); models.ErrorCode(err) != models.CodeNotClaimable {
				t.Errorf("%s: error = %v, want not_claimable", name, err)
			}
		}
	})
}

// TestTemplateClaimRefusal: a template with absolute validity takes no claim
// from valid_until on, whatever its claim window; each refusal says why.
func TestTemplateClaimRefusal(t *testing.T) {
	p := percentTemplate() // claims from t0, valid t0..t0+24h
	p.ClaimEndsAt = ptr(t0.Add(48 * time.Hour))
	p.Status = models.TemplateActive
	paused := p
	paused.Status = models.TemplatePaused
	days := fixedTemplate()
	days.Status = models.TemplateActive
	for name, c := range map[string]struct {
		tp     models.Template
		now    time.Time
		reason string
		at     time.Time
	}{
		"open":              {p, t0, "", time.Time{}},
		"last instant":      {p, t0.Add(24*time.Hour - time.Nanosecond), "", time.Time{}},
		"at valid_until":    {p, t0.Add(24 * time.Hour), models.RefusedExpired, t0.Add(24 * time.Hour)},
		"after valid_until": {p, t0.Add(30 * time.Hour), models.RefusedExpired, t0.Add(24 * time.Hour)},
		"after claims end":  {p, t0.Add(48 * time.Hour), models.RefusedClosed, t0.Add(48 * time.Hour)},
		"before start":      {p, t0.Add(-time.Nanosecond), models.RefusedNotYet, t0},
		"paused":            {paused, t0.Add(time.Hour), models.RefusedPaused, time.Time{}},
		"valid days":        {days, t0.Add(10 * 365 * 24 * time.Hour), "", time.Time{}},
	} {
		reason, at := c.tp.ClaimRefusal(c.now)
		if reason != c.reason || !at.Equal(c.at) {
			t.Errorf("%s: %q at %v, want %q at %v", name, reason, at, c.reason, c.at)
		}
		if err := c.tp.Claimable(c.now); (err == nil) != (c.reason == "") ||
			err != nil && models.ErrorCode(err) != models.CodeNotClaimable {
			t.Errorf("%s: Claimable = %v", name, err)
		}
	}
}

// TestTemplateValidateIssuable: coupons that would be born expired are
// refused, naming the field to change; valid_days templates always pass.
func TestTemplateValidateIssuable(t *testing.T) {
	now := t0.Add(time.Hour)
	t.Run("OK", func(t *testing.T) {
		closesWithValidity := percentTemplate()
		closesWithValidity.ClaimEndsAt = ptr(t0.Add(24 * time.Hour))
		for name, tp := range map[string]models.Template{
			"absolute":             percentTemplate(),
			"closes with validity": closesWithValidity,
			"valid days":           fixedTemplate(),
		} {
			if err := tp.ValidateIssuable(now); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	})
	for name, c := range map[string]struct {
		edit  func(*models.Template)
		now   time.Time
		field string
	}{
		"ErrValidUntilPassed":        {func(*models.Template) {}, t0.Add(25 * time.Hour), "valid_until"},
		"ErrValidUntilNow":           {func(*models.Template) {}, t0.Add(24 * time.Hour), "valid_until"},
		"ErrClaimsOpenAtValidityEnd": {func(tp *models.Template) { tp.ClaimStartsAt = t0.Add(24 * time.Hour) }, now, "claim_starts_at"},
		"ErrClaimsCloseAfterValidity": {func(tp *models.Template) {
			tp.ClaimEndsAt = ptr(t0.Add(24*time.Hour + time.Nanosecond))
		}, now, "claim_ends_at"},
	} {
		t.Run(name, func(t *testing.T) {
			tp := percentTemplate()
			c.edit(&tp)
			err := tp.ValidateIssuable(c.now)
			assertInvalid(t, err, c.field)
			if !errors.Is(err, models.ErrBornExpired) {
				t.Errorf("%v is not ErrBornExpired", err)
			}
		})
	}
}

func TestTemplateValidityFor(t *testing.T) {
	claimed := t0.Add(90 * time.Minute)
	f := fixedTemplate()
	from, until := f.ValidityFor(claimed, time.UTC)
	y, m, d := claimed.Date()
	want := time.Date(y, m, d+31, 0, 0, 0, 0, time.UTC)
	if !from.Equal(claimed) || !until.Equal(want) {
		t.Errorf("valid_days: %v..%v, want %v..%v", from, until, claimed, want)
	}
	p := percentTemplate()
	from, until = p.ValidityFor(claimed, time.UTC)
	if !from.Equal(*p.ValidFrom) || !until.Equal(*p.ValidUntil) {
		t.Errorf("absolute: %v..%v, want %v..%v", from, until, *p.ValidFrom, *p.ValidUntil)
	}
}

// A coupon claimed on day D and valid N days is valid until the end of day
// D+N in the deployment's zone: the midnight that starts D+N+1 there, also
// across a change of the clocks and when the claim's UTC day differs.
func TestValidDaysEndOfDay(t *testing.T) {
	load := func(name string) *time.Location {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		return loc
	}
	ny, tokyo, santiago := load("America/New_York"), load("Asia/Tokyo"), load("America/Santiago")
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := []struct {
		name    string
		loc     *time.Location
		claimed string
		days    int64
		until   string // UTC
	}{
		// 23:30 in New York on 6 March is 04:30 UTC on the 7th: day D is the 6th.
		{"NewYorkLateEvening", ny, "2026-03-07T04:30:00Z", 1, "2026-03-08T05:00:00Z"},
		// The day of the spring change has 23 hours: 8 March ends at 04:00 UTC.
		{"NewYorkSpringForwardDay", ny, "2026-03-07T15:00:00Z", 1, "2026-03-09T04:00:00Z"},
		{"NewYorkClaimedOnSpringDay", ny, "2026-03-08T12:00:00Z", 2, "2026-03-11T04:00:00Z"},
		// 1 November has 25 hours: it ends at 05:00 UTC.
		{"NewYorkFallBackDay", ny, "2026-10-31T12:00:00Z", 1, "2026-11-02T05:00:00Z"},
		{"NewYorkInTheRepeatedHour", ny, "2026-11-01T05:30:00Z", 1, "2026-11-03T05:00:00Z"},
		// 00:30 in Tokyo on 2 March is 15:30 UTC on the 1st: day D is the 2nd.
		{"TokyoJustAfterMidnight", tokyo, "2026-03-01T15:30:00Z", 1, "2026-03-03T15:00:00Z"},
		{"TokyoJustBeforeMidnight", tokyo, "2026-03-01T14:59:59Z", 1, "2026-03-02T15:00:00Z"},
		// Santiago skips from 00:00 to 01:00 on 6 September 2026: that day
		// starts at 01:00 local (04:00 UTC).
		{"SantiagoMidnightSkipped", santiago, "2026-09-04T16:00:00Z", 1, "2026-09-06T04:00:00Z"},
		{"UTC", time.UTC, "2026-03-08T23:59:59Z", 30, "2026-04-08T00:00:00Z"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tp := fixedTemplate()
			tp.ValidDays = c.days
			claimed := utc(c.claimed)
			from, until := tp.ValidityFor(claimed, c.loc)
			if !from.Equal(claimed) || !until.Equal(utc(c.until)) {
				t.Fatalf("%v..%v, want until %s (%s local)", from, until, c.until, utc(c.until).In(c.loc))
			}
			if l := until.In(c.loc); l.Add(-time.Nanosecond).Day() == l.Day() {
				t.Fatalf("until %s is not the start of a day", l)
			}
		})
	}
}

func TestCouponEffectiveStatus(t *testing.T) {
	c := models.Coupon{Status: models.CouponIssued, ValidUntil: t0}
	cases := []struct {
		status string
		now    time.Time
		want   string
	}{
		{models.CouponIssued, t0.Add(-time.Nanosecond), models.CouponIssued},
		{models.CouponIssued, t0, models.CouponExpired},
		{models.CouponUsed, t0.Add(time.Hour), models.CouponUsed},
		{models.CouponRevoked, t0.Add(time.Hour), models.CouponRevoked},
	}
	for _, tc := range cases {
		c.Status = tc.status
		if got := c.EffectiveStatus(tc.now); got != tc.want {
			t.Errorf("%s at %v = %s, want %s", tc.status, tc.now, got, tc.want)
		}
		if v := c.View(tc.now, "EUR"); v.Status != tc.want || v.Currency != "EUR" {
			t.Errorf("view of %s at %v = %s, want %s", tc.status, tc.now, v.Status, tc.want)
		}
	}
}

// A held coupon is shown held until its hold's time, then as the issued (or
// expired) coupon the expiry makes it, whether or not the sweeper ran.
func TestCouponEffectiveStatusOfAHold(t *testing.T) {
	until := t0.Add(-time.Hour)
	c := models.Coupon{Status: models.CouponHeld, ValidUntil: t0, HoldExpiresAt: &until}
	cases := []struct {
		now  time.Time
		want string
	}{
		{until.Add(-time.Microsecond), models.CouponHeld},
		{until, models.CouponIssued},
		{t0.Add(-time.Microsecond), models.CouponIssued},
		{t0, models.CouponExpired},
	}
	for _, tc := range cases {
		if got := c.EffectiveStatus(tc.now); got != tc.want {
			t.Errorf("held until %v, at %v = %s, want %s", until, tc.now, got, tc.want)
		}
	}
}

func TestCampaignValidate(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		for _, c := range []models.Campaign{
			{Name: "Spring", BudgetCents: 0},
			{Name: " Spring ", BudgetCents: 1},
			{Name: strings.Repeat("ß", 100), BudgetCents: models.MaxBudgetCents},
		} {
			if err := c.Validate(); err != nil {
				t.Errorf("%q %d: %v", c.Name, c.BudgetCents, err)
			}
		}
	})
	for name, c := range map[string]struct {
		c     models.Campaign
		field string
	}{
		"ErrNameEmpty":     {models.Campaign{Name: ""}, "name"},
		"ErrNameBlank":     {models.Campaign{Name: "   "}, "name"},
		"ErrNameTooLong":   {models.Campaign{Name: strings.Repeat("x", 101)}, "name"},
		"ErrNameControl":   {models.Campaign{Name: "a\x7fb"}, "name"},
		"ErrBudgetNeg":     {models.Campaign{Name: "x", BudgetCents: -1}, "budget_cents"},
		"ErrBudgetHuge":    {models.Campaign{Name: "x", BudgetCents: models.MaxBudgetCents + 1}, "budget_cents"},
		"ErrBudgetHugeMax": {models.Campaign{Name: "x", BudgetCents: 1<<63 - 1}, "budget_cents"},
	} {
		t.Run(name, func(t *testing.T) { assertInvalid(t, c.c.Validate(), c.field) })
	}
}

func TestValidateUserID(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		for _, s := range []string{"a", "user-1", "A.b_c:d@e-f", strings.Repeat("9", 64)} {
			if err := models.ValidateUserID("user_id", s); err != nil {
				t.Errorf("%q: %v", s, err)
			}
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, s := range []string{"", strings.Repeat("a", 65), "a b", "a|b", "a,b", "a=b", "a;b", "é", "a\x00", "a/b"} {
			assertInvalid(t, models.ValidateUserID("user_id", s), "user_id")
		}
	})
}

func TestValidateIdempotencyKey(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		for _, s := range []string{"k", "a b|c,d=e;f~", strings.Repeat("k", 128)} {
			if err := models.ValidateIdempotencyKey(s); err != nil {
				t.Errorf("%q: %v", s, err)
			}
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, s := range []string{"", strings.Repeat("k", 129), "k\n", "k\x7f", "ké"} {
			assertInvalid(t, models.ValidateIdempotencyKey(s), "Idempotency-Key")
		}
	})
}

func TestErrorCode(t *testing.T) {
	if models.ErrorCode(nil) != models.CodeOK {
		t.Error("nil is not CodeOK")
	}
	err := models.Errorf(models.CodeSoldOut, "gone")
	if models.ErrorCode(err) != models.CodeSoldOut || !models.IsCode(err, models.CodeSoldOut) {
		t.Errorf("ErrorCode(%v) = %d", err, models.ErrorCode(err))
	}
	if models.CodeIdempotencyMismatch.Word() != "idempotency_mismatch" || models.CodeInProgress.Word() != "in_progress" ||
		models.Code(1234).Word() != "internal" {
		t.Error("code words changed")
	}
}
