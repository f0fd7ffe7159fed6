package capacity

import (
	"fmt"
	"math"
	"time"

	"pslab/internal/scenario"
	"pslab/netem"
)

// Phases are a probe's warm-up, window and drain.
type Phases struct {
	Warmup, Window, Drain time.Duration
}

func (p Phases) String() string {
	return fmt.Sprintf("%s/%s/%s", p.Warmup, p.Window, p.Drain)
}

// Params are a capacity run's rules (pslab capacity's flags; each record
// carries what applied to it). Loads are offered messages per second,
// all publishers of a row together.
type Params struct {
	// Resolution ends a counted search's bisection (0.02: the highest
	// sustained and the lowest failing load within 2 %).
	Resolution float64
	// Pilot: the row's first search (search 0) starts from the prior, the
	// link's bound or DefaultStart, ramps by PilotStep (1: ×2, ×4; 0.25
	// from a prior or the link's bound) and bisects to PilotResolution. It
	// is not in the capacity's CI: it finds where the counted searches
	// start (the middle of its bracket), so that they are independent of
	// one another.
	PilotStep       float64
	PriorStep       float64
	PilotResolution float64
	// Step is the counted searches' first ramp step (0.05).
	Step float64
	// MinSearches (the first stage, n0) and MaxSearches bound the counted
	// searches; Stein's two-stage rule picks how many between them for a
	// CI of ±Target on the capacity (docs/capacity.md).
	MinSearches, MaxSearches int
	Target                   float64
	// MaxProbes bounds each search's probes.
	MaxProbes int
	// Criteria: the tolerance, and the latency bound per network profile
	// (LatencyBound; Bound gives it for a profile).
	Tolerance    float64
	LatencyBound map[string]time.Duration
	// FrameOverhead gives the bytes broker's protocol frame adds to a
	// message body of a case on the wire (the computed link bound counts
	// it; pslab capacity sets it from the broker registry); nil, or 0
	// for a broker: FrameOverhead.
	FrameOverhead func(broker string, f scenario.Factors) int
	// Phases per network profile (PhasesFor gives them).
	Phases map[string]Phases
	// Confirm per network profile (ConfirmOn gives it): how many probes
	// judge each load a counted search's answer rests on
	// (SearchParams.Confirm; odd, 1: one probe decides).
	Confirm map[string]int
	// Loads are the fixed fractions of the capacity the rows then run at
	// for their latency (none: no fixed-load runs), LatencyTarget the
	// relative CI half-width aimed at for mean and p99 latency (or the
	// latency floor, if larger), with LatencyMinReps first-stage and at
	// most LatencyMaxReps repetitions per load.
	Loads                          []float64
	LatencyTarget                  float64
	LatencyMinReps, LatencyMaxReps int
	// DefaultStart is the pilot's start with neither a prior nor a link's
	// bound; MaxLoadFactor caps the loads at this many times a start from
	// a prior or the link's bound, DefaultMaxLoadFactor times a default
	// start (which says nothing about the row).
	DefaultStart                        float64
	MaxLoadFactor, DefaultMaxLoadFactor float64
	// MinWindowSends is the fewest sends a probe's window must hold: the
	// lowest load probed is MinWindowSends / window.
	MinWindowSends float64
	// BusyAttempts: a probe or run on a busy machine is run again, up to
	// this many attempts in a row (busy.go; 1: never again).
	BusyAttempts int
	// Priors are offered loads by row (PriorKey) from earlier records
	// (paper mode: the delivered rate at saturation).
	Priors map[string]float64
}

// DefaultParams are pslab capacity's defaults (docs/capacity.md says why).
func DefaultParams() Params {
	return Params{
		Resolution: 0.02, PilotStep: 1, PriorStep: 0.25, PilotResolution: 0.05, Step: 0.05,
		MinSearches: 3, MaxSearches: 6, Target: 0.05, MaxProbes: 14,
		Tolerance:      DefaultTolerance,
		LatencyBound:   map[string]time.Duration{},
		Phases:         map[string]Phases{},
		Confirm:        map[string]int{},
		Loads:          []float64{0.25, 0.5, 0.8},
		LatencyTarget:  0.05,
		LatencyMinReps: 3, LatencyMaxReps: 10,
		DefaultStart: 1000, MaxLoadFactor: 16, DefaultMaxLoadFactor: 10000, MinWindowSends: 20,
		BusyAttempts: BusyAttempts,
	}
}

