package capacity

import (
	"fmt"
	"math"

	"pslab/internal/lab"
	"pslab/internal/metrics"
	"pslab/internal/results"
	"pslab/internal/scenario"
)

// Where a row's searches start (results.Probe.StartFrom).
const (
	FromPrior   = "prior"      // the row's delivered rate in earlier records (paper mode)
	FromLink    = "link-bound" // the emulated link's goodput for the case's bytes
	FromDefault = "default"    // neither: Params.DefaultStart
	FromPilot   = "pilot"      // a counted search: the middle of the pilot's bracket
)

// Search is one search of a row as its probes replay.
type Search struct {
	Index  int // 0: the pilot
	Params SearchParams
	// All are the search's probes in the order they ran, Probes those
	// that count (without the ones run again on a busy machine or after a
	// marginal failure, busy.go); Busy how many were run again.
	All    []*results.Record
	Probes []*results.Record
	Busy   int
	State  State
}

// Level is a row's runs at one fixed fraction of its capacity.
type Level struct {
	Fraction float64
	Load     float64 // offered msgs/s
	// Runs are the level's runs that count (busy.go), Busy how many
	// more were run again because the machine was busy.
	Runs []*results.Record
	Busy int
	// TargetMeanMs, TargetP99Ms: the CI half-widths aimed at (fixed by
	// the level's first run); Need: the runs Stein's rule asks for (0
	// until the first stage is done).
	TargetMeanMs, TargetP99Ms float64
	Need                      int
	// Unreachable: the runs the targets would need, when more than the
	// cap (LatencyMaxReps): the level stops at its first stage.
	Unreachable int
}

// Row is a row's capacity search and fixed-load runs, replayed from its
// records (a pure function of them and the parameters).
type Row struct {
	Start     float64
	StartFrom string
	Min, Max  float64
	Pilot     Search
	Searches  []Search // the counted searches begun, in order
	// Need is the counted searches Stein's rule asks for (0 until the
	// first stage is done); SearchesDone says the capacity part is over,
	// Outcome why when it is not a capacity (BelowMin, AboveMax, or
	// NoSustained).
	Need         int
	SearchesDone bool
	Outcome      string
	// Estimates are the done counted searches' estimates (State.Estimate;
	// searches without one are left out), Capacity their geometric mean
	// and Lo..Hi its 95 % CI (Stein's, widened by half the resolution),
	// HalfPct the CI's half-width in % (its larger side). LowerBound: the
	// capacity is a lower bound (a search ran out of loads, or the
	// clients bounded it: see Bound).
	Estimates        []float64
	Capacity, Lo, Hi float64
	HalfPct          float64
	LowerBound       bool
	// Unestimated counts the done counted searches that sustained no load
	// in their probes: they give no estimate, and say the capacity may be
	// lower than the others' (String says so).
	Unestimated int
	Fixed       []Level
	Bound       Bound
	// LinkBound is the emulated link's computed bound for the case
	// (LinkBound; 0 on an unshaped path).
	LinkBound float64
}

// NoSustained: the pilot ran out of probes without a sustained load.
const NoSustained = "no-sustained-load"

// PriorKey is the key of a row in Params.Priors.
func PriorKey(suite, caseID, broker, network string) string {
	return suite + "/" + caseID + "/" + broker + "/" + network
}

// linkBound is row's computed link bound (LinkBound) with the frame
// overhead of its broker's protocol (0 when not known: LinkBound then
// takes FrameOverhead).
func (p Params) linkBound(row lab.PolicyRow) float64 {
	overhead := 0
	if p.FrameOverhead != nil {
		overhead = p.FrameOverhead(row.Broker, row.Case.Factors)
	}
	return LinkBound(row.Case.Factors, overhead, row.Link, row.Verify)
}

// startOf is where row's pilot starts and why.
func (p Params) startOf(row lab.PolicyRow) (float64, string) {
	if v, ok := p.Priors[PriorKey(row.Suite, row.Case.ID, row.Broker, row.Network)]; ok && v > 0 {
		return v, FromPrior
	}
	if row.Link.Shaped() {
		if b := p.linkBound(row); b > 0 {
			return b, FromLink
		}
	}
	return p.DefaultStart, FromDefault
}

