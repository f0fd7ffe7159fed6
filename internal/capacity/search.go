// Package capacity finds the highest offered load each case row (case ×
// broker × network) sustains, and runs the rows at fixed fractions of it
// for their latency (pslab capacity, docs/capacity.md). Every probe is a
// case run open loop at a chosen load, judged sustained or not from its
// record (verdict.go); a search ramps, then bisects to a stated
// resolution (this file); the row's searches and fixed-load runs are
// decided by a policy that is a pure function of the row's records so
// far (policy.go), so a resumed run replays them and goes on. What bound
// each row (the broker's CPU, the clients', the emulated link) is said
// from the probes at its top (bound.go).
package capacity

import "math"

// Outcomes of a search.
const (
	// Bracketed: a sustained load and a failing one within the resolution.
	Bracketed = "bracketed"
	// BelowMin: even the lowest load allowed failed: the capacity is below it.
	BelowMin = "below-min"
	// AboveMax: the highest load allowed was sustained: the capacity is at
	// least that (a lower bound).
	AboveMax = "above-max"
	// MaxProbes: the search ran out of probes before the resolution.
	MaxProbes = "max-probes"
)

// Phases of a probe within its search.
const (
	PhaseRamp   = "ramp"
	PhaseBisect = "bisect"
	// PhaseConfirm: the probe judges again a load the search's answer
	// rests on (SearchParams.Confirm).
	PhaseConfirm = "confirm"
)

// SearchParams are one search's rules. Loads are offered messages per
// second, all publishers together.
type SearchParams struct {
	// Start is the first probe's load.
	Start float64
	// Step is the ramp's first step (0.05: ×1.05 up or ÷1.05 down); each
	// further ramp step in the same direction doubles it on a log scale
	// (×1.05, ×1.1025, ×1.2155, ...), at most ×4 a step.
	Step float64
	// Resolution ends the bisection: hi/lo ≤ 1 + Resolution.
	Resolution float64
	// Min and Max bound the loads probed.
	Min, Max float64
	// MaxProbes bounds the probes of one search.
	MaxProbes int
	// Confirm (odd; 0 or 1: one probe decides) is how many probes judge
	// a load the search's answer rests on: a load's verdict is the
	// majority of its probes in the search, and the search ends only when
	// the final bracket's two loads (the highest sustained, the lowest
	// failing; the one load at Min or Max) each have a majority of
	// Confirm (2 of 3: probed again, and a third time when the two
	// disagree), and a ramp steps down only from a failure so confirmed.
	Confirm int
}

// majority is the probes of one verdict that decide a load.
func (p SearchParams) majority() int { return max(p.Confirm, 1)/2 + 1 }

// Step is one probe of a search: its load and its verdict.
type Step struct {
	Load      float64
	Sustained bool
}

// State is where a search stands after its steps.
type State struct {
	// Done: no more probes. Outcome says why (Bracketed, BelowMin,
	// AboveMax, MaxProbes).
	Done    bool
	Outcome string
	// Next is the next probe's load and Phase its phase (when not Done).
	Next  float64
	Phase string
	// Lo is the highest sustained load (0: none), Hi the lowest failing
	// one (0: none); LoStep and HiStep their indexes in the steps (-1:
	// none): the last probe at that load whose verdict was the load's.
	Lo, Hi         float64
	LoStep, HiStep int
}

// Estimate is the search's estimate of the threshold between sustained
// and failing loads: the geometric middle of its final bracket (error
// within ±Resolution/2 on a log scale), Lo when nothing failed (a lower
// bound), and 0 when nothing was sustained.
func (s State) Estimate() float64 {
	switch {
	case s.Lo > 0 && s.Hi > 0:
		return math.Sqrt(s.Lo * s.Hi)
	case s.Lo > 0:
		return s.Lo
	}
	return 0
}

// maxRampFactor caps one ramp step.
const maxRampFactor = 4.0

// rampFactor is the factor of the k-th consecutive ramp step (k ≥ 1).
func (p SearchParams) rampFactor(k int) float64 {
	e := math.Pow(2, float64(min(k-1, 30)))
	return math.Min(math.Pow(1+p.Step, e), maxRampFactor)
}

// tally is one load of a search with its probes' verdicts.
type tally struct {
	load              float64
	sustained, failed int  // probes that held, that failed
	lastHeld          bool // the verdict of its latest probe
	heldAt, failedAt  int  // indexes of its latest sustained, failing probe
}

// held is the load's verdict: the majority of its probes (a tie: the
// latest probe's).
func (l *tally) held() bool {
	if l.sustained != l.failed {
		return l.sustained > l.failed
	}
	return l.lastHeld
}

// step is the index of the load's last probe whose verdict was the load's.
func (l *tally) step() int {
	if l.held() {
		return l.heldAt
	}
	return l.failedAt
}

// at is the tally of load x.
func at(loads []*tally, x float64) *tally {
	for _, l := range loads {
		if l.load == x {
			return l
		}
	}
	return nil
}

