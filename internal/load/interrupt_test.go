package load

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// stuckDriver connects nobody: every connection set-up hangs until its
// context ends (a broker that accepts nothing more, as nats-server past
// MaxConn on a lossy link). It counts the set-ups started.
type stuckDriver struct {
	driver.Driver // nil: only the methods below are called
	started       atomic.Int64
	cancelAt      int64
	cancel        context.CancelFunc
}

func (d *stuckDriver) Supports(scenario.Factors) error                { return nil }
func (d *stuckDriver) Prepare(context.Context, driver.CaseSpec) error { return nil }
func (d *stuckDriver) Subscriber(ctx context.Context, _ driver.SubSpec, _ driver.Handler) (driver.Subscriber, error) {
	if d.started.Add(1) == d.cancelAt {
		d.cancel()
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestConnectStopsLaunchingWhenCancelled: once the run is cancelled,
// connect() starts no more set-ups (before, it launched one for every
// remaining client, which with 1,000,000 clients took minutes).
func TestConnectStopsLaunchingWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := &stuckDriver{cancelAt: 10, cancel: cancel}
	c := scenario.Defaults()
	c.ID = "stuck"
	c.Subscribers, c.Publishers, c.Topics = 20000, 1, 1
	_, err := Run(ctx, Config{Case: c, Prefix: "pslab-t", Driver: d, ConnectParallel: 64})
	require.ErrorIs(t, err, context.Canceled)
	assert.LessOrEqual(t, d.started.Load(), int64(64+1), "set-ups started after the cancellation")
}

// TestInterruptedWindowIsMarked: a run cancelled inside its window returns
// what was measured, marked interrupted with the share of the window
// measured, so it is never taken for a result of the case (before, an
// interrupted case was saved as a valid result).
func TestInterruptedWindowIsMarked(t *testing.T) {
	d := startNATS(t)
	c := quickCase(scenario.NonDurable, scenario.NonPersistent)
	c.Rate = 200
	c.Warmup, c.Window, c.Drain = 100*time.Millisecond, time.Hour, time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var windowSeen atomic.Bool
	cfg := Config{Case: c, Prefix: "pslab-int", Driver: d, Progress: func(p Progress) {
		if p.Phase == "window" && windowSeen.CompareAndSwap(false, true) {
			cancel()
		}
	}}
	res, err := Run(ctx, cfg)
	require.NoError(t, err)
	require.NotNil(t, res.Interrupted, "an interrupted run must say so")
	assert.Equal(t, "window", res.Interrupted.Phase)
	assert.Greater(t, res.Interrupted.WindowMeasuredS, 0.0)
	assert.Less(t, res.Interrupted.WindowMeasuredS, time.Hour.Seconds())
	assert.True(t, res.Aborted, "an interrupted run drops its connections")
}

// blackHole is a broker that takes every message and delivers none: a
// case on it drains until its bound.
type blackHole struct {
	driver.Driver // nil: only the methods below are called
}

type sink struct{}

func (sink) Publish(ctx context.Context, _ driver.Message) error {
	time.Sleep(time.Millisecond)
	return ctx.Err()
}
func (sink) Flush(context.Context) error { return nil }
func (sink) Close() error                { return nil }
func (sink) Unsubscribe() error          { return nil }

func (blackHole) Supports(scenario.Factors) error                { return nil }
func (blackHole) Prepare(context.Context, driver.CaseSpec) error { return nil }
func (blackHole) Publisher(context.Context, driver.PubSpec) (driver.Publisher, error) {
	return sink{}, nil
}
func (blackHole) Subscriber(context.Context, driver.SubSpec, driver.Handler) (driver.Subscriber, error) {
	return sink{}, nil
}

// TestInterruptedDrainIsMarked: a run cancelled in its drain (every
// delivery still missing, the drain bound an hour away) returns at once,
// marked interrupted in the drain: its "lost" are no losses (before, SIGTERM
// in a drain recorded lost 1016 and drain-incomplete as a result).
func TestInterruptedDrainIsMarked(t *testing.T) {
	c := scenario.Defaults()
	c.ID = "drain"
	c.Rate = 100
	c.Warmup, c.Window, c.Drain = 0, 300*time.Millisecond, time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var drainSeen atomic.Bool
	cfg := Config{Case: c, Prefix: "pslab-drain", Driver: blackHole{}, Progress: func(p Progress) {
		if p.Phase == "drain" && drainSeen.CompareAndSwap(false, true) {
			cancel()
		}
	}}
	res, err := Run(ctx, cfg)
	require.NoError(t, err)
	require.NotNil(t, res.Interrupted, "%+v drainSeen %v", res.Counts, drainSeen.Load())
	assert.Equal(t, "drain", res.Interrupted.Phase)
	assert.InDelta(t, c.Window.Seconds(), res.Interrupted.WindowMeasuredS, 1e-9, "the whole window was measured")
	assert.False(t, res.DrainComplete)
	assert.Positive(t, res.Counts.Sent)
}
