package lab

import (
	"pslab/internal/results"
)

// withOtherLoad sets the CPU used outside the run over the window: the
// machine's busy CPU minus the client's and the broker's.
func withOtherLoad(rs *results.Resources) *results.Resources {
	rs.OtherCPUPct = max(0, rs.MachineCPUPct-rs.ClientCPUPct-rs.BrokerCPUPct)
	return rs
}

// otherBusy is the share of the machine that load outside the run may take
// before its records are flagged: beyond it, the run competed for the
// cores with something else (two runs at once halved Artemis' throughput).
const otherBusy = 0.10

// machineBusyFlag flags a record whose window shared the machine with
// significant CPU load from outside the run.
func machineBusyFlag(rs *results.Resources) (results.Flag, bool) {
	if rs == nil || rs.Cores == 0 {
		return results.Flag{}, false
	}
	capacity := float64(rs.Cores) * 100
	if rs.OtherCPUPct < otherBusy*capacity {
		return results.Flag{}, false
	}
	return results.NewFlag(results.FlagMachineBusy, "processes outside the run used %.0f%% of %.0f%% CPU (%d cores) in the window (machine %.0f%%, client %.0f%%, broker %.0f%%): another lab or program competed for the cores",
		rs.OtherCPUPct, capacity, rs.Cores, rs.MachineCPUPct, rs.ClientCPUPct, rs.BrokerCPUPct), true
}

// PathHostNetwork is the record's network path for an external broker
// (--url) reached over the host network: no router, by choice, as root or
// not (the "loopback" path says the lab could not be built without root).
const PathHostNetwork = "host-network"