// loadsOf groups steps by load, in the order the loads were first probed.
func loadsOf(steps []Step) []*tally {
	var out []*tally
	byLoad := map[float64]*tally{}
	for i, s := range steps {
		l := byLoad[s.Load]
		if l == nil {
			l = &tally{load: s.Load}
			byLoad[s.Load] = l
			out = append(out, l)
		}
		if s.Sustained {
			l.sustained, l.heldAt = l.sustained+1, i
		} else {
			l.failed, l.failedAt = l.failed+1, i
		}
		l.lastHeld = s.Sustained
	}
	return out
}

// Replay is the state of a search after steps (in the order they ran):
// the search is a pure function of its verdicts, so a resumed run goes on
// where it stopped.
//
// A load's verdict is the majority of its probes (with Confirm ≤ 1 each
// load is probed once). Hi is the lowest failing load, Lo the highest
// sustained one below it.
// Ramp: from Start, up by rampFactor while no load failed, down while
// none below the failures held, until the verdict flips (or Min/Max is
// hit). Bisect: the geometric middle of Lo and Hi, until they are within
// the resolution. A bisection probe lies inside the bracket, so the
// bracket only narrows, unless a confirmation overturns one of its ends
// (then it moves to the next load of the other verdict, or the ramp goes
// on from there). Confirm: before the search ends, and before a ramp
// steps down, the loads it rests on are probed again until a majority of
// Confirm probes agrees.
func Replay(p SearchParams, steps []Step) State {
	st := State{LoStep: -1, HiStep: -1}
	if len(steps) == 0 {
		st.Next, st.Phase = clamp(p.Start, p.Min, p.Max), PhaseRamp
		return st
	}
	loads := loadsOf(steps)
	var lo, hi *tally
	for _, l := range loads {
		if !l.held() && (hi == nil || l.load < hi.load) {
			hi = l
		}
	}
	for _, l := range loads {
		if l.held() && (hi == nil || l.load < hi.load) && (lo == nil || l.load > lo.load) {
			lo = l
		}
	}
	if lo != nil {
		st.Lo, st.LoStep = lo.load, lo.step()
	}
	if hi != nil {
		st.Hi, st.HiStep = hi.load, hi.step()
	}
	need := p.majority()
	sure := func(l *tally) bool { return max(l.sustained, l.failed) >= need }
	outOfProbes := p.MaxProbes > 0 && len(steps) >= p.MaxProbes
	done := func(outcome string) State {
		st.Done, st.Outcome = true, outcome
		return st
	}
	next := func(x float64, phase string) State {
		if outOfProbes {
			return done(MaxProbes)
		}
		st.Next, st.Phase = x, phase
		return st
	}
	// confirm probes the first of ls not yet decided by a majority; ok
	// when every one is.
	confirm := func(ls ...*tally) (State, bool) {
		for _, l := range ls {
			if !sure(l) {
				return next(l.load, PhaseConfirm), false
			}
		}
		return st, true
	}
	// ramp is the number of distinct loads of the ramp so far: those with
	// its verdict beyond its edge, the start or, when a confirmation
	// overturned a verdict, the overturned load (any load with a vote
	// of the other verdict on the ramp's side), so that a ramp resumed
	// from an overturned end starts again with its first step.
	ramp := func(up bool) int {
		edge := p.Start
		for _, l := range loads {
			if up && l.failed > 0 && l.load <= lo.load {
				edge = math.Max(edge, l.load)
			}
			if !up && l.sustained > 0 && l.load >= hi.load {
				edge = math.Min(edge, l.load)
			}
		}
		n := 0
		for _, l := range loads {
			if l.held() == up && (up && l.load >= edge || !up && l.load <= edge) {
				n++
			}
		}
		return max(n, 1)
	}
	if l := at(loads, steps[len(steps)-1].Load); p.Confirm > 1 && l.sustained == l.failed {
		return next(l.load, PhaseConfirm) // a tie: probed again at once
	}
	switch {
	case lo != nil && hi != nil:
		if hi.load/lo.load <= 1+p.Resolution*(1+1e-9) {
			if s, ok := confirm(hi, lo); !ok {
				return s
			}
			return done(Bracketed)
		}
		return next(math.Sqrt(lo.load*hi.load), PhaseBisect)
	case hi == nil: // nothing failed: up
		if p.Max > 0 && lo.load >= p.Max*(1-1e-9) {
			if s, ok := confirm(lo); !ok {
				return s
			}
			return done(AboveMax)
		}
		x := lo.load * p.rampFactor(ramp(true))
		if p.Max > 0 {
			x = math.Min(x, p.Max)
		}
		return next(x, PhaseRamp)
	default: // nothing below the lowest failure held: down
		if s, ok := confirm(hi); !ok {
			return s
		}
		if hi.load <= p.Min*(1+1e-9) {
			return done(BelowMin)
		}
		return next(math.Max(hi.load/p.rampFactor(ramp(false)), p.Min), PhaseRamp)
	}
}

func clamp(x, lo, hi float64) float64 {
	if hi > 0 && x > hi {
		x = hi
	}
	return math.Max(x, lo)
}
