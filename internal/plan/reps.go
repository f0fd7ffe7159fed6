// Package plan sizes runs from evidence: given the records of earlier
// runs and the run settings a scenario file chose, it says how noisy each
// network and broker is, how long a window must be to hold enough
// deliveries, how many repetitions a row needs for a 95 % confidence
// interval within ±CI, and the machine time all of it costs
// (`pslab plan reps`).
package plan

import (
	"fmt"
	"io"
	"math"
	"sort"

	"pslab/internal/metrics"
	"pslab/internal/results"
	"pslab/internal/scenario"
)

// Unshaped is the network whose between-repetition noise is the
// machine's own: its windows already hold many deliveries, so a longer
// window does not make its repetitions agree better.
const Unshaped = "wireline"

// Phases are a network's warm-up, window and drain, in seconds.
type Phases struct{ Warmup, Window, Drain float64 }

// Options of the planner.
type Options struct {
	// Chosen are the run settings to plan for, by network (a scenario
	// file's per_network: block, ChosenFrom).
	Chosen map[string]Phases
	// MaxReps bounds the repetitions of a row (the file's max_reps:).
	MaxReps int
	// Parallel is the number of labs a shaped network's rows share.
	Parallel int
	// MinDeliveries a window should hold; CI the half-width to reach, as
	// a fraction of the mean; MinReps the fewest repetitions of a row.
	MinDeliveries int
	CI            float64
	MinReps       int
	// Windows are the windows (s) to weigh for each shaped network.
	Windows []float64
}

// DefaultOptions are the reproduction's: 1,000 deliveries, ±5 %, at
// least 3 repetitions, at most 10, 4 labs.
func DefaultOptions() Options {
	return Options{MaxReps: 10, Parallel: 4, MinDeliveries: 1000, CI: 0.05, MinReps: 3,
		Windows: []float64{30, 60, 90, 120, 180, 300}}
}

// ChosenFrom reads the run settings a scenario file chose: each network
// of its per_network: block, what that block leaves out from the file's
// cases, and its max_reps: (0 when not given).
func ChosenFrom(s *scenario.Suite) (map[string]Phases, int, error) {
	if len(s.Cases) == 0 {
		return nil, 0, fmt.Errorf("%s: no cases", s.File)
	}
	base := s.Cases[0]
	out := map[string]Phases{}
	for net, ph := range s.PerNetwork {
		p := Phases{base.Warmup.Seconds(), base.Window.Seconds(), base.Drain.Seconds()}
		if ph.Warmup != nil {
			p.Warmup = ph.Warmup.Seconds()
		}
		if ph.Window != nil {
			p.Window = ph.Window.Seconds()
		}
		if ph.Drain != nil {
			p.Drain = ph.Drain.Seconds()
		}
		out[net] = p
	}
	return out, s.RepsRule.MaxReps, nil
}

// rowKey is one case row of a network and broker.
type rowKey struct{ net, broker, suite, caseID string }

// nb is a network and broker.
type nb struct{ net, broker string }

// Reps writes the plan for recs (finished, non-quick records count) to
// out in Markdown: the noise per network and broker, the deliveries per
// second of each shaped row and the window that holds MinDeliveries, the
// repetitions each network and broker needs and the machine time. Every
// network the records have must be in o.Chosen.
//
// The model, stated: a window of W seconds averages W per-second counts,
// so a shaped network's between-repetition CV shrinks as sqrt(W0 / W)
// from the one measured at W0; the unshaped network's (the machine's own
// noise) does not shrink, and in the "floor" columns it bounds the shaped
// ones from below. The repetitions a row needs are the fewest n with
// t(0.975, n-1) * CV / sqrt(n) <= CI (metrics.RepsFor), at least
// MinReps. The run's own sequential rule corrects the estimate: rows
// repeat until the CI is reached, so an optimistic CV costs time, not
// validity.
func Reps(out io.Writer, recs []results.Record, o Options) error {
	rows := map[rowKey][]*results.Record{}
	for i := range recs {
		r := &recs[i]
		if r.Result == nil || r.Error != "" || r.Quick {
			continue
		}
		k := rowKey{r.Network.Profile, r.Broker, r.Suite, r.CaseID}
		rows[k] = append(rows[k], r)
	}
	if len(rows) == 0 {
		return fmt.Errorf("no finished full-run records")
	}
	nets := map[string]bool{}
	for k := range rows {
		nets[k.net] = true
		if _, ok := o.Chosen[k.net]; !ok {
			return fmt.Errorf("no run settings chosen for network %s (give a scenario file whose per_network: names it)", k.net)
		}
	}
	p := &planner{o: o, rows: rows, measured: map[nb]noise{}, overhead: map[string][]float64{}, drain: map[string][]float64{}, floor: map[string][]float64{}}
	p.noise(out)
	for _, net := range sortedKeys(nets) {
		if net != Unshaped {
			p.windows(out, net)
		}
	}
	p.machineTime(out)
	return nil
}

