package lua_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/lua"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/core"
)

// The claim rule is written once in Go (core.ClaimDecision) and applied in
// Redis by coupon_deduct.lua: on the same template, counters and time both
// give the same answer.
func TestClaimRuleGoAndLuaAgree(t *testing.T) {
	f := newFixture(t)
	at := time.UnixMilli(now0).UTC()
	before, after := at.Add(-time.Hour), at.Add(time.Hour)
	type tmpl struct {
		status         string
		starts         time.Time
		ends, until    *time.Time
		campaignPaused bool
		budget, remain int64
		value, limit   int64
		held           string
		anonymous      bool
		// campaignCap is the campaign's per-customer cap (0: none) and
		// otherHeld the user's ordinals of another template of it.
		campaignCap int64
		otherHeld   string
	}
	open := tmpl{status: models.TemplateActive, starts: before, budget: -1, remain: 5, value: 100, limit: 2}
	with := func(edit func(*tmpl)) tmpl { c := open; edit(&c); return c }
	cases := []struct {
		name string
		tmpl
		want models.Code
	}{
		{"Open", open, models.CodeOK},
		{"Paused", with(func(c *tmpl) { c.status = models.TemplatePaused }), models.CodeNotClaimable},
		{"Archived", with(func(c *tmpl) { c.status = models.TemplateArchived }), models.CodeNotClaimable},
		{"CampaignPaused", with(func(c *tmpl) { c.campaignPaused = true }), models.CodeNotClaimable},
		{"NotYet", with(func(c *tmpl) { c.starts = after }), models.CodeNotClaimable},
		{"OpensNow", with(func(c *tmpl) { c.starts = at }), models.CodeOK},
		{"Closed", with(func(c *tmpl) { c.ends = &before }), models.CodeNotClaimable},
		{"ClosesNow", with(func(c *tmpl) { c.ends = &at }), models.CodeNotClaimable},
		{"BornExpired", with(func(c *tmpl) { c.until = &at }), models.CodeNotClaimable},
		{"BudgetBelowOneCoupon", with(func(c *tmpl) { c.budget = 99 }), models.CodeBudgetExhausted},
		{"BudgetOfOneCoupon", with(func(c *tmpl) { c.budget = 100 }), models.CodeOK},
		{"SoldOut", with(func(c *tmpl) { c.remain = 0 }), models.CodeSoldOut},
		{"BudgetBeforeStock", with(func(c *tmpl) { c.remain, c.budget = 0, 0 }), models.CodeBudgetExhausted},
		{"UserAtLimit", with(func(c *tmpl) { c.held = "1,2" }), models.CodeUserLimitReached},
		{"UserBelowLimit", with(func(c *tmpl) { c.held = "2" }), models.CodeOK},
		{"StockBeforeLimit", with(func(c *tmpl) { c.held, c.remain = "1,2", 0 }), models.CodeSoldOut},
		{"AnonymousHasNoLimit", with(func(c *tmpl) { c.anonymous = true }), models.CodeOK},
		{"RuleBeforeBudget", with(func(c *tmpl) { c.status, c.budget = models.TemplatePaused, 0 }), models.CodeNotClaimable},
		{"CampaignCapAcrossTemplates", with(func(c *tmpl) { c.campaignCap, c.held, c.otherHeld = 3, "1", "1,2" }), models.CodeCampaignLimit},
		{"CampaignCapBelow", with(func(c *tmpl) { c.campaignCap, c.otherHeld = 3, "1,2" }), models.CodeOK},
		{"UserLimitBeforeCampaignCap", with(func(c *tmpl) { c.campaignCap, c.held, c.otherHeld = 2, "1,2", "1" }), models.CodeUserLimitReached},
		{"AnonymousHasNoCampaignCap", with(func(c *tmpl) { c.campaignCap, c.anonymous = 1, true }), models.CodeOK},
		// The paths that give a user a coupon through the script (a claim,
		// an issue or import job's row, a shared code, an automatic offer)
		// meet the cap at exactly per_customer_limit coupons held.
		{"CampaignCapCountsThisTemplate", with(func(c *tmpl) { c.campaignCap, c.limit, c.held = 2, 5, "1,2" }), models.CodeCampaignLimit},
		{"CampaignCapOtherTemplatesOnly", with(func(c *tmpl) { c.campaignCap, c.otherHeld = 2, "1,2" }), models.CodeCampaignLimit},
		{"CampaignCapOneBelow", with(func(c *tmpl) { c.campaignCap, c.otherHeld = 2, "1" }), models.CodeOK},
		{"RuleBeforeCampaignCap", with(func(c *tmpl) { c.campaignCap, c.otherHeld, c.status = 2, "1,2", models.TemplatePaused }), models.CodeNotClaimable},
		{"BudgetBeforeCampaignCap", with(func(c *tmpl) { c.campaignCap, c.otherHeld, c.budget = 2, "1,2", 0 }), models.CodeBudgetExhausted},
		{"StockBeforeCampaignCap", with(func(c *tmpl) { c.campaignCap, c.otherHeld, c.remain = 2, "1,2", 0 }), models.CodeSoldOut},
	}
	luaCode := map[int64]models.Code{lua.DeductReserved: models.CodeOK, lua.DeductNotClaimable: models.CodeNotClaimable,
		lua.DeductBudgetExhausted: models.CodeBudgetExhausted, lua.DeductSoldOut: models.CodeSoldOut, lua.DeductUserLimit: models.CodeUserLimitReached,
		lua.DeductCampaignLimit: models.CodeCampaignLimit}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tp := &models.Template{Status: tc.status, ClaimStartsAt: tc.starts, ClaimEndsAt: tc.ends, ValidUntil: tc.until, PerUserLimit: tc.limit}
			campaign := models.CampaignActive
			if tc.campaignPaused {
				campaign = models.CampaignPaused
			}
			var held int64
			if tc.held != "" {
				held = int64(len(tc.held)+1) / 2 // "1,2": two ordinals
			}
			goErr := core.ClaimDecision(tp, tc.campaignPaused, core.ClaimCounters{Budget: tc.budget, Remaining: tc.remain, Value: tc.value,
				Limit: tc.limit, Held: held, Anonymous: tc.anonymous, CampaignLimit: tc.campaignCap,
				CampaignHeld: held + core.CountOrdinals(tc.otherHeld)}, at)
			id := 200 + i
			f.seed(t, tc.budget, id, tplState{remaining: tc.remain, next: 1, total: 10, limit: tc.limit, value: tc.value})
			if err := f.rdb.Set(f.ctx, f.rule(id), core.ClaimRule(tp, campaign), 0).Err(); err != nil {
				t.Fatal(err)
			}
			user := "u1"
			args := []any{id, user, fmt.Sprintf("k%d", i), now0, ttl, attempt}
			if tc.anonymous {
				args[1] = ""
				args = append(args, "anon")
			} else if tc.held != "" {
				if err := f.rdb.HSet(f.ctx, f.users(id), user, tc.held).Err(); err != nil {
					t.Fatal(err)
				}
			}
			keys := f.deductKeys(id, fmt.Sprintf("k%d", i))
			if tc.campaignCap > 0 && !tc.anonymous {
				other := id + 1000
				f.seed(t, tc.budget, other, tplState{remaining: 5, next: 1, total: 10, limit: 5, value: tc.value})
				if tc.otherHeld != "" {
					if err := f.rdb.HSet(f.ctx, f.users(other), user, tc.otherHeld).Err(); err != nil {
						t.Fatal(err)
					}
				}
				keys = append(keys, f.tpl(other), f.users(other))
				args = append(args, "", tc.campaignCap)
			}
			r := f.deductArgs(t, keys, args...)
			got, ok := luaCode[r.code]
			if !ok {
				t.Fatalf("coupon_deduct.lua answered %d (%s)", r.code, r.detail)
			}
			if got != tc.want || models.ErrorCode(goErr) != tc.want {
				t.Fatalf("coupon_deduct.lua says %s, ClaimDecision %v: want %s", got.Word(), goErr, tc.want.Word())
			}
		})
	}
}
