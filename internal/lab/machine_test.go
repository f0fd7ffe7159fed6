package lab

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"pslab/internal/results"
	"pslab/netem"
)

// TestMachineBusyFlag: CPU used outside the run (machine minus client and
// broker) is recorded, and flagged when it takes a significant share of
// the machine (before: two labs at once halved a result unflagged, since
// cpu-saturated counts only the run's own processes).
func TestMachineBusyFlag(t *testing.T) {
	rs := withOtherLoad(&results.Resources{Cores: 2, ClientCPUPct: 40, BrokerCPUPct: 50, MachineCPUPct: 180})
	assert.InDelta(t, 90, rs.OtherCPUPct, 1e-9)
	f, busy := machineBusyFlag(rs)
	assert.True(t, busy)
	assert.Contains(t, f.String(), "machine-busy: processes outside the run used 90% of 200%")
	rs = withOtherLoad(&results.Resources{Cores: 2, ClientCPUPct: 40, BrokerCPUPct: 50, MachineCPUPct: 95})
	assert.InDelta(t, 5, rs.OtherCPUPct, 1e-9)
	_, busy = machineBusyFlag(rs)
	assert.False(t, busy)
	rs = withOtherLoad(&results.Resources{Cores: 2, ClientCPUPct: 60, BrokerCPUPct: 50, MachineCPUPct: 100})
	assert.Zero(t, rs.OtherCPUPct, "sampling noise never makes a negative load")
	rec := record(40, 50, true, 0)
	rec.Resources.MachineCPUPct, rec.Resources.OtherCPUPct = 180, 90
	assert.Contains(t, flagNames(flagsFor(rec)), "machine-busy")
}

// TestExternalBrokerIsNotFlaggedNotRoot: a run against --url over the host
// network says so, and does not claim that root was missing (before:
// "loopback: ... (not root)" for a root run).
func TestExternalBrokerIsNotFlaggedNotRoot(t *testing.T) {
	nw := &network{profile: netem.Profile{Name: "wireline"}, external: true}
	rec := record(10, 10, true, 0)
	rec.Network = nw.record()
	names := flagNames(flagsFor(rec))
	assert.Contains(t, names, "host-network")
	assert.NotContains(t, names, "loopback")
}
