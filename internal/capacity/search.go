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
}

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
	// none).
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

// Replay is the state of a search after steps (in the order they ran):
// the search is a pure function of its verdicts, so a resumed run goes on
// where it stopped.
//
// Ramp: from Start, up by rampFactor while every probe is sustained, down
// while every probe fails, until the verdict flips (or Min/Max is hit).
// Bisect: the geometric middle of the highest sustained and the lowest
// failing load, until they are within the resolution. A bisection probe
// lies inside the bracket, so the bracket only narrows.
func Replay(p SearchParams, steps []Step) State {
	st := State{LoStep: -1, HiStep: -1}
	for i, s := range steps {
		if s.Sustained && s.Load > st.Lo && (st.Hi == 0 || s.Load < st.Hi) {
			st.Lo, st.LoStep = s.Load, i
		}
		if !s.Sustained && (st.Hi == 0 || s.Load < st.Hi) && s.Load > st.Lo {
			st.Hi, st.HiStep = s.Load, i
		}
	}
	done := func(outcome string) State {
		st.Done, st.Outcome = true, outcome
		return st
	}
	if len(steps) == 0 {
		st.Next, st.Phase = clamp(p.Start, p.Min, p.Max), PhaseRamp
		return st
	}
	switch {
	case st.Lo > 0 && st.Hi > 0:
		if st.Hi/st.Lo <= 1+p.Resolution*(1+1e-9) {
			return done(Bracketed)
		}
		if p.MaxProbes > 0 && len(steps) >= p.MaxProbes {
			return done(MaxProbes)
		}
		st.Next, st.Phase = math.Sqrt(st.Lo*st.Hi), PhaseBisect
		return st
	case p.MaxProbes > 0 && len(steps) >= p.MaxProbes:
		return done(MaxProbes)
	}
	// Still ramping: every step so far had the same verdict.
	last := steps[len(steps)-1]
	k := len(steps)
	if last.Sustained {
		if p.Max > 0 && last.Load >= p.Max*(1-1e-9) {
			return done(AboveMax)
		}
		st.Next = last.Load * p.rampFactor(k)
		if p.Max > 0 {
			st.Next = math.Min(st.Next, p.Max)
		}
	} else {
		if last.Load <= p.Min*(1+1e-9) {
			return done(BelowMin)
		}
		st.Next = math.Max(last.Load/p.rampFactor(k), p.Min)
	}
	st.Phase = PhaseRamp
	return st
}

func clamp(x, lo, hi float64) float64 {
	if hi > 0 && x > hi {
		x = hi
	}
	return math.Max(x, lo)
}
