package pages

import (
	"fmt"
	"time"

	"github.com/couponsvc/couponsvc/services/reports"
)

// newReportChart lays out the days of a redemption report as the template
// page's chart does its hours (the "chart" partial, drawn on the server as
// SVG: no script, nothing inline for the CSP to refuse): a pair of bars a
// day, the discount given and the discount refunded, a y axis in money.
func (p *Pages) newReportChart(days []reports.ReportRow, totals reports.ReportRow) chart {
	c := chart{Width: 720, Height: 240, AxisWidth: 60, PlotTop: 12, PlotBottom: 208, PlotLeft: 64, PlotRight: 712, LabelX: 58, LabelY: 228}
	var top int64
	for _, d := range days {
		top = max(top, d.DiscountCents, d.RefundedDiscountCents)
	}
	c.Total = [2]int64{totals.DiscountCents, totals.RefundedDiscountCents}
	c.Empty = totals.Redemptions == 0 && totals.Refunds == 0
	c.Label = fmt.Sprintf("Discount given and refunded per day over %d days: %s given in %d redemptions, %s refunded in %d refunds",
		len(days), p.money.format(totals.DiscountCents), totals.Redemptions, p.money.format(totals.RefundedDiscountCents), totals.Refunds)
	// Ticks at round amounts of whole currency units.
	step := niceStep((top+99)/100) * 100
	scaleTop := (top + step - 1) / step * step
	if scaleTop == 0 {
		scaleTop = 4 * step
	}
	plotH := float64(c.PlotBottom - c.PlotTop)
	for v := int64(0); v <= scaleTop; v += step {
		c.YTicks = append(c.YTicks, chartTick{Pos: float64(c.PlotBottom) - float64(v)/float64(scaleTop)*plotH, Label: p.money.format(v)})
	}
	if len(days) == 0 {
		return c
	}
	slot := float64(c.PlotRight-c.PlotLeft) / float64(len(days))
	barW := max(slot*0.36, 1)
	every := max(len(days)/7, 1)
	for i, d := range days {
		x := float64(c.PlotLeft) + float64(i)*slot
		day, _ := time.Parse(time.DateOnly, d.Day)
		for j, v := range []int64{d.DiscountCents, d.RefundedDiscountCents} {
			bh := float64(v) / float64(scaleTop) * plotH
			if v > 0 {
				bh = max(bh, minBarHeight)
			}
			class, what := "bar-discount", fmt.Sprintf("%s given in %d %s", p.money.format(v), d.Redemptions, plural(d.Redemptions, "redemption", "redemptions"))
			if j == 1 {
				class, what = "bar-refunded", fmt.Sprintf("%s refunded in %d %s", p.money.format(v), d.Refunds, plural(d.Refunds, "refund", "refunds"))
			}
			c.Bars = append(c.Bars, chartBar{X: x + slot*0.12 + float64(j)*barW, Y: float64(c.PlotBottom) - bh, W: barW, H: bh,
				Class: class, Title: day.Format("Mon 2 Jan 2006") + ": " + what})
		}
		if (len(days)-1-i)%every == 0 {
			c.XTicks = append(c.XTicks, c.xTick(x+slot/2, day.Format("2 Jan")))
		}
	}
	return c
}
