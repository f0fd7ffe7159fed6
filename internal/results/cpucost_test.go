package results

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/record"
)

// TestCPUCostPerDeliveredMessage: each side's CPU over the window divided
// by the messages delivered in it; records that cannot say are refused
// with the reason.
func TestCPUCostPerDeliveredMessage(t *testing.T) {
	r := &Record{CaseID: "1", Rep: 2,
		Result:    &record.Result{SubTput: 50000},
		Resources: &Resources{ClientCPUPct: 75, BrokerCPUPct: 40, OtherCPUPct: 3}}
	c, err := CPUCostOf(r)
	require.NoError(t, err)
	// 0.75 core-s/s over 50 000 msg/s = 15 µs a message; broker 8 µs.
	assert.InDelta(t, 15.0, c.ClientUsMsg, 1e-9)
	assert.InDelta(t, 8.0, c.BrokerUsMsg, 1e-9)
	assert.Equal(t, 3.0, c.OtherCPU)

	r.Result.SubTput = 0
	_, err = CPUCostOf(r)
	assert.ErrorContains(t, err, "case 1 rep 2: nothing delivered")
	r.Resources.ClientCPUPct = 0
	_, err = CPUCostOf(r)
	assert.ErrorContains(t, err, "no CPU samples")
	r.Error = "boom"
	_, err = CPUCostOf(r)
	assert.ErrorContains(t, err, "failed")
}