// Default latency bounds and phases: an unshaped path (wireline) and an
// emulated link (any shaped profile).
var (
	DefaultBoundUnshaped  = 250 * time.Millisecond
	DefaultBoundShaped    = 5 * time.Second
	DefaultPhasesUnshaped = Phases{Warmup: time.Second, Window: 3 * time.Second, Drain: 2 * time.Second}
	DefaultPhasesShaped   = Phases{Warmup: 5 * time.Second, Window: 30 * time.Second, Drain: 10 * time.Second}
	// Near its capacity a CPU-bound system's 3 s verdict flips from run
	// to run (the NATS pilot failed 26.3 k msg/s in three searches and
	// held it in one; one search's ramp fell through three failures to
	// 18.7 k and ended at 22.6 k): on an unshaped path the counted
	// searches confirm their final loads 2 of 3. An emulated link's
	// verdicts were steady (its pilot row's searches differed by at most
	// one bisection step) and a probe there costs 45 s: one probe decides.
	DefaultConfirmUnshaped = 3
	DefaultConfirmShaped   = 1
)

// ConfirmOn is the counted searches' Confirm on network profile prof.
func (p Params) ConfirmOn(prof netem.Profile) int {
	return perNetwork(p.Confirm, prof, DefaultConfirmShaped, DefaultConfirmUnshaped)
}

// Bound is the latency bound of network profile prof.
func (p Params) Bound(prof netem.Profile) time.Duration {
	return perNetwork(p.LatencyBound, prof, DefaultBoundShaped, DefaultBoundUnshaped)
}

// PhasesFor are the probes' phases on network profile prof.
func (p Params) PhasesFor(prof netem.Profile) Phases {
	return perNetwork(p.Phases, prof, DefaultPhasesShaped, DefaultPhasesUnshaped)
}

// perNetwork is prof's value in m, else the default for a shaped or an
// unshaped profile.
func perNetwork[T any](m map[string]T, prof netem.Profile, shaped, unshaped T) T {
	if v, ok := m[prof.Name]; ok {
		return v
	}
	if prof.Shaped() {
		return shaped
	}
	return unshaped
}

// Criteria on network profile prof.
func (p Params) Criteria(prof netem.Profile) Criteria {
	return Criteria{Tolerance: p.Tolerance, LatencyBound: p.Bound(prof)}
}

// steinTarget is the CI half-width (log scale) the searches' own spread
// may take: the target less half the resolution, which every estimate's
// bracket adds.
func (p Params) steinTarget() float64 {
	return math.Log(1+p.Target) - math.Log(1+p.Resolution)/2
}

// Check says what is wrong with p (bad input), nil when nothing is.
func (p Params) Check() error {
	var bad []string
	pos := func(name string, x float64) {
		if !(x > 0) {
			bad = append(bad, fmt.Sprintf("%s must be positive, got %g", name, x))
		}
	}
	pos("--resolution", p.Resolution)
	pos("--target", p.Target)
	pos("--tolerance", p.Tolerance)
	pos("the pilot's resolution", p.PilotResolution)
	pos("the ramp step", p.Step)
	if p.Resolution > p.PilotResolution {
		bad = append(bad, fmt.Sprintf("--resolution %g %% is coarser than the pilot's", 100*p.Resolution))
	}
	if p.Tolerance >= 0.5 {
		bad = append(bad, fmt.Sprintf("--tolerance %g %% is not a tolerance", 100*p.Tolerance))
	}
	if p.steinTarget() <= 0 {
		bad = append(bad, fmt.Sprintf("--target ±%g %% is within the resolution (%g %%): make it at least the resolution", 100*p.Target, 100*p.Resolution))
	}
	if p.MinSearches < 2 {
		bad = append(bad, fmt.Sprintf("--reps must be at least 2 (a CI needs two searches), got %d", p.MinSearches))
	}
	if p.MaxSearches < p.MinSearches {
		bad = append(bad, fmt.Sprintf("--max-reps %d is below --reps %d", p.MaxSearches, p.MinSearches))
	}
	for _, f := range p.Loads {
		if !(f > 0 && f < 1) {
			bad = append(bad, fmt.Sprintf("--loads: %g %% is not a fraction of the capacity below 100 %%", 100*f))
		}
	}
	if len(p.Loads) > 0 && (p.LatencyMinReps < 2 || p.LatencyMaxReps < p.LatencyMinReps) {
		bad = append(bad, fmt.Sprintf("--latency-reps %d..%d: want at least 2, and a maximum not below it", p.LatencyMinReps, p.LatencyMaxReps))
	}
	for name, ph := range p.Phases {
		if ph.Window <= 0 || ph.Warmup < 0 || ph.Drain < 0 {
			bad = append(bad, fmt.Sprintf("--phases %s=%s: the window must be positive, warm-up and drain not negative", name, ph))
		}
	}
	for name, c := range p.Confirm {
		if c < 1 || c%2 == 0 {
			bad = append(bad, fmt.Sprintf("--confirm %s=%d: want an odd number of probes (1: one probe decides, 3: 2 of 3)", name, c))
		}
	}
	for name, b := range p.LatencyBound {
		if b <= 0 {
			bad = append(bad, fmt.Sprintf("--latency-bound %s=%s: must be positive", name, b))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s", joinLines(bad))
	}
	return nil
}

func joinLines(xs []string) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += "\n"
		}
		s += x
	}
	return s
}
