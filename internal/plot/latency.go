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

// percentile is one latency statistic drawn per case.
type percentile struct {
	name  string
	get   func(g *report.Group) report.Stat
	glyph draw.GlyphStyle
}

var percentiles = []percentile{
	{"p50", func(g *report.Group) report.Stat { return g.P50 }, draw.GlyphStyle{Color: palette[0], Radius: vg.Points(3), Shape: draw.CircleGlyph{}}},
	{"p90", func(g *report.Group) report.Stat { return g.P90 }, draw.GlyphStyle{Color: palette[4], Radius: vg.Points(3.2), Shape: draw.TriangleGlyph{}}},
	{"p99", func(g *report.Group) report.Stat { return g.P99 }, draw.GlyphStyle{Color: palette[3], Radius: vg.Points(3), Shape: draw.BoxGlyph{}}},
	{"p99.9", func(g *report.Group) report.Stat { return g.P999 }, draw.GlyphStyle{Color: palette[1], Radius: vg.Points(3.2), Shape: draw.PyramidGlyph{}}},
	{"max", func(g *report.Group) report.Stat { return g.Max }, draw.GlyphStyle{Color: palette[5], Radius: vg.Points(3.5), Shape: draw.CrossGlyph{}}},
	{"mean", func(g *report.Group) report.Stat { return g.Lat }, draw.GlyphStyle{Color: black, Radius: vg.Points(3.5), Shape: draw.RingGlyph{}}},
}

// latencyPanel is one network's latency statistics per case.
type latencyPanel struct {
	network string
	cases   []string
	groups  []*report.Group // nil where the case has no measurement here
	paper   []float64       // published mean latency, NaN when none
	quick   bool
}

// latencyJobs makes one figure per suite x broker with a panel per network.
func latencyJobs(d *report.Dataset) ([]job, []string) {
	var jobs []job
	var skipped []string
	for _, suite := range d.Suites {
		cases := d.Cases(suite)
		for _, b := range d.Brokers {
			var panels []*latencyPanel
			for _, n := range d.Networks {
				lp := &latencyPanel{network: n}
				any := false
				for _, c := range cases {
					g := d.Get(suite, c.Case, b, n)
					if g != nil && (g.Reps == 0 || !g.Lat.Valid()) {
						g = nil
					}
					pv := math.NaN()
					if v, ok := report.LookupPaper(c.Paper, report.LatencyMs, n); ok && !allQuick(d, suite, c.Case) {
						pv = v.Value()
					}
					lp.cases = append(lp.cases, c.Case)
					lp.groups = append(lp.groups, g)
					lp.paper = append(lp.paper, pv)
					if g != nil {
						any = true
						lp.quick = lp.quick || g.Quick
					}
				}
				if any {
					panels = append(panels, lp)
				}
			}
			if len(panels) == 0 {
				skipped = append(skipped, fmt.Sprintf("latency, suite %s, broker %s: no record with measured latency", suite, b))
				continue
			}
			jobs = append(jobs, latencyJob(suite, b, panels))
		}
	}
	return jobs, skipped
}

func latencyJob(suite, broker string, panels []*latencyPanel) job {
	n := len(panels[0].cases)
	panelW := vg.Length(math.Max(8, 0.34*float64(n)+2)) * vg.Inch
	const legendW, panelH = 2 * vg.Inch, 3.8 * vg.Inch
	published := false
	for _, p := range panels {
		for _, v := range p.paper {
			published = published || finitePositive(v)
		}
	}
	note := "Each statistic is the mean over repetitions of that repetition's value (HDR histogram, 3 significant digits)."
	if published {
		note += " Diamonds = the paper's mean latency."
	}
	for _, p := range panels {
		if p.quick {
			note += " QUICK RUN: not comparable with the paper; paper values not drawn."
			break
		}
	}
	headH := headerHeight(3)
	h := headH + vg.Length(len(panels))*panelH
	return job{name: fmt.Sprintf("latency-%s-%s", suite, broker), w: panelW + legendW, h: h, draw: func(c draw.Canvas) {
		c.FillPolygon(color.White, rect(c.Rectangle))
		body := header(c, fmt.Sprintf("Latency per case  —  broker %s, suite %s", broker, suite), note)
		for i, p := range panels {
			pc := c
			pc.Max.Y = body.Max.Y - vg.Length(i)*panelH
			pc.Min.Y = pc.Max.Y - panelH
			pc.Max.X = c.Min.X + panelW
			drawLatencyPanel(pc, p)
		}
		lc := c
		lc.Min.X = c.Min.X + panelW + 10
		lc.Max.Y = body.Max.Y - 20
		var es []legendEntry
		for _, pc := range percentiles {
			es = append(es, legendEntry{pc.name, glyphThumb(pc.glyph)})
		}
		if published { // no paper legend without paper values
			es = append(es, legendEntry{"paper mean (Table 1/2)", glyphThumb(paperMark)})
		}
		es = append(es, legendEntry{"range p50..max", lineThumb(solid(light, 3), nil)})
		drawLegend(lc, "", es)
	}}
}

func drawLatencyPanel(c draw.Canvas, lp *latencyPanel) {
	lo, hi := math.Inf(1), 0.0
	see := func(v float64) {
		if finitePositive(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	missing := 0
	for i, g := range lp.groups {
		if g == nil {
			missing++
		} else {
			for _, pc := range percentiles {
				see(pc.get(g).Mean)
			}
		}
		see(lp.paper[i])
	}
	lo, hi = logRange(lo, hi)
	title := lp.network
	if missing > 0 {
		title += fmt.Sprintf(" (n/a: %d case(s) without a measurement on this network)", missing)
	}
	p := newPlot(title, "case", "")
	p.NominalX(lp.cases...)
	p.X.Min, p.X.Max = -0.6, float64(len(lp.cases))-0.4
	logY(p, lo, hi)
	p.Add(gridLines{}, &latencyMarks{lp})
	p.Draw(yLabel(c, "latency (ms, log scale)"))
}

type latencyMarks struct{ lp *latencyPanel }

func (m *latencyMarks) Plot(c draw.Canvas, p *gplot.Plot) {
	x, y := p.Transforms(&c)
	for i, g := range m.lp.groups {
		xi := x(float64(i))
		if g == nil {
			st := textStyle(8)
			st.XAlign, st.YAlign = draw.XCenter, draw.YBottom
			c.FillText(st, vg.Point{X: xi, Y: c.Min.Y + 2}, "n/a")
		} else {
			if a, b := g.P50.Mean, g.Max.Mean; finitePositive(a) && finitePositive(b) {
				c.StrokeLine2(solid(light, 3), xi, y(a), xi, y(b))
			}
			for _, pc := range percentiles {
				if v := pc.get(g).Mean; finitePositive(v) {
					c.DrawGlyph(pc.glyph, vg.Point{X: xi, Y: y(v)})
				}
			}
		}
		if v := m.lp.paper[i]; finitePositive(v) {
			c.DrawGlyph(paperMark, vg.Point{X: xi, Y: y(v)})
		}
	}
}
