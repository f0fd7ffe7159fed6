package plot

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"pslab/internal/report"
)

// Sweep is the figure kind of a sweep: each metric against each varied
// factor.
const Sweep = "sweep"

// sweepMetric is one panel of a sweep figure.
type sweepMetric struct {
	title string
	get   func(*report.Group) report.Stat
}

var sweepMetrics = []sweepMetric{
	{"subscriber throughput (msgs/s)", func(g *report.Group) report.Stat { return g.Sub }},
	{"publisher throughput (msgs/s)", func(g *report.Group) report.Stat { return g.Pub }},
	{"mean latency (ms)", func(g *report.Group) report.Stat { return g.Lat }},
}

// sweepLine is one line of a panel: the cases that share the values of
// the other varied keys, by the value of the key on the x axis.
type sweepLine struct {
	name   string // "subscription=durable", or "" when one key is varied
	points []sweepPoint
}

type sweepPoint struct {
	x     float64 // the value, or its position among categories
	label string
	g     *report.Group
}

// sweepJobs makes one figure per swept suite × broker × network × varied
// key: a panel per metric, the metric against the key's values, a line
// per combination of the other keys' values.
func sweepJobs(d *report.Dataset) ([]job, []string) {
	var jobs []job
	swept := false
	for _, suite := range d.Suites {
		keys := d.VariedKeys(suite)
		if len(keys) == 0 {
			continue
		}
		swept = true
		for _, b := range d.Brokers {
			for _, n := range d.Networks {
				var groups []*report.Group
				for _, g := range d.Groups {
					if g.Suite == suite && g.Broker == b && g.Network == n && g.Reps > 0 {
						groups = append(groups, g)
					}
				}
				if len(groups) == 0 {
					continue
				}
				for _, k := range keys {
					jobs = append(jobs, sweepJob(suite, b, n, k, keys, groups))
				}
			}
		}
	}
	if !swept {
		return nil, []string{"sweep: no suite in the results comes from a sweep (its records name no varied values)"}
	}
	return jobs, nil
}

// sweepLines groups the groups by the other keys' values, and places each
// on the x axis: by its number when every value of key is a number, else
// by category in the order the sweep ran them.
func sweepLines(key string, keys []string, groups []*report.Group) (lines []*sweepLine, categories []string, numeric bool) {
	numeric = true
	seen := map[string]bool{}
	for _, g := range groups {
		v, ok := g.VariedValue(key)
		if !ok {
			continue
		}
		if _, err := strconv.ParseFloat(strings.TrimSuffix(v, "B"), 64); err != nil {
			numeric = false
		}
		if !seen[v] {
			seen[v] = true
			categories = append(categories, v)
		}
	}
	byName := map[string]*sweepLine{}
	for _, g := range groups {
		v, ok := g.VariedValue(key)
		if !ok {
			continue
		}
		var others []string
		for _, k := range keys {
			if k == key {
				continue
			}
			if ov, ok := g.VariedValue(k); ok {
				others = append(others, k+"="+ov)
			}
		}
		name := strings.Join(others, " ")
		l := byName[name]
		if l == nil {
			l = &sweepLine{name: name}
			byName[name] = l
			lines = append(lines, l)
		}
		x := float64(indexOf(categories, v))
		if numeric {
			x, _ = strconv.ParseFloat(strings.TrimSuffix(v, "B"), 64)
		}
		l.points = append(l.points, sweepPoint{x: x, label: v, g: g})
	}
	for _, l := range lines {
		sort.SliceStable(l.points, func(i, j int) bool { return l.points[i].x < l.points[j].x })
	}
	return lines, categories, numeric
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

func sweepJob(suite, broker, network, key string, keys []string, groups []*report.Group) job {
	lines, cats, numeric := sweepLines(key, keys, groups)
	const panelW, panelH, legendW = 4.2 * vg.Inch, 3.6 * vg.Inch, 2.6 * vg.Inch
	note := fmt.Sprintf("Each point: the mean over a case's repetitions, whiskers = 95 %% CI (n ≥ 2); one line per combination of the other varied values. Cases: %s.", caseLabels(groups))
	headH := headerHeight(4)
	w := vg.Length(len(sweepMetrics))*panelW + legendW
	return job{name: fmt.Sprintf("sweep-%s-%s-%s-%s", suite, broker, network, key), w: w, h: headH + panelH, draw: func(c draw.Canvas) {
		c.FillPolygon(color.White, rect(c.Rectangle))
		body := header(c, fmt.Sprintf("Sweep of %s  —  broker %s, network %s, suite %s", key, broker, network, suite), note)
		for i, m := range sweepMetrics {
			pc := body
			pc.Min.X = c.Min.X + vg.Length(i)*panelW
			pc.Max.X = pc.Min.X + panelW
			drawSweepPanel(pc, key, m, lines, cats, numeric)
		}
		lc := body
		lc.Min.X = c.Min.X + vg.Length(len(sweepMetrics))*panelW + 10
		lc.Max.Y = body.Max.Y - 20
		var es []legendEntry
		for i, l := range lines {
			name := l.name
			if name == "" {
				name = "measured"
			}
			ls, gs := lineStyle(i)
			es = append(es, legendEntry{name, lineThumb(ls, &gs)})
		}
		drawLegend(lc, "", es)
	}}
}

func caseLabels(groups []*report.Group) string {
	var out []string
	seen := map[string]bool{}
	for _, g := range groups {
		if !seen[g.Case] {
			seen[g.Case] = true
			out = append(out, g.Label())
		}
	}
	return strings.Join(out, "; ")
}

func lineStyle(i int) (draw.LineStyle, draw.GlyphStyle) {
	col := palette[i%len(palette)]
	shapes := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.RingGlyph{}, draw.CrossGlyph{}}
	return solid(col, 1.8), draw.GlyphStyle{Color: col, Radius: vg.Points(3.2), Shape: shapes[i%len(shapes)]}
}

