package mqtt

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/load"
	"pslab/internal/mqtt/mqtttest"
	"pslab/internal/scenario"
)

// quickCase is a short open-loop 1/1/1 case.
func quickCase(sub scenario.Subscription, del scenario.Delivery, ack scenario.AckMode) scenario.Case {
	c := mqtttest.Case(sub, del, ack)
	c.Rate = 2000
	return c
}

// runCase runs c through the load engine on d and purges after.
func runCase(t *testing.T, d *Driver, c scenario.Case, prefix string) *load.Result {
	t.Helper()
	ctx := ctxT(t, time.Minute)
	res, err := load.Run(ctx, load.Config{Case: c, Prefix: prefix, Driver: d, Seed: 1})
	require.NoError(t, err)
	require.NoError(t, d.Purge(context.Background(), prefix))
	return res
}

// TestEveryExpressibleCombinationDeliversExactly runs each subscription
// x delivery x ack combination MQTT can express through the load engine
// on a real MQTT broker: every due delivery arrives once, in order.
func TestEveryExpressibleCombinationDeliversExactly(t *testing.T) {
	b := startInproc(t)
	d := newTestDriver(t, b)
	n := 0
	for _, sub := range scenario.Subscriptions {
		for _, del := range scenario.Deliveries {
			for _, ack := range scenario.AckModes {
				c := quickCase(sub, del, ack)
				if d.Supports(c.Factors) != nil {
					continue
				}
				n++
				t.Run(fmt.Sprintf("%s/%s/%s", sub, del, ack), func(t *testing.T) {
					res := runCase(t, d, c, fmt.Sprintf("pslab-t%d", n))
					cnt := res.Counts
					assert.Positive(t, cnt.Sent)
					assert.Equal(t, cnt.Sent, cnt.Expected)
					assert.Equal(t, cnt.Expected, cnt.Received, "lost %d", cnt.Lost)
					assert.Zero(t, cnt.Duplicated+cnt.Reordered+cnt.Unexpected+cnt.DecodeErrors+cnt.PublishErrors)
					assert.True(t, res.DrainComplete)
				})
			}
		}
	}
	assert.Equal(t, 2*(1+4), n, "each subscription: non-persistent with auto, persistent with every ack mode")
}
