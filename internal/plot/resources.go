package plot

import (
	"fmt"
	"image/color"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

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
	const w, panelH = 9 * vg.Inch, 2.6 * vg.Inch
	headH := headerHeight(2)
	return job{name: name, w: w, h: headH + 2*panelH, draw: func(c draw.Canvas) {
		c.FillPolygon(color.White, rect(c.Rectangle))
		tr, _ := report.Trend(r)
		body := header(c, fmt.Sprintf("Client memory and goroutines  —  %s case %s, broker %s, network %s, rep %d", g.Suite, g.Case, g.Broker, g.Network, r.Rep),
			fmt.Sprintf("Per-second samples of pslab's own process from the start of the warm-up; shaded: scheduled faults; dashed: the measurement window. RSS %.1f → %.1f MB (slope %+.2f MB/h), goroutines %d → %d (min %d, max %d).",
				tr.RSSFirstMB, tr.RSSLastMB, tr.RSSSlopeMBh, tr.GoroutinesFirst, tr.GoroutinesLast, tr.GoroutinesMin, tr.GoroutinesMax))
		pts := report.TrendPoints(r)
		rss, gor := make(plotter.XYs, len(pts)), make(plotter.XYs, len(pts))
		for i, p := range pts {
			rss[i] = plotter.XY{X: p.T, Y: p.RSSMB}
			gor[i] = plotter.XY{X: p.T, Y: float64(p.Goroutines)}
		}
		top, bottom := body, body
		top.Min.Y = body.Max.Y - panelH
		bottom.Max.Y = top.Min.Y
		drawTrendPanel(top, r, rss, "client RSS", "MB", palette[2])
		drawTrendPanel(bottom, r, gor, "client goroutines", "goroutines", palette[1])
	}}
}

func drawTrendPanel(c draw.Canvas, r *results.Record, xys plotter.XYs, title, unit string, col color.Color) {
	p := newPlot(title, "s since warm-up start", unit)
	maxY := 1.0
	for _, xy := range xys {
		maxY = max(maxY, xy.Y)
	}
	p.Y.Min, p.Y.Max = 0, maxY*1.15
	p.X.Min = 0
	if n := len(xys); n > 0 {
		p.X.Max = xys[n-1].X
	}
	p.Add(&faultBands{r: r, windowStart: r.Settings.WarmupS, windowEnd: r.Settings.WarmupS + r.Settings.WindowS})
	if l, err := plotter.NewLine(xys); err == nil {
		l.LineStyle = solid(col, 1.5)
		p.Add(l)
	}
	p.Draw(c)
}

// faultBands shades a record's faults and marks its window.
type faultBands struct {
	r                      *results.Record
	windowStart, windowEnd float64
}

func (f *faultBands) Plot(c draw.Canvas, p *gplot.Plot) {
	x, _ := p.Transforms(&c)
	for _, fr := range f.r.Result.Faults {
		x0, x1 := x(fr.StartS), x(fr.EndS)
		c.FillPolygon(faultShade, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
	}
	win := dashed(grey, 1)
	for _, t := range []float64{f.windowStart, f.windowEnd} {
		c.StrokeLine2(win, x(t), c.Min.Y, x(t), c.Max.Y)
	}
}
