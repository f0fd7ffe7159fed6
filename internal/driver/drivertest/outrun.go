package drivertest

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

// The delivery accounting against a real broker (load.Run with its
// driver): a subscriber slower than its publisher leaves a backlog that a
// durable subscription keeps at the broker (lost 0, backlog reported), and
// that a broker that holds nothing drops (lost).

// SlowDriver makes every subscriber's handler take pause per message, so
// the publisher outruns it; the broker's answers (driver.HeldReporter)
// pass through.
type SlowDriver struct {
	driver.Driver
	Pause time.Duration
}

func (d SlowDriver) Subscriber(ctx context.Context, s driver.SubSpec, h driver.Handler) (driver.Subscriber, error) {
	return d.Driver.Subscriber(ctx, s, func(m driver.Delivery) {
		h(m)
		time.Sleep(d.Pause)
	})
}

func (d SlowDriver) Held(ctx context.Context, c driver.CaseSpec) (driver.Held, error) {
	return d.Driver.(driver.HeldReporter).Held(ctx, c)
}

// OutrunCase publishes 4000 msg/s at a subscriber that takes 1 ms per
// message, for a 0.5 s warm-up and a 1 s window; the drain gets at most
// 0.6 s, far less than the backlog needs.
func OutrunCase(sub scenario.Subscription) scenario.Case {
	c := scenario.Defaults()
	c.ID = "held"
	c.Model = scenario.OneToOne
	c.Subscription = sub
	c.Rate = 4000
	c.Warmup, c.Window, c.Drain = 500*time.Millisecond, time.Second, 100*time.Millisecond
	c.DurableName, c.ClientID = "{prefix}-d{sub}", "{prefix}-c{sub}"
	return c
}

// RunOutrun runs c on d under prefix and checks that every due delivery
// is accounted for once and that the publisher outran the subscriber.
func RunOutrun(t *testing.T, d driver.Driver, c scenario.Case, prefix string) *load.Result {
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
