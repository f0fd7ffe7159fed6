package capacity

import (
	"pslab/internal/results"
	"pslab/netem"
)

// BusyAttempts is Params.BusyAttempts by default: a probe or fixed-load run measured while processes
// outside the run used the machine (flag machine-busy: another lab, a
// build, anything using 10 % of the machine or more) says nothing about
// the broker, so it is run again at the same load, up to this many
// attempts in a row; the last one counts whatever the machine did, and
// keeps its flag. On a shared 2-core machine another program's burst
// moved verdicts both ways (the capacity pilots' first attempt, with
// 110-150 % of the machine used by others, put core NATS 1/1/1 at a
// third of its quiet capacity).
const BusyAttempts = 3

// busy reports whether r was measured on a busy machine.
func busy(r *results.Record) bool {
	_, ok := results.Flagged(r.Flags, results.FlagMachineBusy)
	return ok
}

// counted drops the records of a sequence (one search's probes, one
// level's runs, in the order they ran) that were run again because the
// machine was busy: a busy record counts only as the attempts-th in a
// row. It returns the records that count and how many were dropped.
func counted(recs []*results.Record, attempts int) ([]*results.Record, int) {
	var out []*results.Record
	run, dropped := 0, 0
	for _, r := range recs {
		if busy(r) && run+1 < attempts {
			run++
			dropped++
			continue
		}
		run = 0
		out = append(out, r)
	}
	return out, dropped
}

// busyAttemptsOn is BusyAttempts on an unshaped path, 1 on an emulated
// link: there the link bounds the load, not the CPU, and the brokers of
// parallel labs count as other processes (the reproduction's Artemis
// labs flagged 10 of 482 records machine-busy).
func (p Params) busyAttemptsOn(prof netem.Profile) int {
	if prof.Shaped() {
		return 1
	}
	return max(p.BusyAttempts, 1)
}

// confirmed drops, from one search's probes in the order they ran, a
// marginal failure (results.Probe.Marginal) that was the first attempt at
// its load: the search probes that load again, and the next attempt's
// verdict counts. A pause of the broker can fail a load well below the
// capacity by a little (an Artemis pilot search failed 14.8 k msg/s for a
// backlog of 1.2 % of what was due, its broker at 57 % CPU, and ended
// there, half the capacity the row's other searches found).
func confirmed(probes []*results.Record) ([]*results.Record, int) {
	var out []*results.Record
	dropped := 0
	for i, r := range probes {
		retry := i > 0 && probes[i-1].Probe.OfferedPerS == r.Probe.OfferedPerS
		if r.Probe.Marginal && !retry {
			dropped++
			continue
		}
		out = append(out, r)
	}
	return out, dropped
}
