package plot

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"pslab/internal/report"
)

// paperFigureJob lays out one figure: a header, the wireline and wireless
// panels side by side, and a legend column.
func paperFigureJob(spec figureSpec, suite, broker string, panels []*panel) job {
	const panelW, legendW, bodyH = 5.6 * vg.Inch, 2.5 * vg.Inch, 4.7 * vg.Inch
	name := fmt.Sprintf("fig%02d-%s-%s", spec.num, suite, broker)
	notes := []string{figureNote(spec, panels)}
	if fl := panelFlags(panels); fl != "" {
		notes = append(notes, fl)
	}
	headH := headerHeight(4)
	return job{name: name, w: 2*panelW + legendW, h: bodyH + headH, draw: func(c draw.Canvas) {
		c.FillPolygon(color.White, rect(c.Rectangle))
		body := header(c, fmt.Sprintf("Figure %d counterpart: %s  —  broker %s, suite %s", spec.num, spec.title, broker, suite), notes...)
		body.Min.Y = c.Min.Y
		for i, p := range panels {
			pc := body
			pc.Min.X = c.Min.X + vg.Length(i)*panelW
			pc.Max.X = pc.Min.X + panelW
			drawPanel(pc, spec, p)
		}
		lc := body
		lc.Min.X = c.Min.X + 2*panelW + 10
		lc.Max.Y = body.Max.Y - 20
		drawLegend(lc, "", figureLegend(spec, published(panels)))
	}}
}

// published: some panel draws the paper's values.
func published(panels []*panel) bool {
	for _, p := range panels {
		if p.published > 0 {
			return true
		}
	}
	return false
}

func rect(r vg.Rectangle) []vg.Point {
	return []vg.Point{r.Min, {X: r.Min.X, Y: r.Max.Y}, r.Max, {X: r.Max.X, Y: r.Min.Y}}
}

func figureNote(spec figureSpec, panels []*panel) string {
	cases := map[string]bool{}
	quick := false
	for _, p := range panels {
		quick = quick || p.quick
		for _, cat := range p.cats {
			for _, v := range cat.values {
				if v.hasMeasured || v.hasPaper {
					cases[v.caseID] = true
				}
			}
		}
	}
	ids := make([]string, 0, len(cases))
	split := false
	for id := range cases {
		ids = append(ids, id)
		split = split || strings.Contains(id, "⟨")
	}
	sort.Strings(ids)
	s := fmt.Sprintf("Measured: mean over repetitions, whiskers = 95 %% CI (n ≥ 2). Cases %s.", strings.Join(ids, ", "))
	if published(panels) {
		s = fmt.Sprintf("Measured: mean over repetitions, whiskers = 95 %% CI (n ≥ 2). Diamonds = the paper's values (%s). Cases %s.",
			spec.table, strings.Join(ids, ", "))
	}
	if split {
		s += " Rows that mix builds are split into parts (⟨i of n⟩): the part with the most repetitions is drawn; the report lists every part."
	}
	if quick {
		s += " QUICK RUN: short windows, reduced counts; paper values not drawn."
	}
	return s
}

func panelFlags(panels []*panel) string {
	seen := map[string]bool{}
	for _, p := range panels {
		for _, cat := range p.cats {
			for _, v := range cat.values {
				for _, f := range v.flags {
					seen[f] = true
				}
			}
		}
	}
	if len(seen) == 0 {
		return ""
	}
	var names []string
	for f := range seen {
		names = append(names, f)
	}
	sort.Strings(names)
	return "Flags on some of these records (see the report): " + strings.Join(names, ", ")
}

