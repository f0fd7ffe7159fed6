package plot

import (
	"fmt"
	"image/color"
	"math"
	"os"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The "hockey stick" of pslab capacity (docs/capacity.md): per case,
// latency against delivered throughput, one curve per broker × network,
// from the runs at fixed fractions of each row's capacity and the
// sustained probes of its searches, with each row's capacity marked.

// HockeyPoint is one run or level on a curve: delivered msgs/s and
// latency (ms). Level: a fixed-load level (means over its runs); else a
// sustained probe.
type HockeyPoint struct {
	Delivered, MeanMs, P99Ms float64
	Level                    bool
}

// HockeyCurve is one broker × network of a case.
type HockeyCurve struct {
	Label  string // e.g. "nats wireline"
	Points []HockeyPoint
	// Capacity in delivered msgs/s (0: not known), LowerBound: a lower
	// bound (the clients bounded it).
	Capacity   float64
	LowerBound bool
}

// HockeyCase is one figure: a case and its curves.
type HockeyCase struct {
	Name   string // file name part, e.g. "gaddah-kunz-set1-01"
	Title  string
	Curves []HockeyCurve
}

// Hockey draws one figure per case into o.OutDir (hockey-<name>); cases
// without a point are skipped with the reason.
func Hockey(cases []HockeyCase, o Options) (Output, error) {
	var out Output
	if o.DPI <= 0 {
		o.DPI = 96
	}
	var jobs []job
	for _, hc := range cases {
		n := 0
		for _, c := range hc.Curves {
			n += len(c.Points)
		}
		if n == 0 {
			out.Skipped = append(out.Skipped, fmt.Sprintf("hockey %s: no sustained probe or fixed-load run yet", hc.Name))
			continue
		}
		jobs = append(jobs, hockeyJob(hc))
	}
	if len(jobs) == 0 {
		return out, nil
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return out, err
	}
	files, err := writeJobs(o, jobs)
	out.Files = files
	return out, err
}

func hockeyJob(hc HockeyCase) job {
	return job{name: "hockey-" + hc.Name, w: 8 * vg.Inch, h: 6 * vg.Inch, draw: func(c draw.Canvas) {
		c.FillPolygon(color.White, rect(c.Rectangle))
		body := header(c, hc.Title,
			"Latency against delivered throughput, open loop: filled markers and solid lines are the mean latency at fixed fractions of the row's capacity (means over their runs), hollow markers and dashed lines their p99; dots are the searches' sustained probes (p99). A vertical line marks each row's capacity (dotted: a lower bound, the clients bounded it). Log axes.")
		p := newPlot("", "delivered msgs/s (log)", "latency ms (log)")
		p.X.Scale, p.Y.Scale = gplot.LogScale{}, gplot.LogScale{}
		p.X.Tick.Marker, p.Y.Tick.Marker = logTicks{}, logTicks{}
		p.Legend.Top, p.Legend.Left = true, true
		xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
		grow := func(x, y float64) {
			if x > 0 && y > 0 {
				xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
				ymin, ymax = math.Min(ymin, y), math.Max(ymax, y)
			}
		}
		for i, cv := range hc.Curves {
			col := palette[i%len(palette)]
			var mean, p99, probes plotter.XYs
			for _, pt := range cv.Points {
				if !(pt.Delivered > 0) {
					continue
				}
				if pt.Level {
					if pt.MeanMs > 0 {
						mean = append(mean, plotter.XY{X: pt.Delivered, Y: pt.MeanMs})
					}
					if pt.P99Ms > 0 {
						p99 = append(p99, plotter.XY{X: pt.Delivered, Y: pt.P99Ms})
					}
				} else if pt.P99Ms > 0 {
					probes = append(probes, plotter.XY{X: pt.Delivered, Y: pt.P99Ms})
				}
				grow(pt.Delivered, pt.MeanMs)
				grow(pt.Delivered, pt.P99Ms)
			}
			if len(mean) > 0 {
				l, s, err := plotter.NewLinePoints(mean)
				if err == nil {
					l.Color, s.Color = col, col
					l.Width = vg.Points(1.6)
					s.Shape, s.Radius = draw.CircleGlyph{}, vg.Points(3.5)
					p.Add(l, s)
					p.Legend.Add(cv.Label+" mean", l, s)
				}
			}
			if len(p99) > 0 {
				l, s, err := plotter.NewLinePoints(p99)
				if err == nil {
					l.Color, s.Color = col, col
					l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
					s.Shape, s.Radius = draw.RingGlyph{}, vg.Points(3.5)
					p.Add(l, s)
					p.Legend.Add(cv.Label+" p99", l, s)
				}
			}
			if len(probes) > 0 {
				if s, err := plotter.NewScatter(probes); err == nil {
					s.Color, s.Shape, s.Radius = col, draw.CircleGlyph{}, vg.Points(1.5)
					p.Add(s)
					if len(mean) == 0 && len(p99) == 0 {
						p.Legend.Add(cv.Label+" probes (p99)", s)
					}
				}
			}
			if cv.Capacity > 0 {
				grow(cv.Capacity, math.NaN())
				xmin, xmax = math.Min(xmin, cv.Capacity), math.Max(xmax, cv.Capacity)
			}
		}
		if math.IsInf(xmin, 1) || math.IsInf(ymin, 1) {
			return
		}
		p.X.Min, p.X.Max = xmin/1.5, xmax*1.5
		p.Y.Min, p.Y.Max = ymin/1.5, ymax*1.5
		for i, cv := range hc.Curves {
			if cv.Capacity > 0 {
				p.Add(capacityLine{x: cv.Capacity, col: palette[i%len(palette)], dotted: cv.LowerBound})
			}
		}
		p.Add(plotter.NewGrid())
		p.Draw(body)
	}}
}

// capacityLine marks a capacity with a vertical line.
type capacityLine struct {
	x      float64
	col    color.Color
	dotted bool
}

func (cl capacityLine) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, _ := p.Transforms(&c)
	x := trX(cl.x)
	st := draw.LineStyle{Color: cl.col, Width: vg.Points(1)}
	if cl.dotted {
		st.Dashes = []vg.Length{vg.Points(1.5), vg.Points(2.5)}
	}
	c.StrokeLine2(st, x, c.Min.Y, x, c.Max.Y)
}
