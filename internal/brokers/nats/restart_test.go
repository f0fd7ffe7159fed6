package nats_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"pslab/internal/brokers/nats"
	"pslab/internal/driver"
	"pslab/internal/driver/drivertest"
	"pslab/internal/scenario"
	"pslab/internal/testbroker"
)

// startRestartableNATS starts the embedded nats-server child on loopback
// (skipped in -short mode) and the driver for it.
func startRestartableNATS(t *testing.T) (*nats.Server, driver.Driver) {
	t.Helper()
	b, ep := testbroker.NATSChild(t)
	return b, testbroker.OpenNATS(t, ep)
}

func TestNATSBrokerRestart(t *testing.T) {
	b, d := startRestartableNATS(t)
	t.Run("JetStreamDurablePersistent", func(t *testing.T) {
		drivertest.RestartCase{D: d, B: b, Factors: drivertest.Factors(scenario.Durable, scenario.Persistent), Lossless: true}.Run(t)
	})
	t.Run("CoreNonDurable", func(t *testing.T) {
		drivertest.RestartCase{D: d, B: b, Factors: drivertest.Factors(scenario.NonDurable, scenario.NonPersistent)}.Run(t)
	})
	t.Run("JetStreamMemoryDurable", func(t *testing.T) { // the stream is lost with the broker
		drivertest.RestartCase{D: d, B: b, Factors: drivertest.Factors(scenario.Durable, scenario.NonPersistent)}.Run(t)
	})
	t.Run("JetStreamEphemeralPersistent", func(t *testing.T) {
		drivertest.RestartCase{D: d, B: b, Factors: drivertest.Factors(scenario.NonDurable, scenario.Persistent)}.Run(t)
	})
	t.Run("CloseDuringOutage", func(t *testing.T) {
		drivertest.CloseDuringOutage(t, d, b, drivertest.Factors(scenario.Durable, scenario.Persistent))
	})
	t.Run("CoreCloseDuringOutage", func(t *testing.T) {
		drivertest.CloseDuringOutage(t, d, b, drivertest.Factors(scenario.NonDurable, scenario.NonPersistent))
	})
}

func TestNATSAbort(t *testing.T) {
	d, _ := testbroker.NATSDriver(t)
	drivertest.AbortKeepsDurable(t, d, drivertest.Factors(scenario.Durable, scenario.Persistent))
}

// TestDurableBacklogIsNotLostNATS: a durable JetStream consumer keeps what
// its subscriber has not taken yet.
func TestDurableBacklogIsNotLostNATS(t *testing.T) {
	d, _ := testbroker.NATSDriver(t)
	res := drivertest.RunOutrun(t, drivertest.SlowDriver{Driver: d, Pause: time.Millisecond}, drivertest.OutrunCase(scenario.Durable), drivertest.TestPrefix())
	assert.Zero(t, res.Counts.Lost, "a durable subscription loses nothing")
	assert.Positive(t, res.Counts.Backlog)
}

// TestCoreSlowConsumerLoses: core NATS holds nothing; with a pending limit
// of 200 messages nats.go drops what a slow subscriber cannot take, and
// those count as lost, not as backlog.
func TestCoreSlowConsumerLoses(t *testing.T) {
	d, _ := testbroker.NATSDriver(t)
	nats.SetCorePendingLimit(d, 200)
	res := drivertest.RunOutrun(t, drivertest.SlowDriver{Driver: d, Pause: time.Millisecond}, drivertest.OutrunCase(scenario.NonDurable), drivertest.TestPrefix())
	n := res.Counts
	assert.Zero(t, n.Backlog, "core NATS holds nothing")
	assert.Positive(t, n.Dropped, "nats.go dropped messages as a slow consumer")
	assert.GreaterOrEqual(t, n.Lost, n.Dropped, "what was dropped is lost")
	assert.LessOrEqual(t, n.InFlight, int64(200), "in flight is at most the client's pending limit")
}