func figureLegend(spec figureSpec, paperValues bool) []legendEntry {
	var es []legendEntry
	for i, s := range spec.series {
		col := palette[i%len(palette)]
		if spec.line {
			ls, gs := curveStyle(s.metric, col)
			es = append(es, legendEntry{s.name, lineThumb(ls, &gs)})
		} else {
			es = append(es, legendEntry{s.name, swatch(col)})
		}
	}
	paperName := "paper value (" + spec.table + ")"
	switch {
	case !paperValues: // no paper legend without paper values
	case spec.line:
		es = append(es, legendEntry{paperName + ",", lineThumb(dashed(grey, 1.2), &paperMark)},
			legendEntry{"  dashed, same colour", thumbFunc(func(*draw.Canvas) {})})
	default:
		es = append(es, legendEntry{paperName, glyphThumb(paperMark)})
	}
	es = append(es, legendEntry{"95 % confidence interval", thumbFunc(func(c *draw.Canvas) {
		x := c.Center().X
		ls := solid(black, 1)
		c.StrokeLine2(ls, x, c.Min.Y, x, c.Max.Y)
		c.StrokeLine2(ls, x-3, c.Min.Y, x+3, c.Min.Y)
		c.StrokeLine2(ls, x-3, c.Max.Y, x+3, c.Max.Y)
	})})
	return es
}

// drawPanel draws one network's panel, or says why there is none.
func drawPanel(c draw.Canvas, spec figureSpec, p *panel) {
	if p.measured == 0 && p.published == 0 {
		fillText(c, 12, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: (c.Min.Y + c.Max.Y) / 2},
			p.title+":\nno measured records and no paper values", true)
		return
	}
	title := p.title
	if p.measured == 0 {
		title += "\nno measured records: paper values only"
	}
	lo, hi, dropped := panelRange(p)
	if dropped > 0 {
		title += fmt.Sprintf("\n(%d measured zero(s): not drawable on the log axis)", dropped)
	}
	pl := newPlot(title, spec.xLabel, "")
	labels := make([]string, len(p.cats))
	for i, cat := range p.cats {
		labels[i] = cat.label
	}
	pl.NominalX(labels...)
	pl.X.Min, pl.X.Max = -0.6, float64(len(p.cats))-0.4
	logY(pl, lo, hi)
	pl.Add(gridLines{})
	if spec.line {
		pl.Add(&curves{p: p, spec: spec, n: len(spec.series)})
	} else {
		pl.Add(&bars{p: p, n: len(spec.series)})
	}
	pl.Draw(yLabel(c, "throughput (msgs/s, log scale)"))
}

