package load

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/brokers/nats"
	"pslab/internal/scenario"
	"pslab/internal/testbroker"
)

// startNATS starts an in-process nats-server with pslab's settings and
// opens the driver on it (hermetic: no child process, no root).
func startNATS(t *testing.T) *nats.Driver {
	t.Helper()
	d, _ := testbroker.NATSDriver(t)
	return d
}

func quickCase(sub scenario.Subscription, del scenario.Delivery) scenario.Case {
	c := scenario.Defaults()
	c.ID = "t"
	c.Model = scenario.OneToOne
	c.Subscription, c.Delivery = sub, del
	c.Warmup, c.Window, c.Drain = 200*time.Millisecond, 800*time.Millisecond, 5*time.Second
	c.DurableName, c.ClientID = "{prefix}-d{sub}", "{prefix}-c{sub}"
	return c
}

// TestEndToEndOnEmbeddedNATS runs the four subscription x delivery
// combinations for real and checks the accounting invariants.
func TestEndToEndOnEmbeddedNATS(t *testing.T) {
	d := startNATS(t)
	for _, sub := range scenario.Subscriptions {
		for _, del := range scenario.Deliveries {
			t.Run(string(sub)+"/"+string(del), func(t *testing.T) {
				c := quickCase(sub, del)
				// Open loop below what any mechanism sustains, also beside a
				// CPU hog: this test checks the accounting, not saturation
				// (a saturating publisher into a JetStream stream may leave
				// its consumer nothing in a short window, as it did once on
				// a loaded machine: sub 0 msg/s, everything in the drain).
				c.Rate = 2000
				prefix := "pslab-test-" + string(sub[:3]) + string(del[:3])
				res, err := Run(context.Background(), Config{Case: c, Prefix: prefix, Driver: d, Seed: 7})
				require.NoError(t, err)
				require.NoError(t, d.Purge(context.Background(), prefix))
				n := res.Counts
				t.Logf("%s/%s: sent %d received %d lost %d dup %d, sub %.0f msg/s, latency mean %.3f ms p99 %.3f ms",
					sub, del, n.Sent, n.Received, n.Lost, n.Duplicated, res.SubTput, res.Latency.MeanMs, res.Latency.P99Ms)
				assert.Positive(t, n.Sent)
				assert.Equal(t, n.Sent, n.Expected, "1/1/1: one delivery due per message")
				assert.Equal(t, n.Expected, n.Received+n.Backlog+n.InFlight+n.Lost, "due = received + backlog + in flight + lost")
				assert.Zero(t, n.DecodeErrors)
				assert.Zero(t, n.Unexpected)
				assert.Zero(t, n.PublishErrors, res.FirstError)
				assert.Positive(t, n.ReceivedInWindow)
				assert.Positive(t, res.Latency.MeanMs)
				assert.Positive(t, res.SubTput)
				assert.LessOrEqual(t, n.ReceivedInWindow+n.Late, n.Received)
				if sub == scenario.NonDurable && del == scenario.NonPersistent {
					assert.Zero(t, n.Duplicated, "core NATS on loopback must not duplicate")
				}
				if del == scenario.Persistent {
					// Publishes wait for PubAcks: the stream has every
					// message and the consumer gets all of them.
					assert.Zero(t, n.Lost, "persistent delivery on loopback loses nothing")
					assert.True(t, res.DrainComplete)
				}
			})
		}
	}
}

// TestSelectorDeliversOnlyTheSelectedRange checks exact expected counts
// with a selector: each subscriber gets the messages whose value is in its
// 20-value range, and nothing else.
func TestSelectorDeliversOnlyTheSelectedRange(t *testing.T) {
	d := startNATS(t)
	c := quickCase(scenario.NonDurable, scenario.Persistent)
	c.Publishers, c.Subscribers, c.Topics = 2, 6, 2
	c.Model = scenario.FewToMany
	c.Selector = true
	res, err := Run(context.Background(), Config{Case: c, Prefix: "pslab-test-sel", Driver: d, Seed: 3})
	require.NoError(t, err)
	n := res.Counts
	// Each subscriber selects 20 % of its topic's messages: expected is about
	// 3 subscribers x 20 % of each topic's messages = 0.6 x sent.
	ratio := float64(n.Expected) / float64(n.Sent)
	assert.InDelta(t, 0.6, ratio, 0.15, "expected deliveries / sent")
	assert.Zero(t, n.Unexpected, "no delivery outside a subscriber's range")
	assert.Zero(t, n.Lost)
	assert.Equal(t, n.Expected, n.Received)
}

// TestDurableAckModesDeliverEverything runs the lazy ack modes.
func TestDurableAckModesDeliverEverything(t *testing.T) {
	d := startNATS(t)
	for _, ack := range []scenario.AckMode{scenario.AckDupsOK, scenario.AckClient} {
		c := quickCase(scenario.Durable, scenario.Persistent)
		c.Ack = ack
		c.Body, c.Size = scenario.BodyObject, 2048
		res, err := Run(context.Background(), Config{Case: c, Prefix: "pslab-test-ack-" + string(ack), Driver: d, Seed: 1})
		require.NoError(t, err)
		assert.Zero(t, res.Counts.Lost, ack)
		assert.Zero(t, res.Counts.DecodeErrors, ack)
		assert.Positive(t, res.Counts.Received, ack)
	}
}
