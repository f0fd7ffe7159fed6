package capacity

import (
	"fmt"
	"strings"

	"pslab/internal/lab"
	"pslab/internal/results"
)

// Bounds (Bound.Name): what bound a row's capacity.
const (
	// BoundBroker: the broker. Basis "cpu": its CPU set was saturated
	// (at least BrokerBusyPct) at the loads that failed, which is the
	// capacity; basis "elimination": neither its CPU nor the clients' nor
	// the link was saturated there, so something else in the broker (a
	// disk sync, a lock, flow control it applies) held the load back.
	BoundBroker = "broker"
	// BoundClient: the load clients' CPU set reached ClientBusyPct (the
	// paper's 60 %) at the top loads: the capacity is a lower bound.
	BoundClient = "client"
	// BoundLink: the emulated link carried at least LinkBusyPct of its
	// rate at the loads that failed.
	BoundLink = "link"
	// BoundNone: no load failed up to the highest allowed (a lower bound).
	BoundNone = "none"
)

// Thresholds of the bound rule (%).
const (
	ClientBusyPct = 100 * results.ClientMaxShare // 60
	BrokerBusyPct = 100 * results.BrokerSetBusy  // 80
	LinkBusyPct   = 85.0
)

// Bound is what bound a row, and why.
type Bound struct {
	Name  string `json:"name"`
	Basis string `json:"basis,omitempty"` // cpu, elimination (broker)
	Why   string `json:"why"`
}

func (b Bound) String() string {
	if b.Basis != "" && b.Name == BoundBroker {
		return b.Name + " (" + b.Basis + ")"
	}
	return b.Name
}

// boundOf says what bound a row, from the probes at its top: in each
// counted search (the pilot when there is none) the highest sustained
// probe and the lowest failing one. The clients come first: if they
// reached 60 % at either, the number is theirs as much as the broker's
// (a lower bound). Then the link, then the broker's CPU, judged at the
// failing probes (by majority); else the broker by elimination.
func (p Params) boundOf(row lab.PolicyRow, rw Row) Bound {
	searches := rw.Searches
	if len(searches) == 0 {
		searches = []Search{rw.Pilot}
	}
	var tops, fails []*results.Record
	for _, s := range searches {
		if s.State.LoStep >= 0 {
			tops = append(tops, s.Probes[s.State.LoStep])
		}
		if s.State.HiStep >= 0 {
			tops = append(tops, s.Probes[s.State.HiStep])
			fails = append(fails, s.Probes[s.State.HiStep])
		}
	}
	for _, r := range tops {
		if r.Probe.ClientSetPct >= ClientBusyPct {
			return Bound{Name: BoundClient, Why: fmt.Sprintf("the clients used %.0f %% of their CPUs at %s msg/s (limit %.0f %%): the capacity is a lower bound",
				r.Probe.ClientSetPct, fmtLoad(r.Probe.OfferedPerS), ClientBusyPct)}
		}
	}
	if len(fails) == 0 {
		return Bound{Name: BoundNone, Why: fmt.Sprintf("no load failed up to %s msg/s: the capacity is a lower bound", fmtLoad(rw.Max))}
	}
	at := func(f func(*results.Probe) float64) string {
		var xs []string
		for _, r := range fails {
			xs = append(xs, fmt.Sprintf("%.0f", f(r.Probe)))
		}
		return strings.Join(xs, ", ")
	}
	count := func(pass func(*results.Probe) bool) int {
		n := 0
		for _, r := range fails {
			if pass(r.Probe) {
				n++
			}
		}
		return n
	}
	half := len(fails)/2 + 1
	if row.Link.Shaped() && count(func(pr *results.Probe) bool { return pr.LinkUsePct >= LinkBusyPct }) >= half {
		return Bound{Name: BoundLink, Why: fmt.Sprintf("the link carried %s %% of its rate at the failing loads (at least %.0f %%)", at(func(pr *results.Probe) float64 { return pr.LinkUsePct }), LinkBusyPct)}
	}
	if count(func(pr *results.Probe) bool { return pr.BrokerSetPct >= BrokerBusyPct }) >= half {
		return Bound{Name: BoundBroker, Basis: "cpu", Why: fmt.Sprintf("the broker used %s %% of its CPUs at the failing loads (at least %.0f %%)", at(func(pr *results.Probe) float64 { return pr.BrokerSetPct }), BrokerBusyPct)}
	}
	why := fmt.Sprintf("at the failing loads the broker used %s %% of its CPUs, the clients %s %%", at(func(pr *results.Probe) float64 { return pr.BrokerSetPct }), at(func(pr *results.Probe) float64 { return pr.ClientSetPct }))
	if row.Link.Shaped() {
		why += fmt.Sprintf(", the link %s %% of its rate", at(func(pr *results.Probe) float64 { return pr.LinkUsePct }))
	}
	return Bound{Name: BoundBroker, Basis: "elimination", Why: why + ": none saturated, so the broker held the load back otherwise (disk syncs, locks, its flow control)"}
}