// panelRange is the log-axis range over every drawable value, and the
// number of values that cannot be drawn (zero).
func panelRange(p *panel) (lo, hi float64, dropped int) {
	lo, hi = math.Inf(1), 0
	see := func(v float64) {
		if finitePositive(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	for _, cat := range p.cats {
		for _, v := range cat.values {
			if v.hasMeasured {
				if !finitePositive(v.measured.Mean) {
					dropped++
				}
				see(v.measured.Mean)
				if v.measured.N >= 2 && !math.IsNaN(v.measured.CI) {
					see(v.measured.Mean + v.measured.CI)
				}
			}
			if v.hasPaper {
				see(v.paper)
			}
		}
	}
	lo, hi = logRange(lo, hi)
	return lo, hi, dropped
}

// gridLines draws light horizontal lines at the labelled Y ticks.
type gridLines struct{}

func (gridLines) Plot(c draw.Canvas, p *gplot.Plot) {
	_, y := p.Transforms(&c)
	for _, t := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
		if t.Label == "" {
			continue
		}
		c.StrokeLine2(solid(light, 0.6), c.Min.X, y(t.Value), c.Max.X, y(t.Value))
	}
}

// whisker draws a CI whisker from mean-ci (clamped to the axis) to mean+ci.
func whisker(c draw.Canvas, p *gplot.Plot, x vg.Length, mean, ci float64, col color.Color) {
	if math.IsNaN(ci) || ci <= 0 {
		return
	}
	_, y := p.Transforms(&c)
	lo := math.Max(mean-ci, p.Y.Min)
	hi := math.Min(mean+ci, p.Y.Max)
	ls := solid(col, 1)
	c.StrokeLine2(ls, x, y(lo), x, y(hi))
	c.StrokeLine2(ls, x-3, y(lo), x+3, y(lo))
	c.StrokeLine2(ls, x-3, y(hi), x+3, y(hi))
}

// curves draws the line figures: per series a solid line through the
// measured means, a dashed line through the paper's values.
type curves struct {
	p    *panel
	spec figureSpec
	n    int
}

// curveStyle: subscribers thick with discs, publishers thinner with
// triangles, so that a publisher curve on top of its subscribers' still
// shows both.
func curveStyle(metric string, col color.Color) (draw.LineStyle, draw.GlyphStyle) {
	if metric == report.PubTput {
		return solid(col, 1.2), draw.GlyphStyle{Color: col, Radius: vg.Points(3.6), Shape: draw.TriangleGlyph{}}
	}
	return solid(col, 2.4), draw.GlyphStyle{Color: col, Radius: vg.Points(3.2), Shape: draw.CircleGlyph{}}
}

func (cv *curves) Plot(c draw.Canvas, p *gplot.Plot) {
	x, y := p.Transforms(&c)
	for s := 0; s < cv.n; s++ {
		col := palette[s%len(palette)]
		var meas, pap []vg.Point
		for i, cat := range cv.p.cats {
			v := cat.values[s]
			if v.hasMeasured && finitePositive(v.measured.Mean) {
				meas = append(meas, vg.Point{X: x(float64(i)), Y: y(v.measured.Mean)})
				if v.measured.N >= 2 {
					whisker(c, p, x(float64(i)), v.measured.Mean, v.measured.CI, col)
				}
			}
			if v.hasPaper && finitePositive(v.paper) {
				pap = append(pap, vg.Point{X: x(float64(i)), Y: y(v.paper)})
			}
		}
		if len(pap) > 1 {
			c.StrokeLines(dashed(col, 1.2), pap)
		}
		for _, pt := range pap {
			c.DrawGlyph(paperMark, pt)
		}
		ls, gs := curveStyle(cv.spec.series[s].metric, col)
		if len(meas) > 1 {
			c.StrokeLines(ls, meas)
		}
		for _, pt := range meas {
			c.DrawGlyph(gs, pt)
		}
	}
}

// bars draws grouped bars from the bottom of the (log) axis to each
// measured mean, the CI whisker, and the paper's value as a diamond.
type bars struct {
	p *panel
	n int
}

func (b *bars) Plot(c draw.Canvas, p *gplot.Plot) {
	x, y := p.Transforms(&c)
	slot := 0.8 / float64(b.n)
	for i, cat := range b.p.cats {
		for s := 0; s < b.n; s++ {
			v := cat.values[s]
			col := palette[s%len(palette)]
			center := float64(i) - 0.4 + slot*(float64(s)+0.5)
			x0, x1 := x(center-slot*0.45), x(center+slot*0.45)
			switch {
			case v.hasMeasured && finitePositive(v.measured.Mean):
				top := y(math.Min(v.measured.Mean, p.Y.Max))
				c.FillPolygon(col, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x0, Y: top}, {X: x1, Y: top}, {X: x1, Y: c.Min.Y}})
				if v.measured.N >= 2 {
					whisker(c, p, x(center), v.measured.Mean, v.measured.CI, black)
				}
			default:
				// Measured zero (not drawable on a log axis) or no measurement.
				label := "n/a"
				if v.hasMeasured {
					label = "0"
				}
				st := textStyle(8)
				st.XAlign, st.YAlign = draw.XCenter, draw.YBottom
				c.FillText(st, vg.Point{X: x(center), Y: c.Min.Y + 2}, label)
			}
			if v.hasPaper && finitePositive(v.paper) {
				c.DrawGlyph(paperMark, vg.Point{X: x(center), Y: y(v.paper)})
			}
		}
	}
}
