package results

import "fmt"

// BrokerSetBusy is the capacity rule when broker and clients run on their
// own CPU sets: the broker used at least this share of its set (the papers'
// server near 100 % of its CPU; 0.80 as BrokerMinCores is of one core).
// The clients' limit is ClientMaxShare of their set (the paper's 60 %).
const BrokerSetBusy = 0.80

// Isolated reports whether rs comes from a run whose clients were
// confined to their own CPU set (see ClientCPUs).
func (rs *Resources) Isolated() bool { return rs != nil && rs.ClientCPUs != "" }

// setSaturation is SaturationOf for a run on disjoint CPU sets: each side
// is judged within its own set. A busy broker set is the capacity result
// (broker-bound); a busy client set means the number is pslab's, not the
// broker's (client-bound), whatever the broker did.
func setSaturation(rs *Resources) Saturation {
	c := rs.ClientSetPct / 100
	s := Saturation{ClientBound: c >= ClientMaxShare}
	switch {
	case s.ClientBound:
		s.Why = fmt.Sprintf("client-bound: the clients used %.0f%% of their CPUs %s (limit %.0f%%)", rs.ClientSetPct, rs.ClientCPUs, ClientMaxShare*100)
	case rs.BrokerCPUs == "":
		s.Why = "the broker's process is not known to pslab: its CPU use is not measured"
	case rs.BrokerSetPct/100 < BrokerSetBusy:
		s.Why = fmt.Sprintf("broker used %.0f%% of its CPUs %s < %.0f%%: something other than the broker's CPU bounded the run", rs.BrokerSetPct, rs.BrokerCPUs, BrokerSetBusy*100)
	default:
		s.Saturated = true
		s.Why = fmt.Sprintf("broker-bound: the broker used %.0f%% of its CPUs %s, the clients %.0f%% of theirs (%s)", rs.BrokerSetPct, rs.BrokerCPUs, rs.ClientSetPct, rs.ClientCPUs)
	}
	return s
}
