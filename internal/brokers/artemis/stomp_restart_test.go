package driver_test

import (
	"testing"

	"pslab/internal/scenario"
)

func TestArtemisBrokerRestart(t *testing.T) {
	a, _, d := runArtemis(t)
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
