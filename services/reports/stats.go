package reports

import (
	"context"
	"fmt"
	"time"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"
)

// MaxStatsHours bounds the per-hour series of TemplateStats (one week).
const MaxStatsHours = 7 * 24

// TemplateFigures are the live figures of one template, counted in the
// database (the authority) except Remaining, which is what Redis has left to
// hand out. They add up; these identities hold whenever the database keeps
// its invariants (an issued or used coupon always holds a slot):
//
//	claimed      = holding_slot + revoked_slot_returned
//	holding_slot = issued + expired + redeemed + revoked_slot_kept
//	revoked      = revoked_slot_kept + revoked_slot_returned
//	redemptions  = redeemed + refunded
//	total_stock  = remaining + holding_slot + in_flight_or_drift
type TemplateFigures struct {
	TemplateID int64 `json:"template_id"`
	CampaignID int64 `json:"campaign_id"`
	TotalStock int64 `json:"total_stock"`
	// Claimed counts every coupon ever claimed, once each, whatever became
	// of it (revoked ones included).
	Claimed int64 `json:"claimed"`
	// Issued counts coupons held and not used, still valid or not yet valid.
	Issued int64 `json:"issued"`
	// Expired counts issued coupons past their validity.
	Expired int64 `json:"expired"`
	// Held counts coupons held for an order by the online checkout right
	// now (they hold their slots).
	Held int64 `json:"held"`
	// Redeemed counts coupons used by an order right now.
	Redeemed int64 `json:"redeemed"`
	// Refunded counts redemptions undone by a refund (under either policy);
	// a coupon used, refunded, used and refunded again counts twice.
	Refunded int64 `json:"refunded"`
	// Redemptions counts every use of a coupon by an order, refunded ones
	// included: redeemed + refunded.
	Redemptions int64 `json:"redemptions"`
	// Revoked counts revoked coupons (by an admin, or by a refund under the
	// recycle policy): revoked_slot_kept + revoked_slot_returned.
	Revoked int64 `json:"revoked"`
	// RevokedSlotKept counts coupons revoked without returning their stock:
	// they still hold their slot and their holder's limit.
	RevokedSlotKept int64 `json:"revoked_slot_kept"`
	// RevokedSlotReturned counts revoked coupons whose slot went back to the
	// pool (revoked with return_stock, or refunded under recycle).
	RevokedSlotReturned int64 `json:"revoked_slot_returned"`
	// HoldingSlot counts coupons that hold a slot of the stock: issued,
	// expired, used, or revoked with the slot kept.
	HoldingSlot int64 `json:"holding_slot"`
	// Live is HoldingSlot under its first name, kept for existing clients.
	Live int64 `json:"live"`
	// ValueIssuedCents is the budget value the coupons holding a slot hold.
	ValueIssuedCents int64 `json:"value_issued_cents"`
	// Remaining is the stock Redis has left; nil when Redis cannot tell. It
	// is read after the database counts.
	Remaining *int64 `json:"remaining"`
	// InFlightOrDrift is total_stock − remaining − holding_slot: stock that
	// Redis has handed out and the database shows no coupon for. A claim
	// being written counts here for a moment; a figure that stays is a drift
	// (see the reconciliation). Nil when Remaining is.
	InFlightOrDrift *int64 `json:"in_flight_or_drift"`
}

// Add adds g's counts to f (totals over templates; Remaining and
// InFlightOrDrift are not added).
func (f *TemplateFigures) Add(g TemplateFigures) {
	f.TotalStock += g.TotalStock
	f.Claimed += g.Claimed
	f.Issued += g.Issued
	f.Expired += g.Expired
	f.Held += g.Held
	f.Redeemed += g.Redeemed
	f.Refunded += g.Refunded
	f.Redemptions += g.Redemptions
	f.Revoked += g.Revoked
	f.RevokedSlotKept += g.RevokedSlotKept
	f.RevokedSlotReturned += g.RevokedSlotReturned
	f.HoldingSlot += g.HoldingSlot
	f.Live += g.Live
	f.ValueIssuedCents += g.ValueIssuedCents
}

// HourCount is one hour of a template's activity.
type HourCount struct {
	// Hour is the start of the hour (UTC).
	Hour        time.Time `json:"hour"`
	Claims      int64     `json:"claims"`
	Redemptions int64     `json:"redemptions"`
}

