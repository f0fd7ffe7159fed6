package lab

import (
	"time"

	"pslab/internal/load"
	"pslab/netem"
)

// setUpEstimate is the time to build and verify one lab on a network and
// start one broker in it, before its first case (the smoke suite: about
// 36 s for two brokers on two networks, docs/design.md).
const setUpEstimate = 10 * time.Second

// Estimate is the machine time a plan is expected to take, said before
// anything runs (pslab run --dry-run): per network, the case runs still to
// do (at least; and at most, when rows repeat until a CI target) times the
// time of a run on that network, over the labs that share the network's
// schedule, plus setting up each lab and broker. A run is the case's
// warm-up and window and the set-up between runs, and a drain: none at
// the least (a drain ends as soon as everything has arrived, as on an
// unshaped path it mostly does), the case's drain at the most, and on a
// shaped link the drain's bound (there it runs to its bound when the link
// is the bottleneck: the reproduction's set 1 over wifi-paper spent 75 s
// of a 15 s drain in most many-connection runs).
type Estimate struct {
	Networks            []NetworkEstimate
	RunsLeast, RunsMost int
	Least, Most         time.Duration
}

// NetworkEstimate is one network's share of a plan.
type NetworkEstimate struct {
	Network             string // the profile name
	Shaped              bool
	Labs                int
	Brokers             int
	RunsLeast, RunsMost int
	// PerRun is one case run at the least (mean over the cases), PerRunMost
	// at the most; with several labs they run side by side, so the
	// network's time is runs × PerRun / Labs.
	PerRun, PerRunMost time.Duration
	SetUp              time.Duration
	Least, Most        time.Duration
}

// Estimate computes the plan's expected machine time with o's options (a
// resumed run's finished repetitions count as done).
func (p Plan) Estimate(o Options) Estimate {
	var e Estimate
	o.Parallel = p.Parallel // the plan's: the flag over the file's, as Run takes it
	nets := profileNames(p.Networks)
	labs := p.labsByNetwork(o)
	for i, net := range nets {
		ne := NetworkEstimate{Network: net, Labs: max(1, labs[net]), Brokers: len(p.Brokers)}
		if prof, err := netem.LoadProfile(p.Networks[i]); err == nil {
			ne.Shaped = prof.Shaped()
		}
		ww, drain := p.meanPhases(net, o.Quick, o.Policy)
		ne.PerRun = ww + overheadEstimate
		ne.PerRunMost = ne.PerRun + drain
		if ne.Shaped {
			ne.PerRunMost += load.DefaultMaxDrain
		}
		for _, b := range p.Brokers {
			l, m := newSchedule(p, o, b, net, o.Seed).remaining()
			ne.RunsLeast += l
			ne.RunsMost += m
			if l == 0 && m == 0 {
				continue // nothing left to run: no lab, no broker
			}
			ne.SetUp += time.Duration(ne.Labs) * setUpEstimate // the labs are set up one after the other
			if o.WarmupRun {
				ne.SetUp += ne.PerRun
			}
		}
		k := time.Duration(ne.Labs)
		ne.Least = ne.SetUp + time.Duration(ne.RunsLeast)*ne.PerRun/k
		ne.Most = ne.SetUp + time.Duration(ne.RunsMost)*ne.PerRunMost/k
		e.Networks = append(e.Networks, ne)
		e.RunsLeast += ne.RunsLeast
		e.RunsMost += ne.RunsMost
		e.Least += ne.Least
		e.Most += ne.Most
	}
	return e
}

// FormatDuration prints a duration as 1h02m, 5m07s or 42s (as progress
// lines do).
func FormatDuration(d time.Duration) string { return fmtDur(d) }
