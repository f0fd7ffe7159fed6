package lab

import (
	"pslab/internal/results"
)

// cpuSetFlags are the CPU flags of a run whose clients had their own CPU
// set: the paper's 60 % rule applies to the clients' set. A busy broker set
// is not a flag: it is the capacity result (Throughput.Saturation says
// "broker-bound").
func cpuSetFlags(rs *results.Resources) []results.Flag {
	if rs.ClientSetPct >= clientHigh*100 {
		return []results.Flag{results.NewFlag(results.FlagClientBound, "the clients used %.0f%% of their CPUs %s (the paper kept client hosts under 60%%): the number is pslab's, not the broker's",
			rs.ClientSetPct, rs.ClientCPUs)}
	}
	return nil
}