// Analyze replays a row's records (in the order they ran).
func (p Params) Analyze(row lab.PolicyRow, recs []results.Record) Row {
	var rw Row
	ph := p.PhasesFor(row.Link)
	var probes = map[int][]*results.Record{}
	fixed := map[float64][]*results.Record{}
	for i := range recs {
		r := &recs[i]
		switch {
		case r.Mode == results.ModeCapacityProbe && r.Probe != nil:
			probes[r.Probe.Search] = append(probes[r.Probe.Search], r)
		case r.Mode == results.ModeFixedLoad && r.FixedLoad != nil:
			fixed[r.FixedLoad.Fraction] = append(fixed[r.FixedLoad.Fraction], r)
		}
	}
	rw.Start, rw.StartFrom = p.startOf(row)
	if row.Link.Shaped() {
		rw.LinkBound = p.linkBound(row)
	}
	if pr := probes[0]; len(pr) > 0 { // as the pilot started (a resumed run may know more now)
		rw.Start, rw.StartFrom = pr[0].Probe.Start, pr[0].Probe.StartFrom
	}
	rw.Min = p.MinWindowSends / ph.Window.Seconds()
	factor := p.MaxLoadFactor
	if rw.StartFrom == FromDefault {
		factor = p.DefaultMaxLoadFactor
	}
	rw.Max = math.Max(rw.Start*factor, rw.Min)
	step := p.PilotStep
	if rw.StartFrom != FromDefault {
		step = p.PriorStep
	}
	attempts := p.busyAttemptsOn(row.Link)
	rw.Pilot = p.replaySearch(0, SearchParams{Start: rw.Start, Step: step, Resolution: p.PilotResolution,
		Min: rw.Min, Max: rw.Max, MaxProbes: p.MaxProbes}, probes[0], attempts)
	if !rw.Pilot.State.Done {
		return rw
	}
	start := rw.Pilot.State.Estimate()
	switch {
	case rw.Pilot.State.Outcome == BelowMin:
		rw.SearchesDone, rw.Outcome = true, BelowMin
		return rw
	case rw.Pilot.State.Outcome == AboveMax:
		rw.SearchesDone, rw.Outcome, rw.LowerBound = true, AboveMax, true
		rw.Capacity, rw.Lo, rw.Hi = start, start, math.Inf(1)
		rw.Bound = p.boundOf(row, rw)
		return rw
	case start <= 0:
		rw.SearchesDone, rw.Outcome = true, NoSustained
		return rw
	}
	counted := SearchParams{Start: start, Step: p.Step, Resolution: p.Resolution, Min: rw.Min, Max: rw.Max, MaxProbes: p.MaxProbes,
		Confirm: p.ConfirmOn(row.Link)}
	for k := 1; ; k++ {
		// Searches run one after the other: every earlier one is done here.
		if len(probes[k]) == 0 && rw.wantSearches(p) < k {
			break
		}
		s := p.replaySearch(k, counted, probes[k], attempts)
		rw.Searches = append(rw.Searches, s)
		if !s.State.Done {
			return rw
		}
		if e := s.State.Estimate(); e > 0 {
			rw.Estimates = append(rw.Estimates, e)
		} else {
			rw.Unestimated++
		}
		// Out of loads, or out of probes while nothing had failed: the
		// estimate is the highest load sustained, a lower bound.
		if s.State.Outcome == AboveMax || s.State.Outcome == MaxProbes && s.State.Lo > 0 && s.State.Hi == 0 {
			rw.LowerBound = true
		}
		rw.Need = rw.stein(p)
	}
	rw.SearchesDone = true
	rw.capacityCI(p)
	rw.Bound = p.boundOf(row, rw)
	if rw.Bound.Name == BoundClient || rw.Bound.Name == BoundNone {
		rw.LowerBound = true
	}
	if rw.Capacity > 0 {
		rw.Fixed = p.levels(row, rw, fixed)
	}
	return rw
}

// wantSearches is how many counted searches the row runs: the first
// stage, then what Stein's rule asked for.
func (rw *Row) wantSearches(p Params) int {
	if rw.Need > 0 {
		return rw.Need
	}
	return p.MinSearches
}