// TemplateStats are a template's figures and its claims and redemptions per
// hour, oldest hour first, the current hour last.
type TemplateStats struct {
	TemplateFigures
	// Currency is the template's, of value_issued_cents.
	Currency string      `json:"currency" schema:"currency"`
	Hours    []HourCount `json:"hours"`
}

// CampaignFigures are a campaign's budget and what its coupons holding a slot
// hold of it: budget_cents = budget_left_cents + value_issued_cents.
type CampaignFigures struct {
	CampaignID  int64 `json:"campaign_id"`
	BudgetCents int64 `json:"budget_cents"`
	// ValueIssuedCents is the value of the coupons holding a slot (issued,
	// expired, used, revoked with the slot kept).
	ValueIssuedCents int64 `json:"value_issued_cents"`
	// BudgetLeftCents is nil for a campaign without a budget.
	BudgetLeftCents *int64 `json:"budget_left_cents"`
}

// TemplateStats returns the figures of one template and its activity over the
// last hours hours (1..MaxStatsHours; 24 when out of range).
// Errors: CodeNotFound, CodeUnavailable.
func (s *Reports) TemplateStats(ctx context.Context, id int64, hours int) (*TemplateStats, error) {
	if hours < 1 || hours > MaxStatsHours {
		hours = 24
	}
	view, err := s.ViewTemplate(ctx, id)
	if err != nil {
		return nil, err
	}
	figs, err := s.templateFigures(ctx, []core.TemplateView{*view})
	if err != nil {
		return nil, err
	}
	out := &TemplateStats{TemplateFigures: figs[0], Currency: view.Currency}
	now := s.Clock()
	first := now.Truncate(time.Hour).Add(-time.Duration(hours-1) * time.Hour)
	out.Hours = make([]HourCount, hours)
	for i := range out.Hours {
		out.Hours[i].Hour = first.Add(time.Duration(i) * time.Hour)
	}
	claims, err := s.perHour(ctx, "user_coupons", "claimed_at", id, first)
	if err != nil {
		return nil, err
	}
	uses, err := s.perHour(ctx, "coupon_use_log", "used_at", id, first)
	if err != nil {
		return nil, err
	}
	base := first.Unix() / 3600
	for h, n := range claims {
		if i := h - base; i >= 0 && i < int64(hours) {
			out.Hours[i].Claims = n
		}
	}
	for h, n := range uses {
		if i := h - base; i >= 0 && i < int64(hours) {
			out.Hours[i].Redemptions = n
		}
	}
	return out, nil
}

// perHour counts a table's rows of one template per hour since from, keyed by
// hours since the Unix epoch. The database groups, so that a flash sale's
// million claims are not read into memory.
func (s *Reports) perHour(ctx context.Context, table, column string, templateID int64, from time.Time) (map[int64]int64, error) {
	bucket := "FLOOR(UNIX_TIMESTAMP(" + column + ") / 3600)"
	if s.Dialect == core.DialectSQLite {
		bucket = "(CAST(strftime('%s', " + column + ") AS INTEGER) / 3600)"
	}
	var rows []struct {
		H int64
		N int64
	}
	// table and column are constants of this file, never input.
	q := fmt.Sprintf("SELECT %s AS h, COUNT(*) AS n FROM %s WHERE template_id = ? AND %s >= ? GROUP BY h", bucket, table, column)
	if err := s.DB.WithContext(ctx).Raw(q, templateID, from).Scan(&rows).Error; err != nil {
		return nil, core.DBError(table, err)
	}
	out := make(map[int64]int64, len(rows))
	for _, r := range rows {
		out[r.H] += r.N
	}
	return out, nil
}

// ListTemplateFigures returns the figures of every template, keyed by
// template id. Errors: CodeUnavailable.
func (s *Reports) ListTemplateFigures(ctx context.Context) (map[int64]TemplateFigures, error) {
	views, err := s.ListTemplates(ctx, false)
	if err != nil {
		return nil, err
	}
	figs, err := s.templateFigures(ctx, views)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]TemplateFigures, len(figs))
	for _, f := range figs {
		out[f.TemplateID] = f
	}
	return out, nil
}

