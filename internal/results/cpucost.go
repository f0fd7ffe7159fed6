package results

import "fmt"

// CPUCost is what one delivered message cost in CPU over a record's
// window: each side's mean CPU (Resources, 100 % = one core-second per
// second) over the subscribers' throughput in the same window
// (Result.SubTput). The load client both publishes and subscribes, so its
// cost is per message sent and received once.
type CPUCost struct {
	SubTput     float64 // delivered messages per second in the window
	ClientCPU   float64 // the load client's mean CPU, % of one core
	BrokerCPU   float64 // the broker's mean CPU, % of one core (0: unknown)
	OtherCPU    float64 // the machine's CPU outside the run, % of one core
	ClientUsMsg float64 // client CPU microseconds per delivered message
	BrokerUsMsg float64 // broker CPU microseconds per delivered message (0: unknown)
}

// CPUCostOf is r's CPU per delivered message; an error says why a record
// has none (failed, no CPU samples, nothing delivered in the window).
func CPUCostOf(r *Record) (CPUCost, error) {
	switch {
	case r.Error != "" || r.Result == nil:
		return CPUCost{}, fmt.Errorf("case %s rep %d: failed, no measurement", r.CaseID, r.Rep)
	case r.Resources == nil || r.Resources.ClientCPUPct <= 0:
		return CPUCost{}, fmt.Errorf("case %s rep %d: no CPU samples of the load client", r.CaseID, r.Rep)
	case r.Result.SubTput <= 0:
		return CPUCost{}, fmt.Errorf("case %s rep %d: nothing delivered in the window", r.CaseID, r.Rep)
	}
	rs, tput := r.Resources, r.Result.SubTput
	perMsg := func(pct float64) float64 { return pct / 100 / tput * 1e6 }
	return CPUCost{
		SubTput: tput, ClientCPU: rs.ClientCPUPct, BrokerCPU: rs.BrokerCPUPct, OtherCPU: rs.OtherCPUPct,
		ClientUsMsg: perMsg(rs.ClientCPUPct), BrokerUsMsg: perMsg(rs.BrokerCPUPct),
	}, nil
}
