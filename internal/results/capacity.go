package results

import (
	"fmt"

	"pslab/internal/scenario"
)

// FilterInfo is the filter factor of a record as the service-time models
// need it (Henjes et al.), and how the broker expressed it.
type FilterInfo struct {
	// Kind: none, selector (Gaddah & Kunz's 20-of-100 range), property,
	// header or subject.
	Kind string `json:"kind"`
	// Form: simple, or, and (filter cases).
	Form string `json:"form,omitempty"`
	scenario.FilterCounts
	// Mechanism says how the broker expressed the filters.
	Mechanism string `json:"mechanism,omitempty"`
}

// FilterInfoOf describes the filters of factors f; mechanism is the
// broker's wording (driver.FilterMechanism), if any.
func FilterInfoOf(f scenario.Factors, mechanism string) *FilterInfo {
	fi := &FilterInfo{Kind: string(scenario.FilterNone), FilterCounts: f.Counts(), Mechanism: mechanism}
	switch {
	case f.Selector:
		fi.Kind = "selector"
	case f.Filtered():
		fi.Kind, fi.Form = string(f.Filter), string(f.FilterForm)
	}
	return fi
}

// Throughput is the broker's side of a case run, in the papers' terms:
// received (messages published into the broker), dispatched (deliveries
// out of it), overall = received + dispatched, and the measured
// replication grade dispatched / received.
type Throughput struct {
	ReceivedPerS   float64 `json:"received_per_s"`
	DispatchedPerS float64 `json:"dispatched_per_s"`
	OverallPerS    float64 `json:"overall_per_s"`
	Replication    float64 `json:"replication"`
	// Mbit/s of message bodies (pslab stamp included, protocol headers
	// not): size x 8 x throughput.
	ReceivedMbitS float64 `json:"received_mbit_s"`
	OverallMbitS  float64 `json:"overall_mbit_s"`
	// Saturation is the verdict on whether the broker was the bottleneck.
	Saturation Saturation `json:"saturation"`
}

// ThroughputOf computes the throughput block of a measured record; nil
// without a result.
func ThroughputOf(r *Record) *Throughput {
	if r.Result == nil {
		return nil
	}
	res := r.Result
	t := &Throughput{ReceivedPerS: res.PubTput, DispatchedPerS: res.SubTput, OverallPerS: res.PubTput + res.SubTput}
	if res.PubTput > 0 {
		t.Replication = res.SubTput / res.PubTput
	}
	mbit := float64(r.Factors.Size) * 8 / 1e6
	t.ReceivedMbitS, t.OverallMbitS = t.ReceivedPerS*mbit, t.OverallPerS*mbit
	t.Saturation = SaturationOf(r.Resources)
	return t
}

// Thresholds of the capacity rule. The papers kept the server near 100 %
// of its single CPU and every client host under 75 %. Here broker and
// clients share one machine, so the rule is about the machine and the
// broker's share of it.
const (
	// MachineBusy: client + broker used at least this share of all cores
	// (no idle CPU left: more load cannot raise the throughput).
	MachineBusy = 0.90
	// BrokerMinCores: the broker used at least this many cores (0.8 of
	// one: on 2 cores it had most of "its" core, the papers' single server
	// CPU, while the clients had the other).
	BrokerMinCores = 0.80
	// ClientMaxShare: the client process stayed under this share of all
	// cores (0.60, the limit behind the client-bound flag).
	ClientMaxShare = 0.60
)

// Saturation is whether a run measured the broker's capacity.
type Saturation struct {
	// Saturated: the broker was the bottleneck by the capacity rule.
	Saturated bool `json:"saturated"`
	// ClientBound: the client process was (also) a bottleneck.
	ClientBound bool `json:"client_bound,omitempty"`
	// Why says which part of the rule failed, or that it held.
	Why string `json:"why"`
}

// SaturationOf applies the capacity rule to a run's CPU samples: the
// machine had no idle CPU (client + broker >= MachineBusy of all cores),
// the broker used at least BrokerMinCores cores, and the client stayed
// under ClientMaxShare of all cores.
func SaturationOf(rs *Resources) Saturation {
	if rs.Isolated() {
		return setSaturation(rs)
	}
	if rs == nil || rs.Cores <= 0 || rs.BrokerCPUPct <= 0 {
		return Saturation{Why: "no broker CPU samples"}
	}
	cores := float64(rs.Cores)
	b, c := rs.BrokerCPUPct/100, rs.ClientCPUPct/100
	s := Saturation{ClientBound: c >= ClientMaxShare*cores}
	switch {
	case s.ClientBound:
		s.Why = fmt.Sprintf("client-bound: the client used %.2f of %d cores (limit %.2f)", c, rs.Cores, ClientMaxShare*cores)
	case b+c < MachineBusy*cores:
		s.Why = fmt.Sprintf("machine not busy: client %.2f + broker %.2f cores < %.2f of %d: something other than CPU bounded the run", c, b, MachineBusy*cores, rs.Cores)
	case b < BrokerMinCores:
		s.Why = fmt.Sprintf("broker used %.2f cores < %.2f", b, BrokerMinCores)
	default:
		s.Saturated = true
		s.Why = fmt.Sprintf("broker %.2f cores, client %.2f, of %d", b, c, rs.Cores)
	}
	return s
}
