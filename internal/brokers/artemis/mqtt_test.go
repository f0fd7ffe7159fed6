package artemis

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"pslab/internal/broker"
	"pslab/internal/mqtt"
	"pslab/internal/mqtt/mqtttest"
)

// TestMQTTEveryCombination runs every combination MQTT expresses through
// the load engine on artemis-mqtt (an instance of its own, on loopback):
// every due delivery arrives once, and the held count is read from the
// queues on the case's topics.
func TestMQTTEveryCombination(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test (Artemis) skipped in -short mode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cfg := ArtemisConfig{Instance: "test-mqtt", HeapMB: 256}
	for _, p := range []*int{&cfg.Port, &cfg.CorePort} {
		port, err := broker.FreePort()
		require.NoError(t, err)
		*p = port
	}
	a := NewArtemis(cfg)
	if !a.Installed() {
		if missing := a.NotAtHand(); missing != "" {
			t.Skipf("Artemis is not installed (%s): run `go run ./cmd/pslab broker install artemis`", missing)
		}
		require.NoError(t, a.Install(ctx, nil))
	}
	b := &mqttArtemis{Artemis: a}
	ep, err := b.Start(ctx, broker.LoopbackHost{})
	require.NoError(t, err)
	defer b.Stop(context.Background())
	require.NoError(t, mqtt.Check(ctx, ep, mqtt.V311))
	drv, err := MQTTDescriptor().NewDriver(ctx, ep)
	require.NoError(t, err)
	defer drv.Close()
	mqtttest.EveryCombination(t, drv, "pslab-am", "Artemis queues", nil)
}
