package artemis_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/driver/drivertest"
	"pslab/internal/scenario"
)

func TestArtemisBrokerRestart(t *testing.T) {
	a, _, d := runArtemis(t)
	t.Run("DurablePersistent", func(t *testing.T) {
		drivertest.RestartCase{D: d, B: a, Factors: drivertest.Factors(scenario.Durable, scenario.Persistent), Lossless: true}.Run(t)
	})
	t.Run("NonDurableNonPersistent", func(t *testing.T) {
		drivertest.RestartCase{D: d, B: a, Factors: drivertest.Factors(scenario.NonDurable, scenario.NonPersistent)}.Run(t)
	})
	t.Run("CloseDuringOutage", func(t *testing.T) {
		drivertest.CloseDuringOutage(t, d, a, drivertest.Factors(scenario.Durable, scenario.Persistent))
	})
}

func TestArtemisAbort(t *testing.T) {
	_, _, d := runArtemis(t)
	drivertest.AbortKeepsDurable(t, d, drivertest.Factors(scenario.Durable, scenario.Persistent))
}

// TestDurableBacklogIsNotLostArtemis: a durable Artemis subscription queue
// keeps what its subscriber has not taken yet.
func TestDurableBacklogIsNotLostArtemis(t *testing.T) {
	_, _, d := runArtemis(t)
	res := drivertest.RunOutrun(t, drivertest.SlowDriver{Driver: d, Pause: time.Millisecond}, drivertest.OutrunCase(scenario.Durable), drivertest.TestPrefix())
	assert.Zero(t, res.Counts.Lost, "a durable subscription loses nothing")
	assert.Positive(t, res.Counts.Backlog)
	a := res.Accounting
	require.NotNil(t, a.Held.Routed, "Artemis counts what it put on the case's queues")
	if a.Drain.FlushCut {
		assert.LessOrEqual(t, *a.Held.Routed, res.Counts.Expected)
	} else {
		assert.Equal(t, res.Counts.Expected, *a.Held.Routed, "every confirmed send was routed to the subscription's queue")
	}
}
