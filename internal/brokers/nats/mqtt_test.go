package nats

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/broker"
	"pslab/internal/load"
	"pslab/internal/mqtt"
	"pslab/internal/scenario"
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
	n := 0
	for _, sub := range scenario.Subscriptions {
		for _, del := range scenario.Deliveries {
			for _, ack := range scenario.AckModes {
				c := scenario.Defaults()
				c.ID, c.Model = "t", scenario.OneToOne
				c.Subscription, c.Delivery, c.Ack = sub, del, ack
				c.Warmup, c.Window, c.Drain = 200*time.Millisecond, 800*time.Millisecond, 5*time.Second
				c.DurableName, c.ClientID = "{prefix}-d{sub}", "{prefix}-c{sub}"
				c.Rate = 1000
				if drv.Supports(c.Factors) != nil {
					continue
				}
				n++
				t.Run(fmt.Sprintf("%s/%s/%s", sub, del, ack), func(t *testing.T) {
					prefix := fmt.Sprintf("pslab-nm%d", n)
					res, err := load.Run(ctx, load.Config{Case: c, Prefix: prefix, Driver: drv, Seed: 1})
					require.NoError(t, err)
					cnt := res.Counts
					assert.Positive(t, cnt.Sent)
					assert.Equal(t, cnt.Expected, cnt.Received, "lost %d", cnt.Lost)
					assert.Zero(t, cnt.Duplicated+cnt.Unexpected+cnt.DecodeErrors+cnt.PublishErrors)
					require.NotNil(t, res.Accounting)
					require.NotNil(t, res.Accounting.Held, res.Accounting.HeldError)
					assert.Contains(t, res.Accounting.Held.Source, "nats-mqtt")
					require.NoError(t, drv.Purge(context.Background(), prefix))
				})
			}
		}
	}
	assert.Equal(t, 10, n)
}
