package load

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/scenario"
)

func TestInFlightFanoutCountsMatchingSubscribers(t *testing.T) {
	subs := []*subState{
		{topic: 0}, // every value of topic 0
		{topic: 0, accept: []bool{false, true, false}}, // value 1 only
		{topic: 1, accept: []bool{true, true, false}},  // values 0 and 1
	}
	f := newInFlight(100, subs, 2, 3)
	assert.Equal(t, [][]int64{{1, 2, 1}, {1, 1, 0}}, f.fanout)
	assert.Nil(t, newInFlight(0, subs, 2, 3), "0 means no bound")
	var stop atomic.Bool
	var none *inFlight
	assert.True(t, none.admit(context.Background(), &stop, 0, 0), "no bound admits at once")
}

func TestInFlightAdmitWaitsForDeliveries(t *testing.T) {
	subs := []*subState{{topic: 0}, {topic: 0}, {topic: 0}, {topic: 0}}
	f := newInFlight(10, subs, 1, 1)
	f.stallAfter = time.Hour // only deliveries can admit, however slow the machine
	var stop atomic.Bool
	ctx := context.Background()
	require.True(t, f.admit(ctx, &stop, 0, 0)) // 4 pending
	require.True(t, f.admit(ctx, &stop, 0, 0)) // 8 pending
	admitted := make(chan struct{})
	go func() {
		f.admit(ctx, &stop, 0, 0) // 12 would pass the bound: waits
		close(admitted)
	}()
	select {
	case <-admitted:
		t.Fatal("admitted past the bound with nothing delivered")
	case <-time.After(100 * time.Millisecond):
	}
	for range 2 {
		f.delivered()
	}
	select {
	case <-admitted: // 6 pending + 4 = 10
	case <-time.After(time.Minute):
		t.Fatal("not admitted after two deliveries made room")
	}
	stalls, peak := f.counts()
	assert.Zero(t, stalls)
	assert.Equal(t, int64(10), peak)
}

func TestInFlightGoesOnAfterAStallAndStops(t *testing.T) {
	f := newInFlight(1, []*subState{{topic: 0}}, 1, 1)
	f.stallAfter = 50 * time.Millisecond
	var stop atomic.Bool
	ctx := context.Background()
	require.True(t, f.admit(ctx, &stop, 0, 0))
	start := time.Now()
	require.True(t, f.admit(ctx, &stop, 0, 0), "a lost delivery must not hold the publishers for good")
	assert.GreaterOrEqual(t, time.Since(start), f.stallAfter)
	stalls, _ := f.counts()
	assert.Equal(t, int64(1), stalls)

	stop.Store(true)
	assert.False(t, f.admit(ctx, &stop, 0, 0), "a stopped publisher is not admitted")
}

// TestInFlightBoundOnEmbeddedNATS paces saturating publishers of a
// few-to-many case at the subscribers' pace: nothing lost, no stall, and
// the pending deliveries stay within the bound plus one message per
// publisher.
func TestInFlightBoundOnEmbeddedNATS(t *testing.T) {
	d := startNATS(t)
	c := quickCase(scenario.NonDurable, scenario.NonPersistent)
	c.Model, c.Publishers, c.Subscribers, c.Topics = scenario.FewToMany, 2, 5, 1
	c.InFlight = 50
	prefix := "pslab-test-inflight"
	res, err := Run(context.Background(), Config{Case: c, Prefix: prefix, Driver: d, Seed: 3})
	require.NoError(t, err)
	require.NoError(t, d.Purge(context.Background(), prefix))
	n := res.Counts
	t.Logf("sent %d received %d, peak pending %d, stalls %d", n.Sent, n.Received, res.InFlightPeak, res.InFlightStalls)
	assert.Positive(t, n.SentInWindow)
	assert.Equal(t, n.Expected, n.Received)
	assert.Zero(t, res.InFlightStalls)
	assert.Positive(t, res.InFlightPeak)
	assert.LessOrEqual(t, res.InFlightPeak, int64(c.InFlight+c.Publishers*c.Subscribers))
}