// stein is the counted searches Stein's rule asks for once the first
// stage is done (0 before): on log estimates, for a half-width of the
// target less half the resolution, between MinSearches and MaxSearches.
func (rw *Row) stein(p Params) int {
	if len(rw.Searches) < p.MinSearches {
		return 0
	}
	if rw.Need > 0 {
		return rw.Need
	}
	first := logs(rw.Estimates[:min(len(rw.Estimates), p.MinSearches)])
	if len(first) < 2 {
		return p.MinSearches // too few estimates for a spread: no CI (said)
	}
	return min(max(metrics.SteinN(first, p.steinTarget()), p.MinSearches), p.MaxSearches)
}

// capacityCI is the capacity (geometric mean of the estimates) and its
// CI: Stein's interval on log estimates (first stage: the first
// MinSearches), widened by half the resolution, the error of each
// estimate's bracket.
func (rw *Row) capacityCI(p Params) {
	ls := logs(rw.Estimates)
	if len(ls) == 0 {
		rw.Outcome = NoSustained
		return
	}
	m, h := metrics.SteinCI(ls, min(p.MinSearches, len(ls)))
	rw.Capacity = math.Exp(m)
	if math.IsNaN(h) {
		rw.Lo, rw.Hi, rw.HalfPct = math.NaN(), math.NaN(), math.NaN()
		return
	}
	h += math.Log(1+p.Resolution) / 2
	rw.Lo, rw.Hi = math.Exp(m-h), math.Exp(m+h)
	rw.HalfPct = 100 * (math.Exp(h) - 1)
}

func logs(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if x > 0 {
			out = append(out, math.Log(x))
		}
	}
	return out
}

func (p Params) replaySearch(k int, sp SearchParams, all []*results.Record, attempts int) Search {
	if len(all) > 0 { // the rule the search began with (records of older pslab: one probe decides)
		sp.Confirm = max(all[0].Probe.Confirm, 1)
	}
	probes, dropped := counted(all, attempts)
	probes, again := confirmed(probes)
	dropped += again
	steps := make([]Step, len(probes))
	for i, r := range probes {
		steps[i] = Step{Load: r.Probe.OfferedPerS, Sustained: r.Probe.Sustained}
	}
	return Search{Index: k, Params: sp, All: all, Probes: probes, Busy: dropped, State: Replay(sp, steps)}
}

// levels replays the fixed-load runs of a row whose capacity is known.
func (p Params) levels(row lab.PolicyRow, rw Row, runs map[float64][]*results.Record) []Level {
	var out []Level
	for _, f := range p.Loads {
		lv := Level{Fraction: f, Load: f * rw.Capacity}
		for k, rs := range runs {
			if math.Abs(k-f) < 1e-9 {
				lv.Runs, lv.Busy = counted(rs, p.busyAttemptsOn(row.Link))
			}
		}
		if first := firstRun(runs, f); first != nil {
			lv.TargetMeanMs, lv.TargetP99Ms = first.FixedLoad.TargetMeanMs, first.FixedLoad.TargetP99Ms
		} else {
			lv.TargetMeanMs, lv.TargetP99Ms = p.latencyTargets(row, rw, lv.Load)
		}
		if len(lv.Runs) >= p.LatencyMinReps {
			mean, p99 := latencies(lv.Runs[:p.LatencyMinReps])
			lv.Need = max(metrics.SteinN(mean, lv.TargetMeanMs), metrics.SteinN(p99, lv.TargetP99Ms), p.LatencyMinReps)
			if lv.Need > p.LatencyMaxReps {
				// Out of reach within the cap: more runs would narrow the
				// CI without reaching the target, so the level keeps its
				// first stage (its CI is valid) and says what it needed.
				lv.Unreachable, lv.Need = lv.Need, p.LatencyMinReps
			}
		}
		out = append(out, lv)
	}
	return out
}

// firstRun is the first run of level f (counted or not): it fixed the
// level's targets.
func firstRun(runs map[float64][]*results.Record, f float64) *results.Record {
	for k, rs := range runs {
		if math.Abs(k-f) < 1e-9 && len(rs) > 0 {
			return rs[0]
		}
	}
	return nil
}

