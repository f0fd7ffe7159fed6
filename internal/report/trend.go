package report

import (
	"fmt"

	"pslab/internal/results"
)

// LongRun is the window length from which a record's client resources are
// reported as a trend (a soak).
const LongRun = 300.0 // seconds

// ClientTrend summarises the client's memory and goroutines over a long
// run's measurement window, from its per-second samples.
type ClientTrend struct {
	Samples    int
	DurationS  float64
	RSSFirstMB float64 // mean over the first tenth of the window
	RSSLastMB  float64 // mean over the last tenth
	// RSSSlopeMBh is the least-squares slope of RSS over the second half
	// of the window (the first half includes the run settling in:
	// buffers, trackers, the heap target growing).
	RSSSlopeMBh float64
	// The Go heap marked live by the GC, the same way (all 0 when the
	// records predate it).
	HeapFirstMB, HeapLastMB, HeapSlopeMBh float64

	GoroutinesFirst, GoroutinesLast int
	GoroutinesMin, GoroutinesMax    int
}

// TrendPoint is one client sample on the time axis of the per-second
// series (seconds since the warm-up began).
type TrendPoint struct {
	T          float64
	RSSMB      float64
	HeapMB     float64
	Goroutines int
}

// TrendPoints maps a record's client samples to the series' time axis.
// The sampler starts before the clients connect, so connection set-up is
// subtracted.
func TrendPoints(r *results.Record) []TrendPoint {
	if r.Result == nil || r.Resources == nil {
		return nil
	}
	var out []TrendPoint
	for _, s := range r.Resources.ClientSamples {
		t := s.T - r.Result.Connect
		if t < 0 {
			continue
		}
		out = append(out, TrendPoint{T: t, RSSMB: float64(s.RSSBytes) / 1e6, HeapMB: float64(s.HeapLiveBytes) / 1e6, Goroutines: s.Goroutines})
	}
	return out
}

// Trend summarises a record's window; ok is false for a window shorter
// than LongRun or with fewer than 20 samples in it.
func Trend(r *results.Record) (ClientTrend, bool) {
	if r.Settings.WindowS < LongRun {
		return ClientTrend{}, false
	}
	from, to := r.Settings.WarmupS, r.Settings.WarmupS+r.Settings.WindowS
	var in []TrendPoint
	for _, p := range TrendPoints(r) {
		if p.T >= from && p.T <= to {
			in = append(in, p)
		}
	}
	if len(in) < 20 {
		return ClientTrend{}, false
	}
	tenth := max(len(in)/10, 1)
	rss := func(p TrendPoint) float64 { return p.RSSMB }
	heap := func(p TrendPoint) float64 { return p.HeapMB }
	second := in[len(in)/2:]
	tr := ClientTrend{Samples: len(in), DurationS: in[len(in)-1].T - in[0].T,
		RSSFirstMB: meanOf(in[:tenth], rss), RSSLastMB: meanOf(in[len(in)-tenth:], rss), RSSSlopeMBh: slopePerHour(second, rss),
		HeapFirstMB: meanOf(in[:tenth], heap), HeapLastMB: meanOf(in[len(in)-tenth:], heap), HeapSlopeMBh: slopePerHour(second, heap),
		GoroutinesFirst: in[0].Goroutines, GoroutinesLast: in[len(in)-1].Goroutines,
		GoroutinesMin: in[0].Goroutines, GoroutinesMax: in[0].Goroutines}
	for _, p := range in {
		tr.GoroutinesMin = min(tr.GoroutinesMin, p.Goroutines)
		tr.GoroutinesMax = max(tr.GoroutinesMax, p.Goroutines)
	}
	return tr, true
}

func meanOf(ps []TrendPoint, get func(TrendPoint) float64) float64 {
	s := 0.0
	for _, p := range ps {
		s += get(p)
	}
	return s / float64(len(ps))
}

// slopePerHour is the least-squares slope of get over time, per hour.
func slopePerHour(ps []TrendPoint, get func(TrendPoint) float64) float64 {
	var st, sy, stt, sty float64
	n := float64(len(ps))
	for _, p := range ps {
		y := get(p)
		st += p.T
		sy += y
		stt += p.T * p.T
		sty += p.T * y
	}
	d := n*stt - st*st
	if d <= 0 {
		return 0
	}
	return (n*sty - st*sy) / d * 3600
}

// trends writes the client-resources section for a suite's long runs.
func (m *mdWriter) trends(d *Dataset, suite string) {
	type row struct {
		g  *Group
		r  *results.Record
		tr ClientTrend
	}
	var rows []row
	for _, g := range d.Groups {
		if g.Suite != suite {
			continue
		}
		for _, r := range g.Records {
			if tr, ok := Trend(r); ok {
				rows = append(rows, row{g, r, tr})
			}
		}
	}
	if len(rows) == 0 {
		return
	}
	m.p("### Client memory and goroutines over long runs")
	m.p("")
	m.p("From the client's per-second samples inside the measurement window (pslab plot draws the curve as resources-*.png). First/last: mean of the first and last tenth of the window; slope: least squares over the second half (the first half includes the run settling in). Heap: the Go heap marked live by the last GC, which does not count memory the runtime keeps for reuse (RSS does): a leak shows there.")
	m.p("")
	m.head("case", "broker", "network", "rep", "window s", "samples", "RSS first MB", "RSS last MB", "RSS slope MB/h", "heap first MB", "heap last MB", "heap slope MB/h", "goroutines first", "last", "min", "max")
	for _, x := range rows {
		t := x.tr
		m.row(x.g.Case, x.g.Broker, x.g.Network, fmt.Sprint(x.r.Rep), fmt.Sprintf("%.0f", t.DurationS), fmt.Sprint(t.Samples),
			fmt.Sprintf("%.1f", t.RSSFirstMB), fmt.Sprintf("%.1f", t.RSSLastMB), fmt.Sprintf("%+.2f", t.RSSSlopeMBh),
			fmt.Sprintf("%.1f", t.HeapFirstMB), fmt.Sprintf("%.1f", t.HeapLastMB), fmt.Sprintf("%+.2f", t.HeapSlopeMBh),
			fmt.Sprint(t.GoroutinesFirst), fmt.Sprint(t.GoroutinesLast), fmt.Sprint(t.GoroutinesMin), fmt.Sprint(t.GoroutinesMax))
	}
	m.p("")
}
