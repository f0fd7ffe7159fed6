package plot

import (
	"fmt"
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"pslab/internal/report"
)

// CompareFigure draws `pslab compare` in memory: per compared row the
// ratio B/A of subscriber throughput (left) and mean latency (right) with
// its 95 % CI, on a log axis with the ±margin band around 1. Rows without
// a CI show their ratio only; rows without a ratio are left empty.
func CompareFigure(c report.Comparison, o Options, name string) (Figure, error) {
	var labels []string
	for _, r := range c.Rows {
		labels = append(labels, fmt.Sprintf("%s %s %s %s", r.Key.Suite, r.Key.Case, r.Key.Broker, r.Key.Network))
	}
	h := vg.Points(120 + 14*float64(len(c.Rows)))
	j := job{name: name, w: 11 * vg.Inch, h: h, draw: func(cv draw.Canvas) {
		cv = header(cv, "B/A per case × broker × network, 95 % CI (Welch's t on log values)",
			fmt.Sprintf("shaded: ±%.0f %% (same); a CI that excludes 1 differs", 100*c.Margin))
		panels := []*gplot.Plot{
			ratioPanel("subscriber throughput B/A", c, labels, func(r report.CompareRow) report.RatioCI { return r.Sub }),
			ratioPanel("mean latency B/A", c, labels, func(r report.CompareRow) report.RatioCI { return r.Lat }),
		}
		tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Points(10)}
		for i, cnv := range gplot.Align([][]*gplot.Plot{panels}, tiles, cv)[0] {
			panels[i].Draw(cnv)
		}
	}}
	return render(o, j)
}

// ratioPanel is one metric's dot plot.
func ratioPanel(title string, c report.Comparison, labels []string, get func(report.CompareRow) report.RatioCI) *gplot.Plot {
	p := newPlot(title, "B/A (log)", "")
	p.X.Scale = gplot.LogScale{}
	p.X.Tick.Marker = logTicks{}
	lo, hi := 1-c.Margin, 1+c.Margin
	var pts plotter.XYs
	var bars plotter.XErrors
	var barPts plotter.XYs
	for i, r := range c.Rows {
		x := get(r)
		y := float64(len(c.Rows) - 1 - i)
		if math.IsNaN(x.Ratio) || !(x.Ratio > 0) {
			continue
		}
		pts = append(pts, plotter.XY{X: x.Ratio, Y: y})
		lo, hi = math.Min(lo, x.Ratio), math.Max(hi, x.Ratio)
		if !math.IsNaN(x.Lo) {
			barPts = append(barPts, plotter.XY{X: x.Ratio, Y: y})
			bars = append(bars, struct{ Low, High float64 }{x.Ratio - x.Lo, x.Hi - x.Ratio})
			lo, hi = math.Min(lo, x.Lo), math.Max(hi, x.Hi)
		}
	}
	p.X.Min, p.X.Max = lo/1.2, hi*1.2
	n := float64(len(c.Rows))
	band, _ := plotter.NewPolygon(plotter.XYs{{X: 1 - c.Margin, Y: -0.5}, {X: 1 + c.Margin, Y: -0.5}, {X: 1 + c.Margin, Y: n - 0.5}, {X: 1 - c.Margin, Y: n - 0.5}})
	if band != nil {
		band.Color = light
		band.LineStyle.Width = 0
		p.Add(band)
	}
	one, _ := plotter.NewLine(plotter.XYs{{X: 1, Y: -0.5}, {X: 1, Y: n - 0.5}})
	if one != nil {
		one.LineStyle = dashed(grey, vg.Points(1))
		p.Add(one)
	}
	if len(barPts) > 0 {
		eb, err := plotter.NewXErrorBars(struct {
			plotter.XYer
			plotter.XErrorer
		}{barPts, bars})
		if err == nil {
			eb.LineStyle = solid(palette[0], vg.Points(1.2))
			p.Add(eb)
		}
	}
	if len(pts) > 0 {
		sc, err := plotter.NewScatter(pts)
		if err == nil {
			sc.GlyphStyle.Color = palette[1]
			sc.GlyphStyle.Radius = vg.Points(2.5)
			p.Add(sc)
		}
	}
	rev := make([]string, len(labels))
	for i, l := range labels {
		rev[len(labels)-1-i] = l
	}
	p.NominalY(rev...)
	p.Y.Min, p.Y.Max = -0.5, n-0.5
	return p
}
