package core

import (
	"context"
	"strconv"
	"time"

	"github.com/couponsvc/couponsvc/models"
)

// claimRule encodes models.Template.ClaimRefusal, and the status of the
// template's campaign, for coupon_deduct.lua: "status|opens|ends|until",
// times in unix milliseconds, ends and until empty when there is none; status
// is the template's, or "campaign" when the template is active and its
// campaign paused (docs/flows.md). The script gets the caller's clock in whole
// milliseconds (rounded down), so opens is rounded up and ends and until
// down: at a boundary the script refuses whenever ClaimRefusal does.
func claimRule(t *models.Template, campaignStatus string) string {
	b := make([]byte, 0, 64)
	if t.Status == models.TemplateActive && campaignStatus == models.CampaignPaused {
		b = append(b, ruleCampaignPaused...)
	} else {
		b = append(b, t.Status...)
	}
	b = append(b, '|')
	b = strconv.AppendInt(b, ceilMilli(t.ClaimStartsAt), 10)
	b = append(b, '|')
	if t.ClaimEndsAt != nil {
		b = strconv.AppendInt(b, t.ClaimEndsAt.UnixMilli(), 10)
	}
	b = append(b, '|')
	if t.ValidDays == 0 && t.ValidUntil != nil {
		b = strconv.AppendInt(b, t.ValidUntil.UnixMilli(), 10)
	}
	return string(b)
}

// ruleCampaignPaused is the status word of a claim rule whose template is
// active in a paused campaign.
const ruleCampaignPaused = "campaign"

// ceilMilli is t in unix milliseconds, rounded up.
func ceilMilli(t time.Time) int64 {
	ms := t.UnixMilli() // rounded down, also before 1970
	if time.UnixMilli(ms).Before(t) {
		ms++
	}
	return ms
}

// PublishClaimRule writes the template's claim rule to Redis, where every
// instance's claims read it. Callers run it inside the transaction that
// changes the template, after the change and before the commit, and answer
// after both: a change of status or claim window then binds every instance
// from the answer on; the row's lock orders concurrent changes, so Redis
// keeps the last one committed; and a failed write rolls the change back.
func (s *Core) PublishClaimRule(ctx context.Context, t *models.Template, campaignStatus string) error {
	if err := s.Rdb.Set(ctx, s.Keys.rule(t.CampaignID, t.ID), claimRule(t, campaignStatus), 0).Err(); err != nil {
		return RedisError(err)
	}
	return nil
}

// DropClaimRule deletes the template's claim rule after a change that may or
// may not have reached Redis and was not committed: the next claim finds it
// missing and loads it from the database, the authority.
func (s *Core) DropClaimRule(ctx context.Context, t *models.Template) {
	if err := s.Rdb.Del(context.WithoutCancel(ctx), s.Keys.rule(t.CampaignID, t.ID)).Err(); err != nil {
		s.Log.Warn("delete a claim rule the database may not have; claims may follow it until it is reloaded",
			"template", t.ID, "err", err)
	}
}

// CloseClaimRule writes a claim rule that refuses every claim of the
// template as archived: a delete closes the gate before it looks for
// reservations and rows, so that no claim reserves behind its back
// (docs/flows.md#delete). Callers hold the rows of the template and its
// campaign locked, and write the real rule back (PublishClaimRule) when they
// do not delete.
func (s *Core) CloseClaimRule(ctx context.Context, t *models.Template) error {
	closed := *t
	closed.Status = models.TemplateArchived
	return s.PublishClaimRule(ctx, &closed, "")
}

// PendingOf counts the reservations of template tid in its campaign's
// pending set: claims that reserved and have not yet written (or given back)
// their coupon.
func (s *Core) PendingOf(ctx context.Context, cid, tid int64) (int, error) {
	members, err := s.Rdb.ZRange(ctx, s.Keys.Pending(cid), 0, -1).Result()
	if err != nil {
		return 0, RedisError(err)
	}
	n := 0
	for _, m := range members {
		if pm, ok := ParsePendingMember(m); ok && pm.TemplateID == tid {
			n++
		}
	}
	return n, nil
}