// drawSweepPanel draws one metric against the key. The y axis is
// logarithmic when the values span more than a factor of 20.
func drawSweepPanel(c draw.Canvas, key string, m sweepMetric, lines []*sweepLine, cats []string, numeric bool) {
	lo, hi := math.Inf(1), 0.0
	xlo, xhi := math.Inf(1), math.Inf(-1)
	for _, l := range lines {
		for _, p := range l.points {
			s := m.get(p.g)
			xlo, xhi = math.Min(xlo, p.x), math.Max(xhi, p.x)
			if !s.Valid() || !(s.Mean > 0) {
				continue
			}
			lo, hi = math.Min(lo, s.Mean), math.Max(hi, s.Mean)
			if s.N >= 2 && !math.IsNaN(s.CI) {
				hi = math.Max(hi, s.Mean+s.CI)
				if s.Mean-s.CI > 0 {
					lo = math.Min(lo, s.Mean-s.CI)
				}
			}
		}
	}
	p := newPlot(m.title, key, "")
	if math.IsInf(lo, 1) {
		p.Title.Text += "\nnot measured"
		lo, hi = 0.1, 10
	}
	if hi/lo > 20 {
		logY(p, lo/1.5, hi*1.5)
	} else {
		p.Y.Min, p.Y.Max = 0, hi*1.1
		p.Y.Tick.Marker = siTicks{}
	}
	switch {
	case !numeric:
		p.NominalX(cats...)
		p.X.Min, p.X.Max = -0.5, float64(len(cats))-0.5
	case xhi > 0 && xlo > 0 && xhi/xlo >= 20:
		p.X.Scale = gplot.LogScale{}
		p.X.Tick.Marker = logTicks{}
		p.X.Min, p.X.Max = xlo/1.5, xhi*1.5
	default:
		pad := math.Max((xhi-xlo)*0.08, 0.5)
		p.X.Min, p.X.Max = xlo-pad, xhi+pad
		p.X.Tick.Marker = siTicks{}
	}
	p.Add(gridLines{}, &sweepMarks{lines: lines, m: m, dodge: !numeric})
	p.Draw(c)
}

type sweepMarks struct {
	lines []*sweepLine
	m     sweepMetric
	dodge bool // categories: set the lines a little apart, so whiskers do not hide each other
}

func (sm *sweepMarks) Plot(c draw.Canvas, p *gplot.Plot) {
	x, y := p.Transforms(&c)
	_, logAxis := p.Y.Scale.(gplot.LogScale)
	for i, l := range sm.lines {
		ls, gs := lineStyle(i)
		var pts []vg.Point
		for _, pt := range l.points {
			s := sm.m.get(pt.g)
			if !s.Valid() || logAxis && !finitePositive(s.Mean) {
				continue
			}
			xv := pt.x
			if sm.dodge {
				xv += 0.06 * (float64(i) - float64(len(sm.lines)-1)/2)
			}
			pt := vg.Point{X: x(xv), Y: y(s.Mean)}
			pts = append(pts, pt)
			if s.N >= 2 {
				whisker(c, p, pt.X, s.Mean, s.CI, ls.Color)
			}
		}
		if len(pts) > 1 {
			c.StrokeLines(ls, pts)
		}
		for _, pt := range pts {
			c.DrawGlyph(gs, pt)
		}
	}
}
