// Package mqtttest holds the test every MQTT broker's driver passes
// against its real broker (Mosquitto, nats-mqtt, artemis-mqtt).
package mqtttest

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/driver"
	"pslab/internal/load"
	"pslab/internal/scenario"
)

// Case is a short open-loop 1/1/1 case of the combination.
func Case(sub scenario.Subscription, del scenario.Delivery, ack scenario.AckMode) scenario.Case {
	c := scenario.Defaults()
	c.ID, c.Model = "t", scenario.OneToOne
	c.Subscription, c.Delivery, c.Ack = sub, del, ack
	c.Warmup, c.Window, c.Drain = 200*time.Millisecond, 800*time.Millisecond, 5*time.Second
	c.DurableName, c.ClientID = "{prefix}-d{sub}", "{prefix}-c{sub}"
	c.Rate = 1000
	return c
}

// EveryCombination runs each subscription x delivery x ack combination d
// expresses through the load engine (each(c) may check the broker after
// a case): every due delivery arrives once, the broker's held count is
// read (its source naming heldSource), and the ten combinations MQTT
// expresses all ran.
func EveryCombination(t *testing.T, d driver.Driver, prefix, heldSource string, each func(t *testing.T, c scenario.Case)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// Each run's names are its own: a durable session or queue an
	// earlier run left in a broker's store (a persistent Artemis instance
	// is reused between runs) must not deliver into this one.
	run := strconv.FormatInt(time.Now().UnixNano()%(1<<24), 36)
	n := 0
	for _, sub := range scenario.Subscriptions {
		for _, del := range scenario.Deliveries {
			for _, ack := range scenario.AckModes {
				c := Case(sub, del, ack)
				if d.Supports(c.Factors) != nil {
					continue
				}
				n++
				t.Run(fmt.Sprintf("%s/%s/%s", sub, del, ack), func(t *testing.T) {
					p := fmt.Sprintf("%s%s-%d", prefix, run, n)
					res, err := load.Run(ctx, load.Config{Case: c, Prefix: p, Driver: d, Seed: 1})
					require.NoError(t, err)
					cnt := res.Counts
					assert.Positive(t, cnt.Sent)
					assert.Equal(t, cnt.Expected, cnt.Received, "lost %d", cnt.Lost)
					reordered := cnt.Reordered
					if unordered(d) != "" { // the broker's, measured: counted, said, not failed on
						t.Logf("%d of %d reordered: %s", cnt.Reordered, cnt.Received, unordered(d))
						reordered = 0
					}
					assert.Zero(t, cnt.Duplicated+reordered+cnt.Unexpected+cnt.DecodeErrors+cnt.PublishErrors,
						"duplicated %d, reordered %d, unexpected %d, decode errors %d, publish errors %d",
						cnt.Duplicated, cnt.Reordered, cnt.Unexpected, cnt.DecodeErrors, cnt.PublishErrors)
					require.NotNil(t, res.Accounting)
					require.NotNil(t, res.Accounting.Held, res.Accounting.HeldError)
					assert.Contains(t, res.Accounting.Held.Source, heldSource)
					require.NotNil(t, res.Promises, "the MQTT driver says what it promised")
					if each != nil {
						each(t, c)
					}
					require.NoError(t, d.Purge(context.Background(), p))
				})
			}
		}
	}
	assert.Equal(t, 10, n, "each subscription: non-persistent with auto, persistent with every ack mode")
}

// unordered is the broker's measured reordering (mqtt.Profile.Unordered),
// "" where it keeps publish order.
func unordered(d driver.Driver) string {
	if m, ok := d.(interface{ Unordered() string }); ok {
		return m.Unordered()
	}
	return ""
}
