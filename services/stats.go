package services

import (
	"context"
	"fmt"
	"time"

	"couponsvc/models"
)

// MaxStatsHours bounds the per-hour series of TemplateStats (one week).
const MaxStatsHours = 7 * 24

// TemplateFigures are the live figures of one template, counted in the
// database (the authority) except Remaining, which is what Redis has left to
// hand out.
type TemplateFigures struct {
	TemplateID int64 `json:"template_id"`
	CampaignID int64 `json:"campaign_id"`
	TotalStock int64 `json:"total_stock"`
	// Claimed counts every coupon ever claimed, revoked ones included.
	Claimed int64 `json:"claimed"`
	// Issued counts coupons held and not used, still valid or not yet valid.
	Issued int64 `json:"issued"`
	// Expired counts issued coupons past their validity.
	Expired int64 `json:"expired"`
	// Redeemed counts coupons used by an order right now.
	Redeemed int64 `json:"redeemed"`
	// Refunded counts redemptions undone by a refund.
	Refunded int64 `json:"refunded"`
	// Revoked counts revoked coupons (by an admin, or by a refund under the
	// recycle policy).
	Revoked int64 `json:"revoked"`
	// Live counts coupons that hold a slot of the stock.
	Live int64 `json:"live"`
	// ValueIssuedCents is the budget value the live coupons hold.
	ValueIssuedCents int64 `json:"value_issued_cents"`
	// Remaining is the stock Redis has left; nil when Redis cannot tell.
	Remaining *int64 `json:"remaining"`
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
	Hours []HourCount `json:"hours"`
}

// CampaignFigures are a campaign's budget and what its live coupons hold.
type CampaignFigures struct {
	CampaignID       int64 `json:"campaign_id"`
	BudgetCents      int64 `json:"budget_cents"`
	ValueIssuedCents int64 `json:"value_issued_cents"`
	// BudgetLeftCents is nil for a campaign without a budget.
	BudgetLeftCents *int64 `json:"budget_left_cents"`
}

// TemplateStats returns the figures of one template and its activity over the
// last hours hours (1..MaxStatsHours; 24 when out of range).
// Errors: CodeNotFound, CodeUnavailable.
func (s *Service) TemplateStats(ctx context.Context, id int64, hours int) (*TemplateStats, error) {
	if hours < 1 || hours > MaxStatsHours {
		hours = 24
	}
	view, err := s.ViewTemplate(ctx, id)
	if err != nil {
		return nil, err
	}
	figs, err := s.templateFigures(ctx, []TemplateView{*view})
	if err != nil {
		return nil, err
	}
	out := &TemplateStats{TemplateFigures: figs[0]}
	now := s.now()
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
func (s *Service) perHour(ctx context.Context, table, column string, templateID int64, from time.Time) (map[int64]int64, error) {
	bucket := "FLOOR(UNIX_TIMESTAMP(" + column + ") / 3600)"
	if s.dialect == DialectSQLite {
		bucket = "(CAST(strftime('%s', " + column + ") AS INTEGER) / 3600)"
	}
	var rows []struct {
		H int64
		N int64
	}
	// table and column are constants of this file, never input.
	q := fmt.Sprintf("SELECT %s AS h, COUNT(*) AS n FROM %s WHERE template_id = ? AND %s >= ? GROUP BY h", bucket, table, column)
	if err := s.db.WithContext(ctx).Raw(q, templateID, from).Scan(&rows).Error; err != nil {
		return nil, dbError(table, err)
	}
	out := make(map[int64]int64, len(rows))
	for _, r := range rows {
		out[r.H] += r.N
	}
	return out, nil
}

// ListTemplateFigures returns the figures of every template, keyed by
// template id. Errors: CodeUnavailable.
func (s *Service) ListTemplateFigures(ctx context.Context) (map[int64]TemplateFigures, error) {
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
func (s *Service) ListCampaignFigures(ctx context.Context) (map[int64]CampaignFigures, error) {
	camps, err := s.ListCampaigns(ctx)
	if err != nil {
		return nil, err
	}
	var rows []struct {
		CampaignID int64
		V          int64
	}
	err = s.db.WithContext(ctx).Raw(`SELECT campaign_id, COALESCE(SUM(value_cents), 0) AS v FROM user_coupons
		WHERE slot IS NOT NULL GROUP BY campaign_id`).Scan(&rows).Error
	if err != nil {
		return nil, dbError("coupons", err)
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

// templateFigures counts the coupons and refunds of the given templates.
func (s *Service) templateFigures(ctx context.Context, views []TemplateView) ([]TemplateFigures, error) {
	out := make([]TemplateFigures, len(views))
	index := make(map[int64]int, len(views))
	ids := make([]int64, len(views))
	for i, v := range views {
		out[i] = TemplateFigures{TemplateID: v.ID, CampaignID: v.CampaignID, TotalStock: v.TotalStock, Remaining: v.Remaining}
		index[v.ID] = i
		ids[i] = v.ID
	}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		TemplateID int64
		Status     string
		N          int64
		Expired    int64
		Live       int64
		Value      int64
	}
	err := s.db.WithContext(ctx).Raw(`SELECT template_id, status, COUNT(*) AS n,
			COALESCE(SUM(CASE WHEN status = ? AND valid_until <= ? THEN 1 ELSE 0 END), 0) AS expired,
			COALESCE(SUM(CASE WHEN slot IS NOT NULL THEN 1 ELSE 0 END), 0) AS live,
			COALESCE(SUM(CASE WHEN slot IS NOT NULL THEN value_cents ELSE 0 END), 0) AS value
		FROM user_coupons WHERE template_id IN ? GROUP BY template_id, status`,
		models.CouponIssued, s.now(), ids).Scan(&rows).Error
	if err != nil {
		return nil, dbError("coupons", err)
	}
	for _, r := range rows {
		f := &out[index[r.TemplateID]]
		f.Claimed += r.N
		f.Live += r.Live
		f.ValueIssuedCents += r.Value
		switch r.Status {
		case models.CouponIssued:
			f.Issued += r.N - r.Expired
			f.Expired += r.Expired
		case models.CouponUsed:
			f.Redeemed += r.N
		case models.CouponRevoked:
			f.Revoked += r.N
		}
	}
	var refunds []struct {
		TemplateID int64
		N          int64
	}
	err = s.db.WithContext(ctx).Raw(`SELECT template_id, COUNT(*) AS n FROM coupon_use_log
		WHERE undo_flag = ? AND template_id IN ? GROUP BY template_id`, true, ids).Scan(&refunds).Error
	if err != nil {
		return nil, dbError("use log", err)
	}
	for _, r := range refunds {
		out[index[r.TemplateID]].Refunded += r.N
	}
	return out, nil
}
