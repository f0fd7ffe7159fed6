package capacity

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"pslab/internal/lab"
	"pslab/internal/results"
	"pslab/netem"
)

// Policy is the lab's RowPolicy of pslab capacity: per row, the pilot
// search, the counted searches (as many as Stein's rule asks for), then
// the fixed-load runs of each level (their first stage interleaved, then
// what each level's rule asks for), each decided from the row's records
// so far (Params.Analyze).
type Policy struct{ P Params }

// RunPhases implements lab.PhasedPolicy: every probe and fixed-load run
// on prof has the probe phases (--phases), not the case's.
func (pol Policy) RunPhases(prof netem.Profile) (warmup, window, drain time.Duration) {
	ph := pol.P.PhasesFor(prof)
	return ph.Warmup, ph.Window, ph.Drain
}

// Describe is what a capacity run does per row, for the plan's line
// ("in capacity mode: ..."; a dry run prints it instead of repetitions).
func (pol Policy) Describe() string {
	p := pol.P
	return fmt.Sprintf("in capacity mode: searches to ±%g %% resolution, %d-%d counted per row for ±%g %%, loads %s",
		100*p.Resolution, p.MinSearches, p.MaxSearches, 100*p.Target, loadsText(p.Loads))
}

// loadsText is the fixed loads as percents of the capacity, or none.
func loadsText(loads []float64) string {
	if len(loads) == 0 {
		return "none"
	}
	var s []string
	for _, f := range loads {
		s = append(s, strconv.FormatFloat(100*f, 'g', -1, 64)+" %")
	}
	return strings.Join(s, ", ")
}

// PhaseFixed marks the verdict of a fixed-load record (results.Probe.Phase).
const PhaseFixed = "fixed-load"

// Next implements lab.RowPolicy.
func (pol Policy) Next(row lab.PolicyRow, recs []results.Record) (lab.PolicyRun, bool) {
	p := pol.P
	rw := p.Analyze(row, recs)
	if !rw.Pilot.State.Done {
		return p.probeRun(row, rw, rw.Pilot), false
	}
	if !rw.SearchesDone {
		return p.probeRun(row, rw, rw.Searches[len(rw.Searches)-1]), false
	}
	if i, stage := nextLevel(p, rw.Fixed); i >= 0 {
		return p.fixedRun(row, rw, rw.Fixed[i], stage), false
	}
	return lab.PolicyRun{}, true
}

// Left implements lab.RowPolicy: the pilot's remaining probes (1 to its
// bound), each remaining counted search at 2 (a start within the
// resolution) to 6 probes, and with confirmation (Params.ConfirmOn) one
// (at least) to Confirm-1 (at most) more for each end of its bracket, and
// each level's remaining runs.
func (pol Policy) Left(row lab.PolicyRow, recs []results.Record) (least, most int) {
	p := pol.P
	rw := p.Analyze(row, recs)
	if !rw.Pilot.State.Done {
		least++
		most += max(p.MaxProbes-len(rw.Pilot.Probes), 1) + rw.Pilot.Busy
	}
	if !rw.SearchesDone {
		done := 0
		for _, s := range rw.Searches {
			if s.State.Done {
				done++
			}
		}
		extra := p.ConfirmOn(row.Link) - 1
		least += (2 + min(extra, 2)) * max(rw.wantSearches(p)-done, 0)
		most += (6 + 2*extra) * max(p.MaxSearches-done, 0)
		least += len(p.Loads) * p.LatencyMinReps
		most += len(p.Loads) * p.LatencyMaxReps
		return least, most
	}
	for _, lv := range rw.Fixed {
		least += max(p.LatencyMinReps, lv.Need) - min(len(lv.Runs), max(p.LatencyMinReps, lv.Need))
		most += max(p.LatencyMaxReps-len(lv.Runs), 0)
	}
	return least, most
}

// nextLevel picks the level to run next, and its stage: first every
// level's first stage, round by round (the level with the fewest runs,
// the first in order on a tie), then the runs each level's rule asks
// for, the same way; -1 when every level has its runs.
func nextLevel(p Params, levels []Level) (int, int) {
	pick := func(short func(Level) bool) int {
		best := -1
		for i, lv := range levels {
			if short(lv) && (best < 0 || len(lv.Runs) < len(levels[best].Runs)) {
				best = i
			}
		}
		return best
	}
	if i := pick(func(lv Level) bool { return len(lv.Runs) < p.LatencyMinReps }); i >= 0 {
		return i, 1
	}
	if i := pick(func(lv Level) bool { return len(lv.Runs) < lv.Need }); i >= 0 {
		return i, 2
	}
	return -1, 0
}

// probeRun is search s's next probe of row.
func (p Params) probeRun(row lab.PolicyRow, rw Row, s Search) lab.PolicyRun {
	crit := p.Criteria(row.Link)
	from := FromPilot
	if s.Index == 0 {
		from = rw.StartFrom
	}
	step, phase, start := len(s.All)+1, s.State.Phase, s.Params.Start
	return lab.PolicyRun{Case: p.caseAt(row, s.State.Next), Judge: func(rec *results.Record) {
		rec.Mode = results.ModeCapacityProbe
		pr := Judge(rec, crit)
		pr.Search, pr.Step, pr.Phase, pr.Start, pr.StartFrom = s.Index, step, phase, start, from
		if s.Params.Confirm > 1 {
			pr.Confirm = s.Params.Confirm
		}
		rec.Probe = &pr
	}}
}

// fixedRun is one run of row at level lv.
func (p Params) fixedRun(row lab.PolicyRow, rw Row, lv Level, stage int) lab.PolicyRun {
	crit := p.Criteria(row.Link)
	fl := results.FixedLoad{Fraction: lv.Fraction, CapacityPerS: round4(rw.Capacity), Stage: stage,
		TargetMeanMs: round4(lv.TargetMeanMs), TargetP99Ms: round4(lv.TargetP99Ms)}
	return lab.PolicyRun{Case: p.caseAt(row, lv.Load), Judge: func(rec *results.Record) {
		rec.Mode = results.ModeFixedLoad
		pr := Judge(rec, crit)
		pr.Phase = PhaseFixed
		rec.Probe, rec.FixedLoad = &pr, &fl
	}}
}