// latencies are the mean and p99 latency (ms) of runs.
func latencies(runs []*results.Record) (mean, p99 []float64) {
	for _, r := range runs {
		if r.Result == nil {
			continue
		}
		mean = append(mean, r.Result.Latency.MeanMs)
		p99 = append(p99, r.Result.Latency.P99Ms)
	}
	return mean, p99
}

// latencyTargets are the CI half-widths a level aims at, fixed before its
// first run from independent data (so that Stein's rule covers 95 %):
// LatencyTarget of the mean and p99 latency of the counted searches'
// sustained probe nearest the level's load (on a log scale), and at least
// the run's latency floor.
func (p Params) latencyTargets(row lab.PolicyRow, rw Row, load float64) (mean, p99 float64) {
	var best *results.Record
	bestD := math.Inf(1)
	for _, s := range rw.Searches {
		for _, r := range s.Probes {
			if !r.Probe.Sustained || r.Result == nil || r.Result.Latency.Count == 0 {
				continue
			}
			if d := math.Abs(math.Log(r.Probe.OfferedPerS / load)); d < bestD {
				best, bestD = r, d
			}
		}
	}
	floor := 0.0
	if row.Floor != nil {
		floor = row.Floor.FloorMs
	}
	if best == nil {
		return floor, floor
	}
	l := best.Result.Latency
	return math.Max(p.LatencyTarget*l.MeanMs, floor), math.Max(p.LatencyTarget*l.P99Ms, floor)
}

// LevelStat is a level's latency with Stein's CI.
type LevelStat struct {
	Mean, MeanHalf, P99, P99Half float64
	N                            int
	// Within: both half-widths within LatencyTarget of their value or
	// within the floor (the level's targets, which include it).
	Within bool
}

// Stat of a level: Stein's intervals of mean and p99 latency over its
// runs (first stage: the first LatencyMinReps).
func (p Params) Stat(lv Level, floorMs float64) LevelStat {
	mean, p99 := latencies(lv.Runs)
	st := LevelStat{N: len(mean)}
	if len(mean) == 0 {
		return st
	}
	n0 := min(p.LatencyMinReps, len(mean))
	st.Mean, st.MeanHalf = metrics.SteinCI(mean, n0)
	st.P99, st.P99Half = metrics.SteinCI(p99, n0)
	ok := func(v, h float64) bool {
		return !math.IsNaN(h) && (h <= p.LatencyTarget*v || h <= floorMs)
	}
	st.Within = ok(st.Mean, st.MeanHalf) && ok(st.P99, st.P99Half)
	return st
}

// caseAt is row's case at an offered load with the network's probe phases.
func (p Params) caseAt(row lab.PolicyRow, load float64) scenario.Case {
	c := row.Case
	ph := p.PhasesFor(row.Link)
	c.Warmup, c.Window, c.Drain = ph.Warmup, ph.Window, ph.Drain
	c.Rate = load / float64(max(c.Publishers, 1))
	return c
}

// String is a row's capacity as the table shows it: "12,345 msg/s
// ±2.1 %", "≥ 12,345" for a lower bound.
func (rw Row) String() string {
	switch rw.Outcome {
	case BelowMin:
		return fmt.Sprintf("< %s (the lowest load probed failed)", fmtLoad(rw.Min))
	case NoSustained:
		return "no sustained load found"
	}
	if rw.Capacity <= 0 {
		return "not measured yet"
	}
	s := fmtLoad(rw.Capacity)
	if rw.LowerBound {
		s = "≥ " + s
	}
	if !math.IsNaN(rw.HalfPct) && !math.IsInf(rw.Hi, 1) && rw.HalfPct > 0 {
		s += fmt.Sprintf(" ±%.1f %%", rw.HalfPct)
	}
	if rw.Unestimated > 0 {
		s += fmt.Sprintf(" (%d of %d counted searches sustained no load: from the others, and may be high)", rw.Unestimated, rw.Unestimated+len(rw.Estimates))
	}
	return s
}

// fmtLoad prints msgs/s with 3-4 significant digits.
func fmtLoad(x float64) string {
	switch {
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.2f", x)
}
