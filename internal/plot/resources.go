package plot

import (
	"fmt"
	"image/color"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"pslab/internal/record"
	"pslab/internal/report"
	"pslab/internal/results"
)

// Resources is the figure kind of long runs' client memory and goroutines.
const Resources = "resources"

// resourceJobs makes one figure per long-run record (a soak): the client's
// RSS and goroutines per second, with the faults shaded.
func resourceJobs(d *report.Dataset) ([]job, []string) {
	var jobs []job
	for _, g := range d.Groups {
		for _, r := range g.Records {
			if _, ok := report.Trend(r); !ok {
				continue
			}
			jobs = append(jobs, resourceJob(g, r))
		}
	}
	if len(jobs) == 0 {
		return nil, []string{fmt.Sprintf("resources: no record with a window of at least %.0f s (a soak)", report.LongRun)}
	}
	return jobs, nil
}

func resourceJob(g *report.Group, r *results.Record) job {
	name := fmt.Sprintf("resources-%s-%s-%s-%s-r%d", g.Suite, g.Case, g.Broker, g.Network, r.Rep)
	const w, panelH = 9 * vg.Inch, 2.8 * vg.Inch
	headH := headerHeight(2)
	return job{name: name, w: w, h: headH + 2*panelH, draw: func(c draw.Canvas) {
		c.FillPolygon(color.White, rect(c.Rectangle))
		tr, _ := report.Trend(r)
		heapText := fmt.Sprintf("Go heap live %.1f → %.1f MB (%+.2f MB/h)", tr.HeapFirstMB, tr.HeapLastMB, tr.HeapSlopeMBh)
		if tr.HeapLastMB == 0 {
			heapText = "Go heap not recorded"
		}
		body := header(c, fmt.Sprintf("Client memory and goroutines  —  %s case %s, broker %s, network %s, rep %d", g.Suite, g.Case, g.Broker, g.Network, r.Rep),
			fmt.Sprintf("Per-second samples of pslab's own process from the start of the warm-up; shaded: scheduled faults; dashed: the window. First → last tenth of the window, slope over its second half: RSS %.1f → %.1f MB (%+.2f MB/h), %s, goroutines %d → %d (min %d, max %d).",
				tr.RSSFirstMB, tr.RSSLastMB, tr.RSSSlopeMBh, heapText, tr.GoroutinesFirst, tr.GoroutinesLast, tr.GoroutinesMin, tr.GoroutinesMax))
		pts := report.TrendPoints(r)
		rss, heap, gor := make(plotter.XYs, len(pts)), make(plotter.XYs, 0, len(pts)), make(plotter.XYs, len(pts))
		for i, p := range pts {
			rss[i] = plotter.XY{X: p.T, Y: p.RSSMB}
			if p.HeapMB > 0 {
				heap = append(heap, plotter.XY{X: p.T, Y: p.HeapMB})
			}
			gor[i] = plotter.XY{X: p.T, Y: float64(p.Goroutines)}
		}
		mem := trendPlot(r, "client memory", "MB", []trendLine{{"RSS", rss, solid(palette[2], 1.5)}, {"Go heap live after GC", heap, solid(palette[1], 1.2)}})
		gr := trendPlot(r, "client goroutines", "goroutines", []trendLine{{"goroutines", gor, solid(palette[0], 1.5)}})
		// One x axis for both: the panels are aligned.
		tiles := draw.Tiles{Rows: 2, Cols: 1, PadY: vg.Points(6)}
		cs := gplot.Align([][]*gplot.Plot{{mem}, {gr}}, tiles, body)
		mem.Draw(cs[0][0])
		gr.Draw(cs[1][0])
	}}
}

type trendLine struct {
	name  string
	xys   plotter.XYs
	style draw.LineStyle
}

func trendPlot(r *results.Record, title, unit string, lines []trendLine) *gplot.Plot {
	p := newPlot(title, "s since warm-up start", unit)
	maxY, maxX := 1.0, 0.0
	for _, l := range lines {
		for _, xy := range l.xys {
			maxY, maxX = max(maxY, xy.Y), max(maxX, xy.X)
		}
	}
	p.Y.Min, p.Y.Max = 0, maxY*1.15
	p.X.Min, p.X.Max = 0, maxX
	p.Add(&faultBands{r: r, windowStart: warmupOf(r), windowEnd: warmupOf(r) + r.Settings.WindowS})
	for _, tl := range lines {
		if len(tl.xys) == 0 {
			continue
		}
		if l, err := plotter.NewLine(tl.xys); err == nil {
			l.LineStyle = tl.style
			p.Add(l)
			if len(lines) > 1 {
				p.Legend.Add(tl.name, l)
			}
		}
	}
	p.Legend.Top, p.Legend.Left = false, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(8), vg.Points(6)
	return p
}

// faultBands shades a record's faults and marks its window.
type faultBands struct {
	r                      *results.Record
	windowStart, windowEnd float64
}

func (f *faultBands) Plot(c draw.Canvas, p *gplot.Plot) {
	x, _ := p.Transforms(&c)
	drawWindowAndFaults(c, x, f.windowStart, f.windowEnd, f.r.Result.Faults, false)
}

// drawWindowAndFaults marks the measurement window with dashed lines and
// shades each fault from when it was applied to when it was undone,
// labelled with its kind when label is set.
func drawWindowAndFaults(c draw.Canvas, x func(float64) vg.Length, windowStart, windowEnd float64, faults []record.FaultResult, label bool) {
	win := dashed(grey, 1)
	for _, t := range []float64{windowStart, windowEnd} {
		c.StrokeLine2(win, x(t), c.Min.Y, x(t), c.Max.Y)
	}
	for _, f := range faults {
		x0, x1 := x(f.StartS), x(f.EndS)
		c.FillPolygon(faultShade, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
		if label {
			fillText(c, 6.5, vg.Point{X: x0 + 1, Y: c.Max.Y - 1}, string(f.Kind), false)
		}
	}
}
