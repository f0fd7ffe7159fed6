package lab

import (
	"time"

	"pslab/internal/results"
	"pslab/internal/scenario"
	"pslab/netem"
)

// RowPolicy decides what each row (case × broker × network) runs next in
// a mode other than the paper's repetitions (pslab capacity: a capacity
// search, then runs at fixed fractions of the capacity; internal/capacity).
// It must be a pure function of the row and its finished records so far:
// a resumed run replays them and goes on where it stopped. The lab keeps
// everything else as for repetitions: networks, brokers, parallel labs,
// the order of rows in rounds, progress, records and resuming.
type RowPolicy interface {
	// Next is the row's next run given its finished records in the order
	// they ran; done when the row needs no more.
	Next(row PolicyRow, finished []results.Record) (run PolicyRun, done bool)
	// Left is how many more runs the row needs, at least and at most
	// (for the progress line's ETA).
	Left(row PolicyRow, finished []results.Record) (least, most int)
}

// PhasedPolicy is a RowPolicy whose runs have phases of their own on each
// network instead of the cases' (pslab capacity's probes): the estimates
// of a plan's time (a dry run, the ETA before a network's first run) take
// them.
type PhasedPolicy interface {
	RowPolicy
	RunPhases(prof netem.Profile) (warmup, window, drain time.Duration)
}

// PolicyPhases are the phases pol gives its runs on network net (a
// profile name or file), when it is a PhasedPolicy and the profile loads.
func PolicyPhases(pol RowPolicy, net string) (warmup, window, drain time.Duration, ok bool) {
	pp, isPhased := pol.(PhasedPolicy)
	if !isPhased {
		return 0, 0, 0, false
	}
	prof, err := netem.LoadProfile(net)
	if err != nil {
		return 0, 0, 0, false
	}
	warmup, window, drain = pp.RunPhases(prof)
	return warmup, window, drain, true
}

// PolicyRow is what a policy knows of a row.
type PolicyRow struct {
	Suite, Broker, Network string
	// Case is the row's case on its network (per_network applied).
	Case scenario.Case
	// Link is the network's profile and Verify its verification (nil on
	// an unshaped path or before it was verified).
	Link   netem.Profile
	Verify *netem.Verification
	// Floor is the machine's latency floor measured at the run's start.
	Floor *results.LatencyFloor
}

// PolicyRun is one run a policy asks for: the case as it is to run (its
// rate and phases set), and Judge, which fills the mode's part of the
// record (mode, verdict) before it is written.
type PolicyRun struct {
	Case  scenario.Case
	Judge func(*results.Record)
}

// maxFailedRuns ends a row under a policy whose runs failed (an error
// in the record) this many times in one run: a broken row must not hold
// the run.
const maxFailedRuns = 3

// rowPolicy is a schedule's RowPolicy with what it knows of the network.
type rowPolicy struct {
	p                      RowPolicy
	suite, broker, network string
	link                   netem.Profile
	verify                 *netem.Verification
	floor                  *results.LatencyFloor
}

// newRowPolicy is the policy of broker b's rows on network net of suite
// (the profile name records carry; arg the --network value it came from,
// a profile file's path or the name), nil when the run has none
// (repetitions).
func newRowPolicy(o Options, suite, b, net, arg string) *rowPolicy {
	if o.Policy == nil {
		return nil
	}
	rp := &rowPolicy{p: o.Policy, suite: suite, broker: b, network: net, floor: o.floor}
	if prof, err := netem.LoadProfile(arg); err == nil {
		rp.link = prof
	}
	return rp
}

// onNetwork tells the policy the network the rows run on (its profile
// and verification).
func (s *schedule) onNetwork(nw *network) {
	if s.pol != nil {
		s.pol.link, s.pol.verify = nw.profile, nw.verify
	}
}

func (rp *rowPolicy) row(r *row) PolicyRow {
	return PolicyRow{Suite: rp.suite, Broker: rp.broker, Network: rp.network, Case: r.c,
		Link: rp.link, Verify: rp.verify, Floor: rp.floor}
}

// enough: the policy is done with the row, or its runs keep failing.
func (rp *rowPolicy) enough(r *row) bool {
	if r.failed >= maxFailedRuns {
		return true
	}
	_, done := rp.p.Next(rp.row(r), r.recs)
	return done
}

// remaining sums the policy's estimates over the rows not done.
func (rp *rowPolicy) remaining(rows []*row) (least, most int) {
	for _, r := range rows {
		if rp.enough(r) {
			continue
		}
		l, m := rp.p.Left(rp.row(r), r.recs)
		least += max(l, 1)
		most += max(m, l, 1)
	}
	return least, most
}

// runFor is what row r runs next: its case and the judge of its record
// (nil: a repetition of the paper's mode).
func (s *schedule) runFor(r *row) (scenario.Case, func(*results.Record)) {
	if s.pol == nil {
		return r.c, nil
	}
	run, done := s.pol.p.Next(s.pol.row(r), r.recs)
	if done { // not reached: next() hands out rows that are not done
		return r.c, nil
	}
	return run.Case, run.Judge
}

// policyRuns is the policy's estimate of the runs of broker b's rows on a
// network not started yet (progress.plannedRuns).
func (pr *progress) policyRuns(b string) (least, most int) {
	for _, c := range pr.plan.Cases {
		if c.ForBroker(b) {
			l, m := pr.policy.Left(PolicyRow{Suite: pr.plan.Suite.Name, Broker: b, Case: c}, nil)
			least, most = least+max(l, 1), most+max(m, l, 1)
		}
	}
	return least, most
}