// noise is a network and broker's measured between-repetition CV (the
// larger of the two metrics': the rule needs both) and window.
type noise struct{ cv, window float64 }

type planner struct {
	o        Options
	rows     map[rowKey][]*results.Record
	measured map[nb]noise
	overhead map[string][]float64 // per record: wall time beyond warm-up and window, purge after included
	drain    map[string][]float64 // per record: the drain it was run with
	floor    map[string][]float64 // per network: median sub tput CV of each broker
	need     map[string][]float64 // per shaped network: window for MinDeliveries of each row (slowest broker)
	rowNeed  map[string][]float64 // per shaped network: the same per row and broker
}

func (p *planner) keys(net, broker string) []rowKey {
	var ks []rowKey
	for k := range p.rows {
		if k.net == net && (broker == "" || k.broker == broker) {
			ks = append(ks, k)
		}
	}
	sort.Slice(ks, func(i, j int) bool {
		if ks[i].suite != ks[j].suite {
			return ks[i].suite < ks[j].suite
		}
		return scenarioLess(ks[i].caseID, ks[j].caseID)
	})
	return ks
}

// sortPairs sorts network and broker pairs by network, then broker.
func sortPairs(ps []nb) {
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].net != ps[j].net {
			return ps[i].net < ps[j].net
		}
		return ps[i].broker < ps[j].broker
	})
}

func (p *planner) pairs() []nb {
	seen := map[nb]bool{}
	for k := range p.rows {
		seen[nb{k.net, k.broker}] = true
	}
	var out []nb
	for k := range seen {
		out = append(out, k)
	}
	sortPairs(out)
	return out
}

func (p *planner) noise(out io.Writer) {
	fmt.Fprintf(out, "## 1. Noise, per network x broker (medians over rows / records)\n\n")
	fmt.Fprintln(out, "| network | broker | rows | window now (s) | between-rep CV sub tput | between-rep CV mean latency | per-second CV in window | deliveries in window (median) | records < "+fmt.Sprint(p.o.MinDeliveries)+" |")
	fmt.Fprintln(out, "|---|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, pr := range p.pairs() {
		keys := p.keys(pr.net, pr.broker)
		var cvt, cvl, secs, dl, wins []float64
		few := 0
		for _, k := range keys {
			var tput, lat []float64
			for _, r := range p.rows[k] {
				tput = append(tput, r.Result.SubTput)
				if r.Result.Latency.Count > 0 {
					lat = append(lat, r.Result.Latency.MeanMs)
				}
				s := r.Settings
				w0, w := int(math.Round(s.WarmupS)), int(math.Round(s.WindowS))
				ser := r.Result.SubSeries[min(w0, len(r.Result.SubSeries)):min(w0+w, len(r.Result.SubSeries))]
				if c, ok := metrics.CV(floats(ser)); ok {
					secs = append(secs, c)
				}
				n := r.Result.Counts.ReceivedInWindow
				dl = append(dl, float64(n))
				if n < int64(p.o.MinDeliveries) {
					few++
				}
				wins = append(wins, s.WindowS)
				after := 0.0
				if r.Phases != nil {
					after = r.Phases.PurgeAfterS
				}
				p.overhead[pr.net] = append(p.overhead[pr.net], max(0, r.WallS-s.WarmupS-s.WindowS)+after)
				p.drain[pr.net] = append(p.drain[pr.net], s.DrainS)
			}
			if c, ok := metrics.CV(tput); ok {
				cvt = append(cvt, c)
			}
			if c, ok := metrics.CV(lat); ok {
				cvl = append(cvl, c)
			}
		}
		p.measured[pr] = noise{maxKnown(median(cvt), median(cvl)), median(wins)}
		p.floor[pr.net] = append(p.floor[pr.net], median(cvt))
		fmt.Fprintf(out, "| %s | %s | %d | %.0f | %.1f %% | %.1f %% | %.0f %% | %.0f | %d of %d |\n",
			pr.net, pr.broker, len(keys), median(wins), 100*median(cvt), 100*median(cvl), 100*median(secs), median(dl), few, len(dl))
	}
}

// brokersOn lists the brokers with records on net.
func (p *planner) brokersOn(net string) []string {
	seen := map[string]bool{}
	for k := range p.rows {
		if k.net == net {
			seen[k.broker] = true
		}
	}
	return sortedKeys(seen)
}

