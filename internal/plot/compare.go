package plot

import (
	"fmt"
	"image/color"
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"pslab/internal/report"
)

// CompareFigure draws `pslab compare` in memory: per compared row the
// ratio B/A of subscriber throughput (left) and mean latency (right) with
// its 95 % CI, on a log axis with the ±margin band around 1. The row
// labels are drawn once, at the left, in the room their text needs. Each
// axis covers every ratio and CI of its panel with a margin; a CI bound
// that is not finite is drawn to the edge with an arrow. Rows without a CI
// show their ratio only; rows without a ratio are left empty.
func CompareFigure(c report.Comparison, o Options, name string) (Figure, error) {
	var labels []string
	for _, r := range c.Rows {
		l := fmt.Sprintf("%s %s %s %s", r.Key.Suite, r.Key.Case, r.Key.Broker, r.Key.Network)
		if r.Key.Quick {
			l += " (quick)"
		}
		labels = append(labels, l)
	}
	const labelSize = 9
	labelW := vg.Length(0)
	st := textStyle(labelSize)
	for _, l := range labels {
		labelW = max(labelW, st.Width(l))
	}
	labelW += 16
	h := headerHeight(1) + vg.Points(70+14*float64(len(c.Rows)))
	w := max(11*vg.Inch, labelW+2*4*vg.Inch)
	j := job{name: name, w: w, h: h, draw: func(cv draw.Canvas) {
		cv.FillPolygon(color.White, rect(cv.Rectangle))
		body := header(cv, "B/A per case × broker × network, 95 % CI (Welch's t on log values)",
			fmt.Sprintf("shaded: ±%.0f %% (same); a CI that excludes 1 differs; an arrow: the CI goes on beyond the axis", 100*c.Margin))
		panels := []*gplot.Plot{
			ratioPanel("subscriber throughput B/A", c, func(r report.CompareRow) report.RatioCI { return r.Sub }),
			ratioPanel("mean latency B/A", c, func(r report.CompareRow) report.RatioCI { return r.Lat }),
		}
		pw := (body.Max.X - body.Min.X - labelW) / 2
		for i, p := range panels {
			pc := body
			pc.Min.X = body.Min.X + labelW + vg.Length(i)*pw
			pc.Max.X = pc.Min.X + pw - 8
			p.Draw(pc)
			if i > 0 {
				continue
			}
			// The labels, right-aligned against the first panel's data area.
			dc := p.DataCanvas(pc)
			_, y := p.Transforms(&dc)
			ls := textStyle(labelSize)
			ls.XAlign, ls.YAlign = draw.XRight, draw.YCenter
			for k, l := range labels {
				cv.FillText(ls, vg.Point{X: dc.Min.X - 6, Y: y(rowY(len(labels), k))}, l)
			}
		}
	}}
	return render(o, j)
}

// rowY is row k's position on the Y axis: the first row on top.
func rowY(rows, k int) float64 { return float64(rows - 1 - k) }

// ratioPanel is one metric's dot plot, its Y axis hidden (the labels are
// the figure's).
func ratioPanel(title string, c report.Comparison, get func(report.CompareRow) report.RatioCI) *gplot.Plot {
	p := newPlot(title, "B/A (log)", "")
	p.X.Scale = gplot.LogScale{}
	p.X.Tick.Marker = logTicks{}
	lo, hi := 1-c.Margin, 1+c.Margin
	see := func(v float64) {
		if finitePositive(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	for _, r := range c.Rows {
		x := get(r)
		see(x.Ratio)
		see(x.Lo)
		see(x.Hi)
	}
	// A margin of 6 % of the axis' decades on each side (at least ×1.2),
	// so that no point sits on the border.
	pad := math.Max(0.06*(math.Log10(hi)-math.Log10(lo)), math.Log10(1.2))
	p.X.Min, p.X.Max = lo/math.Pow(10, pad), hi*math.Pow(10, pad)
	n := len(c.Rows)
	p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
	p.HideY()
	p.Add(gridLines{}, &ratioMarks{c: c, get: get})
	return p
}

// ratioMarks draws the margin band, the line at 1, and per row the CI
// (clamped to the axis, with an arrow where it goes on) and the ratio.
type ratioMarks struct {
	c   report.Comparison
	get func(report.CompareRow) report.RatioCI
}

func (m *ratioMarks) Plot(cv draw.Canvas, p *gplot.Plot) {
	x, y := p.Transforms(&cv)
	n := len(m.c.Rows)
	top, bottom := y(float64(n)-0.5), y(-0.5)
	band := []vg.Point{{X: x(1 - m.c.Margin), Y: bottom}, {X: x(1 - m.c.Margin), Y: top}, {X: x(1 + m.c.Margin), Y: top}, {X: x(1 + m.c.Margin), Y: bottom}}
	cv.FillPolygon(light, band)
	cv.StrokeLine2(dashed(grey, 1), x(1), bottom, x(1), top)
	clamp := func(v float64) (float64, bool) {
		switch {
		case !(v > p.X.Min): // NaN, 0, negative, or below the axis
			return p.X.Min, true
		case v > p.X.Max:
			return p.X.Max, true
		}
		return v, false
	}
	ls := solid(palette[0], 1.2)
	for k, r := range m.c.Rows {
		rc := m.get(r)
		if !finitePositive(rc.Ratio) {
			continue
		}
		yk := y(rowY(n, k))
		if !math.IsNaN(rc.Lo) || !math.IsNaN(rc.Hi) {
			lo, loCut := clamp(rc.Lo)
			hi, hiCut := clamp(rc.Hi)
			cv.StrokeLine2(ls, x(lo), yk, x(hi), yk)
			for _, e := range []struct {
				v   float64
				cut bool
				dir vg.Length
			}{{lo, loCut, -1}, {hi, hiCut, 1}} {
				if e.cut { // an arrowhead: the CI goes on
					tip := x(e.v)
					cv.StrokeLines(ls, []vg.Point{{X: tip - e.dir*5, Y: yk + 3}, {X: tip, Y: yk}, {X: tip - e.dir*5, Y: yk - 3}})
				} else {
					cv.StrokeLine2(ls, x(e.v), yk-3, x(e.v), yk+3)
				}
			}
		}
		cv.DrawGlyph(draw.GlyphStyle{Color: palette[1], Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}, vg.Point{X: x(rc.Ratio), Y: yk})
	}
}
