package driver_test

import (
	"context"
	"testing"

	"pslab/internal/broker"
	"pslab/internal/driver"
	"pslab/internal/scenario"
)

func TestArtemisBrokerRestart(t *testing.T) {
	a := startArtemis(t)
	ctx := context.Background()
	ep, err := a.Start(ctx, broker.LoopbackHost{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Stop(context.Background()) })
	d, err := driver.NewSTOMP(ep)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	f := func(sub scenario.Subscription, del scenario.Delivery) scenario.Factors {
		return scenario.Factors{Publishers: 1, Subscribers: 1, Topics: 1, Model: scenario.OneToOne,
			Subscription: sub, Delivery: del, Ack: scenario.AckAuto, Body: scenario.BodyBytes, Size: 100}
	}
	t.Run("DurablePersistent", func(t *testing.T) {
		restartCase{d: d, b: a, factors: f(scenario.Durable, scenario.Persistent), lossless: true}.run(t)
	})
	t.Run("NonDurableNonPersistent", func(t *testing.T) {
		restartCase{d: d, b: a, factors: f(scenario.NonDurable, scenario.NonPersistent)}.run(t)
	})
	t.Run("CloseDuringOutage", func(t *testing.T) {
		closeDuringOutage(t, d, a, f(scenario.Durable, scenario.Persistent))
	})
}
