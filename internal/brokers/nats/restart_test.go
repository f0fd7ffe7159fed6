package driver_test

import (
	"context"
	"testing"
	"time"

	"pslab/internal/broker"
	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// startRestartableNATS starts the embedded nats-server child on loopback
// and the driver for it.
func startRestartableNATS(t *testing.T) (*broker.NATS, driver.Driver) {
	t.Helper()
	b, ep := startNATSChild(t)
	return b, newNATSDriver(t, ep)
}

// startNATSChild starts the embedded nats-server child on loopback (skipped
// in -short mode), stopped when the test ends.
func startNATSChild(t *testing.T) (*broker.NATS, driver.Endpoint) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test (a nats-server child) skipped in -short mode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := broker.NewNATS(broker.NATSConfig{StoreDir: t.TempDir()})
	ep, err := b.Start(ctx, broker.LoopbackHost{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop(context.Background()) })
	return b, ep
}

// newNATSDriver opens the NATS driver for ep, closed when the test ends.
func newNATSDriver(t *testing.T, ep driver.Endpoint) *driver.NATS {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := driver.NewNATS(ctx, ep)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func natsFactors(sub scenario.Subscription, del scenario.Delivery) scenario.Factors {
	return scenario.Factors{Publishers: 1, Subscribers: 1, Topics: 1, Model: scenario.OneToOne,
		Subscription: sub, Delivery: del, Ack: scenario.AckAuto, Body: scenario.BodyBytes, Size: 100}
}

func TestNATSBrokerRestart(t *testing.T) {
	b, d := startRestartableNATS(t)
	t.Run("JetStreamDurablePersistent", func(t *testing.T) {
		restartCase{d: d, b: b, factors: natsFactors(scenario.Durable, scenario.Persistent), lossless: true}.run(t)
	})
	t.Run("CoreNonDurable", func(t *testing.T) {
		restartCase{d: d, b: b, factors: natsFactors(scenario.NonDurable, scenario.NonPersistent)}.run(t)
	})
	t.Run("JetStreamMemoryDurable", func(t *testing.T) { // the stream is lost with the broker
		restartCase{d: d, b: b, factors: natsFactors(scenario.Durable, scenario.NonPersistent)}.run(t)
	})
	t.Run("JetStreamEphemeralPersistent", func(t *testing.T) {
		restartCase{d: d, b: b, factors: natsFactors(scenario.NonDurable, scenario.Persistent)}.run(t)
	})
	t.Run("CloseDuringOutage", func(t *testing.T) {
		closeDuringOutage(t, d, b, natsFactors(scenario.Durable, scenario.Persistent))
	})
	t.Run("CoreCloseDuringOutage", func(t *testing.T) {
		closeDuringOutage(t, d, b, natsFactors(scenario.NonDurable, scenario.NonPersistent))
	})
}