func (p *planner) windows(out io.Writer, net string) {
	o := p.o
	bs := p.brokersOn(net)
	fmt.Fprintf(out, "\n## 2. Deliveries per second in the window, %s, per case (median over reps)\n\n", net)
	fmt.Fprint(out, "| suite | case | factors |")
	for _, b := range bs {
		fmt.Fprintf(out, " %s /s |", b)
	}
	fmt.Fprintf(out, " window for %d (s) |\n|---|---|---|", o.MinDeliveries)
	for range bs {
		fmt.Fprint(out, "---:|")
	}
	fmt.Fprintln(out, "---:|")
	if p.need == nil {
		p.need, p.rowNeed = map[string][]float64{}, map[string][]float64{}
	}
	seen := map[[2]string]bool{}
	for _, k := range p.keys(net, "") {
		row := [2]string{k.suite, k.caseID}
		if seen[row] {
			continue
		}
		seen[row] = true
		var f scenario.Factors
		slow := math.Inf(1)
		fmt.Fprintf(out, "| %s | %s |", k.suite, k.caseID)
		var cells []string
		for _, b := range bs {
			rs := p.rows[rowKey{net, b, k.suite, k.caseID}]
			if len(rs) == 0 {
				cells = append(cells, " NaN |")
				continue
			}
			f = rs[0].Factors
			var rates []float64
			for _, r := range rs {
				rates = append(rates, float64(r.Result.Counts.ReceivedInWindow)/r.Settings.WindowS)
			}
			rate := median(rates)
			slow = min(slow, rate)
			p.rowNeed[net] = append(p.rowNeed[net], windowFor(o.MinDeliveries, rate))
			cells = append(cells, fmt.Sprintf(" %.1f |", rate))
		}
		w := windowFor(o.MinDeliveries, slow)
		p.need[net] = append(p.need[net], w)
		fmt.Fprintf(out, " %d/%d/%d %d B %s |", f.Publishers, f.Subscribers, f.Topics, f.Size, f.Subscription)
		for _, c := range cells {
			fmt.Fprint(out, c)
		}
		fmt.Fprintf(out, " %.0f |\n", w)
	}
	need := append([]float64(nil), p.need[net]...)
	sort.Float64s(need)
	q := func(x float64) float64 { return need[min(len(need)-1, int(x*float64(len(need))))] }
	fmt.Fprintf(out, "\nWindow for %d deliveries over %s rows: median %.0f s, 75 %% %.0f s, 90 %% %.0f s, max %.0f s.\n",
		o.MinDeliveries, net, q(0.5), q(0.75), q(0.9), need[len(need)-1])
	ch := o.Chosen[net]
	fmt.Fprintf(out, "With a %.0f s window, %d of %d %s case rows are expected below %d deliveries (flagged few-deliveries).\n",
		ch.Window, countAbove(need, ch.Window), len(need), net, o.MinDeliveries)

	c0, w0 := p.noisiest(net)
	fmt.Fprintf(out, "\n%s window choices (%.0f s now): rows expected below %d deliveries, and machine time of the %s half\n\n",
		net, w0, o.MinDeliveries, net)
	fmt.Fprintf(out, "| window (s) | rows < %d | reps (floor) | h, 1 lab | h, %d labs | reps (no floor) | h, %d labs (no floor) |\n", o.MinDeliveries, o.Parallel, o.Parallel)
	fmt.Fprintln(out, "|---:|---:|---:|---:|---:|---:|---:|")
	extra := p.extra(net)
	rows := len(p.keys(net, ""))
	floor := median(p.floor[Unshaped])
	for _, win := range o.Windows {
		perRun := ch.Warmup + win + ch.Drain + extra
		n := min(o.MaxReps, p.repsFor(expectedCV(net, c0, w0, win, floor)))
		h := float64(rows*n) * perRun / 3600
		n0 := min(o.MaxReps, p.repsFor(expectedCV(net, c0, w0, win, 0)))
		h0 := float64(rows*n0) * perRun / 3600
		fmt.Fprintf(out, "| %.0f | %d of %d | %d | %.1f | %.1f | %d | %.1f |\n", win, countAbove(need, win), len(need), n, h, h/float64(o.Parallel), n0, h0/float64(o.Parallel))
	}
}

// noisiest is the largest measured CV of net's brokers and its window.
func (p *planner) noisiest(net string) (cv, window float64) {
	for pr, m := range p.measured {
		if pr.net == net && m.cv >= cv {
			cv, window = m.cv, m.window
		}
	}
	return cv, window
}

// extra is a case run's time on net beyond warm-up, window and the chosen
// drain (connecting, the idle-link wait, purges, closing): the records'
// time beyond warm-up and window, less the drain they ran with on a
// shaped network (a lossy link uses it up; the chosen drain replaces
// it). On the unshaped network the drain ends as soon as every delivery
// has arrived, so the records' time is kept whole and the chosen drain
// is added as a bound.
func (p *planner) extra(net string) float64 {
	if net == Unshaped {
		return median(p.overhead[net])
	}
	return median(p.overhead[net]) - median(p.drain[net])
}