// DropTemplateKeys deletes a deleted template's counters and claim rule.
// The caller holds the campaign's load lock, so that no load that read the
// template before its delete writes them again; a claim that still finds
// the template in a cache then finds its counters missing, loads the
// campaign without it and answers not_found (claims.Reserve).
func (s *Core) DropTemplateKeys(ctx context.Context, cid, tid int64) error {
	err := s.Rdb.Del(ctx, s.Keys.Template(cid, tid), s.Keys.Free(cid, tid), s.Keys.Users(cid, tid),
		s.Keys.rule(cid, tid)).Err()
	if err != nil {
		return RedisError(err)
	}
	return nil
}

// DropCampaignKeys deletes a deleted campaign's budget and reservation sets
// (it had no templates, so nothing is pending in them).
func (s *Core) DropCampaignKeys(ctx context.Context, cid int64) error {
	err := s.Rdb.Del(ctx, s.Keys.Budget(cid), s.Keys.Pending(cid), s.Keys.Recent(cid), s.loadGenKey(cid),
		s.Keys.Reconciled(cid)).Err()
	if err != nil {
		return RedisError(err)
	}
	return nil
}

// ClaimRule returns the claim rule string PublishClaimRule writes for the
// template (claimRule), for the tests that hold coupon_deduct.lua to
// ClaimDecision.
func ClaimRule(t *models.Template, campaignStatus string) string { return claimRule(t, campaignStatus) }

// ClaimCounters are the counters coupon_deduct.lua reads to decide a claim:
// the campaign's budget left (-1: no budget), the template's stock left,
// the value of one of its coupons, its per-user limit, and how many of its
// coupons the user holds (their ordinals); an anonymous shopper's claim
// has no user and no limit (docs/shared-codes.md).
type ClaimCounters struct {
	Budget, Remaining, Value, Limit, Held int64
	Anonymous                             bool
	// CampaignLimit is the campaign's per-customer cap (0: none) and
	// CampaignHeld the user's coupons of all its templates, this one's
	// included (docs/automatic-offers.md).
	CampaignLimit, CampaignHeld int64
}

// ClaimDecision is the one Go statement of the claim rule that
// coupon_deduct.lua applies in Redis (the script stays its authority
// there), in the script's order: whether the template takes claims at now
// (models.Template.ClaimRefusal; an active template of a paused campaign
// refuses as the campaign's), the budget, the stock, the user's limit. It
// returns the refusal, nil when the claim would pass. A checkout that only
// asks whether a claim would pass (a validation with a shared code) calls
// it; lua/claimrule_test.go holds the script to the same answers.
func ClaimDecision(t *models.Template, campaignPaused bool, c ClaimCounters, now time.Time) error {
	if t.Status == models.TemplateActive && campaignPaused {
		return models.NotClaimable(models.RefusedCampaignPaused, time.Time{})
	}
	if err := t.Claimable(now); err != nil {
		return err
	}
	switch {
	case c.Budget >= 0 && c.Budget < c.Value:
		return models.Errorf(models.CodeBudgetExhausted, "the campaign's budget is used up")
	case c.Remaining <= 0:
		return models.Errorf(models.CodeSoldOut, "this coupon is sold out")
	case !c.Anonymous && c.Held >= c.Limit:
		return models.Errorf(models.CodeUserLimitReached, "you already hold the most coupons of this kind you may (%d)", c.Limit)
	case !c.Anonymous && c.CampaignLimit > 0 && c.CampaignHeld >= c.CampaignLimit:
		return CampaignLimitRefusal(c.CampaignLimit)
	}
	return nil
}

// CampaignLimitRefusal is the refusal of a claim past the campaign's
// per-customer cap.
func CampaignLimitRefusal(limit int64) error {
	return models.Errorf(models.CodeCampaignLimit, "you already hold the most coupons of this campaign you may (%d)", limit)
}
