package nats

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/broker"
	"pslab/internal/mqtt"
	"pslab/internal/mqtt/mqtttest"
)

// TestMQTTEveryCombination runs every combination MQTT expresses through
// the load engine on nats-mqtt (the child nats-server with its MQTT
// listener, on loopback): every due delivery arrives once, and the
// broker's held count is read (JetStream consumers, connz).
func TestMQTTEveryCombination(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test (a nats-server child) skipped in -short mode")
	}
	d := MQTTDescriptor()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b, err := d.NewBroker(ctx, "", nil)
	require.NoError(t, err)
	b.(*mqttServer).Server.cfg.StoreDir = t.TempDir()
	ep, err := b.Start(ctx, broker.LoopbackHost{})
	require.NoError(t, err)
	defer b.Stop(context.Background())
	assert.Contains(t, ep.URL, "mqtt://")
	require.NoError(t, mqtt.Check(ctx, ep, mqtt.V311))
	drv, err := d.NewDriver(ctx, ep)
	require.NoError(t, err)
	defer drv.Close()
	mqtttest.EveryCombination(t, drv, "pslab-nm", "nats-mqtt", nil)
}
