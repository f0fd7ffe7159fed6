package driver_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/driver"
	"pslab/internal/load"
	"pslab/internal/scenario"
)

// Integration tests of the delivery accounting (load.Run with the real
// drivers): a subscriber slower than its publisher leaves a backlog that a
// durable subscription keeps at the broker (lost 0, backlog reported), and
// that core NATS drops (lost).

// slowDriver makes every subscriber's handler take pause per message, so
// the publisher outruns it; the broker's answers (driver.HeldReporter)
// pass through.
type slowDriver struct {
	driver.Driver
	pause time.Duration
}

func (d slowDriver) Subscriber(ctx context.Context, s driver.SubSpec, h driver.Handler) (driver.Subscriber, error) {
	return d.Driver.Subscriber(ctx, s, func(m driver.Delivery) {
		h(m)
		time.Sleep(d.pause)
	})
}

func (d slowDriver) Held(ctx context.Context, c driver.CaseSpec) (driver.Held, error) {
	return d.Driver.(driver.HeldReporter).Held(ctx, c)
}

// outrunCase publishes 4000 msg/s at a subscriber that takes 1 ms per
// message, for a 0.5 s warm-up and a 1 s window; the drain gets at most
// 0.6 s, far less than the backlog needs.
func outrunCase(sub scenario.Subscription) scenario.Case {
	c := scenario.Defaults()
	c.ID = "held"
	c.Model = scenario.OneToOne
	c.Subscription = sub
	c.Rate = 4000
	c.Warmup, c.Window, c.Drain = 500*time.Millisecond, time.Second, 100*time.Millisecond
	c.DurableName, c.ClientID = "{prefix}-d{sub}", "{prefix}-c{sub}"
	return c
}

func runOutrun(t *testing.T, d driver.Driver, c scenario.Case, prefix string) *load.Result {
	t.Helper()
	res, err := load.Run(context.Background(), load.Config{Case: c, Prefix: prefix, Driver: d, Seed: 11,
		MaxDrain: 500 * time.Millisecond})
	require.NoError(t, err)
	require.NoError(t, d.Purge(context.Background(), prefix))
	n, a := res.Counts, res.Accounting
	require.NotNil(t, a)
	t.Logf("expected %d received %d backlog %d in flight %d lost %d dropped %d; drain %s after %.2f s; held %+v %s",
		n.Expected, n.Received, n.Backlog, n.InFlight, n.Lost, n.Dropped, a.Drain.Ended, a.Drain.S, a.Held, a.HeldError)
	assert.Equal(t, n.Expected, n.Received+n.Backlog+n.InFlight+n.Lost, "every due delivery is accounted for once")
	assert.Greater(t, n.Expected, 2*n.Received, "the publisher outran the subscriber")
	assert.False(t, res.DrainComplete)
	require.NotNil(t, a.Held, a.HeldError)
	return res
}

// TestDurableBacklogIsNotLostNATS: a durable JetStream consumer keeps what
// its subscriber has not taken yet.
func TestDurableBacklogIsNotLostNATS(t *testing.T) {
	_, d := startRestartableNATS(t)
	res := runOutrun(t, slowDriver{d, time.Millisecond}, outrunCase(scenario.Durable), testPrefix())
	assert.Zero(t, res.Counts.Lost, "a durable subscription loses nothing")
	assert.Positive(t, res.Counts.Backlog)
}

// TestDurableBacklogIsNotLostArtemis: the same on a durable Artemis
// subscription queue.
func TestDurableBacklogIsNotLostArtemis(t *testing.T) {
	_, _, d := runArtemis(t)
	res := runOutrun(t, slowDriver{d, time.Millisecond}, outrunCase(scenario.Durable), testPrefix())
	assert.Zero(t, res.Counts.Lost, "a durable subscription loses nothing")
	assert.Positive(t, res.Counts.Backlog)
	a := res.Accounting
	require.NotNil(t, a.Held.Routed, "Artemis counts what it put on the case's queues")
	if a.Drain.FlushCut {
		assert.LessOrEqual(t, *a.Held.Routed, res.Counts.Expected)
	} else {
		assert.Equal(t, res.Counts.Expected, *a.Held.Routed, "every confirmed send was routed to the subscription's queue")
	}
}

// TestCoreSlowConsumerLoses: core NATS holds nothing; with a pending limit
// of 200 messages nats.go drops what a slow subscriber cannot take, and
// those count as lost, not as backlog.
func TestCoreSlowConsumerLoses(t *testing.T) {
	_, d := startRestartableNATS(t)
	driver.SetNATSCorePendingLimit(d, 200)
	res := runOutrun(t, slowDriver{d, time.Millisecond}, outrunCase(scenario.NonDurable), testPrefix())
	n := res.Counts
	assert.Zero(t, n.Backlog, "core NATS holds nothing")
	assert.Positive(t, n.Dropped, "nats.go dropped messages as a slow consumer")
	assert.GreaterOrEqual(t, n.Lost, n.Dropped, "what was dropped is lost")
	assert.LessOrEqual(t, n.InFlight, int64(200), "in flight is at most the client's pending limit")
}