// repsFor is the repetitions a row of between-repetition CV cv needs
// under paper mode's `ci:` rule, whose intervals are corrected for its
// looks (results.Stopping: from MinReps to MaxReps).
func (p *planner) repsFor(cv float64) int {
	level := results.NewStopping(p.o.CI, p.o.MinReps, p.o.MaxReps).Level
	return metrics.RepsForLevel(cv, p.o.CI, level, p.o.MinReps, 1000)
}

func (p *planner) machineTime(out io.Writer) {
	o := p.o
	floor := median(p.floor[Unshaped])
	fmt.Fprintf(out, "\n## 3. Repetitions for +-%.0f %% at 95 %% (each look of the ci: rule corrected) and machine time\n\n", 100*o.CI)
	fmt.Fprintf(out, "Floor (machine noise) = %s between-rep CV = %.1f %%; needs %d reps for +-%.0f %% by itself.\n\n",
		Unshaped, 100*floor, p.repsFor(floor), 100*o.CI)
	fmt.Fprintf(out, "CV now: the larger of the two metrics' median between-repetition CVs (the rule needs both).\n\n")
	fmt.Fprintf(out, "| network | broker | CV now | warm-up/window/drain (s) | CV expected | reps for +-%.0f %% | reps used (cap %d) | drain+overhead/run (s) | rows | case runs | machine time (h) |\n", 100*o.CI, o.MaxReps)
	fmt.Fprintln(out, "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
	var one, labs float64
	for _, pr := range p.pairs() {
		m := p.measured[pr]
		ch := o.Chosen[pr.net]
		cexp := expectedCV(pr.net, m.cv, m.window, ch.Window, 0)
		n := p.repsFor(cexp)
		used := min(n, o.MaxReps)
		rest := ch.Drain + p.extra(pr.net)
		rows := len(p.keys(pr.net, pr.broker))
		runs := rows * used
		h := float64(runs) * (ch.Warmup + ch.Window + rest) / 3600
		one += h
		if pr.net == Unshaped {
			labs += h
		} else {
			labs += h / float64(o.Parallel)
		}
		fmt.Fprintf(out, "| %s | %s | %.1f %% | %g/%g/%g | %.1f %% | %d | %d | %.1f | %d | %d | %.2f |\n",
			pr.net, pr.broker, 100*m.cv, ch.Warmup, ch.Window, ch.Drain, 100*cexp, n, used, rest, rows, runs, h)
	}
	for _, net := range sortedKeys(p.need) {
		ch := o.Chosen[net]
		var lb float64
		for _, w := range p.rowNeed[net] {
			if !math.IsInf(w, 1) {
				lb += float64(o.MinReps) * (ch.Warmup + w + ch.Drain + p.extra(net))
			}
		}
		lb /= 3600
		fmt.Fprintf(out, "\nLower bound of the %s half if each row had its own window of exactly %d deliveries, %d reps: %.1f h with one lab, %.1f h in %d labs.\n",
			net, o.MinDeliveries, o.MinReps, lb, lb/float64(o.Parallel), o.Parallel)
	}
	fmt.Fprintf(out, "\nWhole plan: %.1f h with one lab; %.1f h with the shaped networks' rows in %d parallel labs (%s alone).\n", one, labs, o.Parallel, Unshaped)
}

// expectedCV is the between-repetition CV expected on net with a window
// of win seconds, from c0 measured with w0: the unshaped network's is the
// machine's and does not shrink; a shaped one's shrinks as sqrt(w0/win),
// not below floor.
func expectedCV(net string, c0, w0, win, floor float64) float64 {
	if net == Unshaped || win <= 0 || w0 <= 0 {
		return c0
	}
	return max(floor, c0*math.Sqrt(w0/win))
}

func windowFor(deliveries int, rate float64) float64 {
	if rate <= 0 {
		return math.Inf(1)
	}
	return float64(deliveries) / rate
}

func countAbove(xs []float64, limit float64) int {
	n := 0
	for _, x := range xs {
		if x > limit {
			n++
		}
	}
	return n
}

// median of xs, NaN when empty.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// maxKnown is the larger of a and b, NaN only when both are.
func maxKnown(a, b float64) float64 {
	switch {
	case math.IsNaN(a):
		return b
	case math.IsNaN(b):
		return a
	}
	return max(a, b)
}

func floats(xs []int64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// scenarioLess orders case ids as strings (the records' ids are
// zero-padded).
func scenarioLess(a, b string) bool { return a < b }
