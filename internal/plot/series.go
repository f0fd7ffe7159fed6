package plot

import (
	"fmt"
	"image/color"
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"pslab/internal/record"
	"pslab/internal/report"
	"pslab/internal/scenario"
)

// seriesJobs makes one figure per suite x broker x network: a tile per
// case with the per-second publish and delivery counts of each repetition.
func seriesJobs(d *report.Dataset) ([]job, []string) {
	var jobs []job
	var skipped []string
	for _, suite := range d.Suites {
		for _, b := range d.Brokers {
			for _, n := range d.Networks {
				var tiles []*report.Group
				for _, c := range d.Cases(suite) {
					g := d.Get(suite, c.Case, b, n)
					if g != nil && hasSeries(g) {
						tiles = append(tiles, g)
					}
				}
				if len(tiles) == 0 {
					if anyGroup(d, suite, b, n) {
						skipped = append(skipped, fmt.Sprintf("series, suite %s, broker %s, network %s: no record with a per-second series", suite, b, n))
					}
					continue
				}
				jobs = append(jobs, seriesJob(suite, b, n, tiles))
			}
		}
	}
	return jobs, skipped
}

func anyGroup(d *report.Dataset, suite, broker, network string) bool {
	for _, g := range d.Groups {
		if g.Suite == suite && g.Broker == broker && g.Network == network {
			return true
		}
	}
	return false
}

func hasSeries(g *report.Group) bool {
	for _, r := range g.Records {
		if len(r.Result.PubSeries) > 0 || len(r.Result.SubSeries) > 0 {
			return true
		}
	}
	return false
}

func seriesJob(suite, broker, network string, tiles []*report.Group) job {
	cols := 6
	if len(tiles) < cols {
		cols = len(tiles)
	}
	rows := (len(tiles) + cols - 1) / cols
	const tileW, tileH = 3.1 * vg.Inch, 2.4 * vg.Inch
	headH := headerHeight(3)
	return job{name: fmt.Sprintf("series-%s-%s-%s", suite, broker, network),
		w: vg.Length(cols) * tileW, h: headH + vg.Length(rows)*tileH, draw: func(c draw.Canvas) {
			c.FillPolygon(color.White, rect(c.Rectangle))
			body := header(c, fmt.Sprintf("Per-second throughput  —  broker %s, network %s, suite %s", broker, network, suite),
				"Messages published (thick blue) and delivered (thin vermillion) in each second from the start of the warm-up, one line per repetition; dashed lines: the measurement window; shaded: a scheduled fault, from applied to undone. The last second may be partial.")
			top := body.Max.Y
			for i, g := range tiles {
				tc := c
				col, row := i%cols, i/cols
				tc.Min.X = c.Min.X + vg.Length(col)*tileW
				tc.Max.X = tc.Min.X + tileW
				tc.Max.Y = top - vg.Length(row)*tileH
				tc.Min.Y = tc.Max.Y - tileH
				drawSeriesTile(tc, g)
			}
		}}
}

func shortFactors(f scenario.Factors) string {
	abbrev := map[scenario.Subscription]string{scenario.Durable: "D", scenario.NonDurable: "ND"}
	del := map[scenario.Delivery]string{scenario.Persistent: "P", scenario.NonPersistent: "NP"}
	s := fmt.Sprintf("%d/%d/%d %s/%s %s %s %s", f.Publishers, f.Subscribers, f.Topics, abbrev[f.Subscription], del[f.Delivery], f.Ack, f.Body, sizeLabel(f.Size))
	if f.Selector {
		s += " sel"
	}
	return s
}

func drawSeriesTile(c draw.Canvas, g *report.Group) {
	p := newPlot(fmt.Sprintf("%s: %s", g.Case, shortFactors(g.Factors)), "s since warm-up start", "msgs/s")
	p.Title.TextStyle.Font.Size = 9
	p.X.Label.TextStyle.Font.Size = 8
	p.Y.Label.TextStyle.Font.Size = 8
	p.X.Tick.Label.Font.Size = 7.5
	p.Y.Tick.Label.Font.Size = 7.5
	maxY, maxX := 0.0, 0.0
	var ws, we float64
	for _, r := range g.Records {
		ws, we = warmupOf(r), warmupOf(r)+r.Settings.WindowS
		for _, xs := range [][]int64{r.Result.PubSeries, r.Result.SubSeries} {
			maxX = math.Max(maxX, float64(len(xs)))
			for _, v := range xs {
				maxY = math.Max(maxY, float64(v))
			}
		}
	}
	if maxY == 0 {
		maxY = 1
	}
	p.X.Min, p.X.Max = 0, math.Max(maxX, we)
	p.Y.Min, p.Y.Max = 0, maxY*1.1
	p.Y.Tick.Marker = siTicks{}
	p.X.Tick.Marker = siTicks{}
	p.Add(&seriesLines{g: g, windowStart: ws, windowEnd: we})
	p.Draw(c)
}

type seriesLines struct {
	g                      *report.Group
	windowStart, windowEnd float64
}

func (s *seriesLines) Plot(c draw.Canvas, p *gplot.Plot) {
	x, y := p.Transforms(&c)
	// Faults of the first repetition (they are scheduled alike in all).
	var faults []record.FaultResult
	if len(s.g.Records) > 0 {
		faults = s.g.Records[0].Result.Faults
	}
	drawWindowAndFaults(c, x, s.windowStart, s.windowEnd, faults, true)
	for _, r := range s.g.Records {
		for i, xs := range [][]int64{r.Result.PubSeries, r.Result.SubSeries} {
			ls := solid(palette[2], 3)
			if i == 1 {
				ls = solid(palette[1], 1.2)
			}
			var pts []vg.Point
			for k, v := range xs {
				// Bin k counts the messages of second [k, k+1).
				pts = append(pts, vg.Point{X: x(float64(k)), Y: y(float64(v))}, vg.Point{X: x(float64(k + 1)), Y: y(float64(v))})
			}
			if len(pts) > 0 {
				c.StrokeLines(ls, pts)
			}
		}
	}
}
