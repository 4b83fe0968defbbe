package pages

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/services/reports"

	qrcode "github.com/skip2/go-qrcode"
)

// qrSVG draws a QR code of a coupon code as an inline SVG (one path of dark
// modules with the quiet zone), so that the wallet needs no image request and
// no script. The code is from the coupon alphabet; nothing of it reaches the
// markup but the modules.
func qrSVG(code string) template.HTML {
	q, err := qrcode.New(code, qrcode.Medium)
	if err != nil {
		return ""
	}
	bm := q.Bitmap()
	n := len(bm)
	var d strings.Builder
	for y, row := range bm {
		for x := 0; x < len(row); x++ {
			if !row[x] {
				continue
			}
			run := 1
			for x+run < len(row) && row[x+run] {
				run++
			}
			fmt.Fprintf(&d, "M%d %dh%dv1h-%dz", x, y, run, run)
			x += run - 1
		}
	}
	// The markup is built from numbers only: safe to mark as HTML.
	return template.HTML(fmt.Sprintf(`<svg class="qr" viewBox="0 0 %d %d" role="img" aria-label="QR code of the coupon code" shape-rendering="crispEdges"><rect width="%d" height="%d" fill="#fff"/><path fill="#000" d="%s"/></svg>`,
		n, n, n, n, d.String()))
}

// chart is a bar chart of claims and redemptions per hour, drawn on the
// server as SVG in two parts: the y axis, which stays in place, and the plot,
// which scrolls sideways on a narrow screen (partials.html, "chart").
type chart struct {
	Width, Height int // of the whole chart; the plot is Width-AxisWidth wide
	AxisWidth     int
	PlotTop       int
	PlotBottom    int
	PlotLeft      int
	PlotRight     int
	LabelX        int // right edge of the y axis labels
	LabelY        int // baseline of the x axis labels
	Bars          []chartBar
	YTicks        []chartTick
	XTicks        []chartTick
	Total         [2]int64
	Empty         bool
	Label         string
}

// PlotWidth is the width of the plot's part.
func (c chart) PlotWidth() int { return c.Width - c.AxisWidth }

type chartBar struct {
	X, Y, W, H float64
	Class      string
	Title      string
}

type chartTick struct {
	Pos   float64
	Label string
	// Anchor is the label's text-anchor: "middle", or "end" and "start"
	// for a label that would otherwise cross the edge of the chart.
	Anchor string
}

// minBarHeight is the height of the bar of a small non-zero count, so that
// one claim among a thousand still shows.
const minBarHeight = 2.0

// axisCharWidth is about the width of a digit or letter of the 11 px axis
// labels, to keep them inside the chart.
const axisCharWidth = 6.2

// newChart lays out the hours of a template's stats: a pair of bars per hour
// (claims, redemptions), a y axis with round ticks, and about six time
// labels in the deployment's time zone loc, dated when the hours span more
// than a day.
func newChart(hours []reports.HourCount, loc *time.Location) chart {
	c := chart{Width: 720, Height: 240, AxisWidth: 40, PlotTop: 12, PlotBottom: 208, PlotLeft: 44, PlotRight: 712,
		LabelX: 34, LabelY: 228}
	var top int64
	for _, h := range hours {
		top = max(top, h.Claims, h.Redemptions)
		c.Total[0] += h.Claims
		c.Total[1] += h.Redemptions
	}
	c.Empty = top == 0
	c.Label = fmt.Sprintf("Claims and redemptions per hour over the last %d hours: %d claims, %d redemptions",
		len(hours), c.Total[0], c.Total[1])
	step := niceStep(top)
	scaleTop := (top + step - 1) / step * step // the first round value at or above top
	if scaleTop == 0 {
		scaleTop = 4 * step
	}
	plotH := float64(c.PlotBottom - c.PlotTop)
	for v := int64(0); v <= scaleTop; v += step {
		c.YTicks = append(c.YTicks, chartTick{Pos: float64(c.PlotBottom) - float64(v)/float64(scaleTop)*plotH, Label: fmt.Sprint(v)})
	}
	if len(hours) == 0 {
		return c
	}
	layout := "15:04"
	if len(hours) > 24 {
		layout = "2 Jan 15:04"
	}
	slot := float64(c.PlotRight-c.PlotLeft) / float64(len(hours))
	barW := max(slot*0.36, 1)
	every := max(len(hours)/6, 1)
	for i, h := range hours {
		x := float64(c.PlotLeft) + float64(i)*slot
		for j, v := range []int64{h.Claims, h.Redemptions} {
			bh := float64(v) / float64(scaleTop) * plotH
			if v > 0 {
				bh = max(bh, minBarHeight)
			}
			what, class := "claims", "bar-claims"
			if j == 1 {
				what, class = "redemptions", "bar-redemptions"
			}
			c.Bars = append(c.Bars, chartBar{
				X: x + slot*0.12 + float64(j)*barW, Y: float64(c.PlotBottom) - bh, W: barW, H: bh,
				Class: class, Title: fmt.Sprintf("%s: %d %s", h.Hour.In(loc).Format("2 Jan 15:04 MST"), v, what),
			})
		}
		if (len(hours)-1-i)%every == 0 {
			c.XTicks = append(c.XTicks, c.xTick(x+slot/2, h.Hour.In(loc).Format(layout)))
		}
	}
	return c
}

// xTick places a time label centred on pos, or against the edge of the plot
// it would cross.
func (c chart) xTick(pos float64, label string) chartTick {
	half := float64(len(label)) * axisCharWidth / 2
	switch {
	case pos+half > float64(c.Width)-2:
		return chartTick{Pos: float64(c.Width) - 2, Label: label, Anchor: "end"}
	case pos-half < float64(c.AxisWidth)+2:
		return chartTick{Pos: float64(c.AxisWidth) + 2, Label: label, Anchor: "start"}
	}
	return chartTick{Pos: pos, Label: label, Anchor: "middle"}
}

// niceStep picks a round tick step so that about four ticks cover top.
func niceStep(top int64) int64 {
	if top <= 4 {
		return 1
	}
	raw := (top + 3) / 4
	mag := int64(1)
	for mag*10 <= raw {
		mag *= 10
	}
	for _, m := range []int64{1, 2, 5, 10} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}