// ListCampaignFigures returns each campaign's budget and the value its live
// coupons hold, keyed by campaign id. Errors: CodeUnavailable.
func (s *Reports) ListCampaignFigures(ctx context.Context) (map[int64]CampaignFigures, error) {
	camps, err := s.ListCampaigns(ctx)
	if err != nil {
		return nil, err
	}
	var rows []struct {
		CampaignID int64
		V          int64
	}
	err = s.DB.WithContext(ctx).Raw(`SELECT campaign_id, COALESCE(SUM(value_cents), 0) AS v FROM user_coupons
		WHERE slot IS NOT NULL GROUP BY campaign_id`).Scan(&rows).Error
	if err != nil {
		return nil, core.DBError("coupons", err)
	}
	issued := map[int64]int64{}
	for _, r := range rows {
		issued[r.CampaignID] = r.V
	}
	out := make(map[int64]CampaignFigures, len(camps))
	for _, c := range camps {
		f := CampaignFigures{CampaignID: c.ID, BudgetCents: c.BudgetCents, ValueIssuedCents: issued[c.ID]}
		if c.BudgetCents > 0 {
			left := max(c.BudgetCents-f.ValueIssuedCents, 0)
			f.BudgetLeftCents = &left
		}
		out[c.ID] = f
	}
	return out, nil
}

// templateFigures counts the coupons and redemptions of the given templates,
// then reads what Redis has left: a claim between the two reads shows as in
// flight, never as a negative figure.
func (s *Reports) templateFigures(ctx context.Context, views []core.TemplateView) ([]TemplateFigures, error) {
	out := make([]TemplateFigures, len(views))
	index := make(map[int64]int, len(views))
	ids := make([]int64, len(views))
	ts := make([]models.Template, len(views))
	for i, v := range views {
		out[i] = TemplateFigures{TemplateID: v.ID, CampaignID: v.CampaignID, TotalStock: v.TotalStock}
		index[v.ID] = i
		ids[i] = v.ID
		ts[i] = v.Template
	}
	if len(ids) == 0 {
		return out, nil
	}
	// One row per template, status and whether the coupon still holds its
	// slot: every figure is a sum of these.
	var rows []struct {
		TemplateID int64
		Status     string
		Returned   int64
		N          int64
		Expired    int64
		Value      int64
	}
	err := s.DB.WithContext(ctx).Raw(`SELECT template_id, status,
			CASE WHEN slot IS NULL THEN 1 ELSE 0 END AS returned, COUNT(*) AS n,
			COALESCE(SUM(CASE WHEN status = ? AND valid_until <= ? THEN 1 ELSE 0 END), 0) AS expired,
			COALESCE(SUM(value_cents), 0) AS value
		FROM user_coupons WHERE template_id IN ?
		GROUP BY template_id, status, CASE WHEN slot IS NULL THEN 1 ELSE 0 END`,
		models.CouponIssued, s.Clock(), ids).Scan(&rows).Error
	if err != nil {
		return nil, core.DBError("coupons", err)
	}
	for _, r := range rows {
		f := &out[index[r.TemplateID]]
		f.Claimed += r.N
		if r.Returned == 0 {
			f.HoldingSlot += r.N
			f.ValueIssuedCents += r.Value
		}
		switch r.Status {
		case models.CouponIssued:
			f.Issued += r.N - r.Expired
			f.Expired += r.Expired
		case models.CouponHeld:
			f.Held += r.N
		case models.CouponUsed:
			f.Redeemed += r.N
		case models.CouponRevoked:
			f.Revoked += r.N
			if r.Returned == 0 {
				f.RevokedSlotKept += r.N
			} else {
				f.RevokedSlotReturned += r.N
			}
		}
	}
	var uses []struct {
		TemplateID int64
		N          int64
		Undone     int64
	}
	err = s.DB.WithContext(ctx).Raw(`SELECT template_id, COUNT(*) AS n,
			COALESCE(SUM(CASE WHEN undo_flag = ? THEN 1 ELSE 0 END), 0) AS undone
		FROM coupon_use_log WHERE template_id IN ? GROUP BY template_id`, true, ids).Scan(&uses).Error
	if err != nil {
		return nil, core.DBError("use log", err)
	}
	for _, r := range uses {
		f := &out[index[r.TemplateID]]
		f.Redemptions += r.N
		f.Refunded += r.Undone
	}
	after, err := s.WithRemaining(ctx, ts)
	if err != nil {
		return nil, err
	}
	for i := range out {
		f := &out[i]
		f.Live = f.HoldingSlot
		if r := after[i].Remaining; r != nil {
			left := *r
			gap := f.TotalStock - left - f.HoldingSlot
			f.Remaining, f.InFlightOrDrift = &left, &gap
		}
	}
	return out, nil
}
