package load

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/brokers/fake"
	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// Hermetic tests of the load engine on the in-memory fake broker: no root,
// no broker process, exact accounting against what the fake says it did.

// fakeCase is a short open-loop case: pubs publishers at rate msgs/s each
// into subs subscribers on one topic.
func fakeCase(sub scenario.Subscription, pubs, subs int, rate float64) scenario.Case {
	c := quickCase(sub, scenario.NonPersistent)
	c.Model = scenario.FewToMany
	c.Publishers, c.Subscribers, c.Topics = pubs, subs, 1
	c.Rate = rate
	c.Drain = 20 * time.Second // ends as soon as everything has arrived
	return c
}

func runFake(t *testing.T, c scenario.Case, k fake.Knobs) (*Result, fake.Stats) {
	t.Helper()
	d := fake.Open(k)
	res, err := Run(context.Background(), Config{Case: c, Prefix: "pslab-fake", Driver: d, Seed: 3})
	require.NoError(t, err)
	require.NoError(t, d.Purge(context.Background(), "pslab-fake"))
	return res, d.Stats()
}

// TestFakeCleanRunPhasesAndAccounting: without faults every due delivery
// arrives once and in order, the phases partition what was sent and
// received, and the fake routed exactly what the engine expected.
func TestFakeCleanRunPhasesAndAccounting(t *testing.T) {
	res, st := runFake(t, fakeCase(scenario.NonDurable, 2, 3, 300), fake.Knobs{})
	n := res.Counts
	assert.Positive(t, n.Sent)
	assert.Equal(t, st.Published, n.Sent)
	assert.Equal(t, 3*n.Sent, n.Expected, "one topic: every subscriber is due every message")
	assert.Equal(t, st.Routed, n.Expected)
	assert.Equal(t, n.Expected, n.Received)
	assert.True(t, res.DrainComplete)
	assert.Zero(t, n.Lost+n.Duplicated+n.Reordered+n.Unexpected+n.DecodeErrors+n.PublishErrors)
	assert.Positive(t, n.SentInWindow)
	assert.LessOrEqual(t, n.SentInWindow, n.Sent)
	assert.LessOrEqual(t, n.ReceivedInWindow+n.Late, n.Received, "window and late deliveries are disjoint parts of all")
	assert.Positive(t, res.SubTput)
	var pub, sub int64
	for _, x := range res.PubSeries {
		pub += x
	}
	for _, x := range res.SubSeries {
		sub += x
	}
	assert.Equal(t, n.Sent, pub, "the per-second publish series sums to what was sent")
	assert.Equal(t, n.Received, sub, "the per-second delivery series sums to what was received")
}

// TestFakeKnobsAreAccountedExactly: drops show as losses, duplicates as
// duplicates and held-back messages as reorderings, one for one.
func TestFakeKnobsAreAccountedExactly(t *testing.T) {
	t.Run("drop", func(t *testing.T) {
		c := fakeCase(scenario.NonDurable, 1, 2, 300)
		c.Drain = 3 * time.Second // what is dropped never comes
		res, st := runFake(t, c, fake.Knobs{DropEvery: 7})
		assert.Positive(t, st.Dropped)
		assert.Equal(t, st.Dropped, res.Counts.Lost)
		assert.Equal(t, res.Counts.Expected-st.Dropped, res.Counts.Received)
		assert.False(t, res.DrainComplete)
		assert.Zero(t, res.Counts.Duplicated+res.Counts.Reordered)
	})
	t.Run("duplicate", func(t *testing.T) {
		res, st := runFake(t, fakeCase(scenario.NonDurable, 1, 2, 300), fake.Knobs{DuplicateEvery: 5})
		assert.Positive(t, st.Duplicated)
		assert.Equal(t, st.Duplicated, res.Counts.Duplicated)
		assert.Zero(t, res.Counts.Redelivered, "the fake's duplicates are not flagged redelivered")
		assert.Zero(t, res.Counts.Lost+res.Counts.Reordered)
	})
	t.Run("reorder", func(t *testing.T) {
		res, st := runFake(t, fakeCase(scenario.NonDurable, 1, 2, 300), fake.Knobs{ReorderEvery: 4})
		assert.Positive(t, st.Reordered)
		assert.Equal(t, st.Reordered, res.Counts.Reordered)
		assert.Zero(t, res.Counts.Lost+res.Counts.Duplicated)
		assert.True(t, res.DrainComplete, "a message held back at the end comes with the flush")
	})
}

// TestFakePublishErrorsStopThePublisher: a refused publish is counted once
// per publisher (a publisher stops at its first error, then flushes what
// it sent) and reported.
func TestFakePublishErrorsStopThePublisher(t *testing.T) {
	// Each publisher reaches its 41st send (the refused one) 82 ms into
	// the case at 500/s; a window of 3 s leaves that room on a loaded
	// machine (it failed once under -race on a busy one with 0.8 s).
	c := fakeCase(scenario.NonDurable, 2, 1, 500)
	c.Window = 3 * time.Second
	res, st := runFake(t, c, fake.Knobs{FailPublishAfter: 40})
	assert.Equal(t, int64(2), res.Counts.PublishErrors)
	assert.Equal(t, int64(2), st.Refused)
	assert.Equal(t, int64(80), res.Counts.Sent)
	assert.Equal(t, res.Counts.Expected, res.Counts.Received)
	assert.Contains(t, res.FirstError, "FailPublishAfter")

	// What a stopped publisher sent before its error still reaches the
	// subscribers: it flushes like the others. The fake holds every 20th
	// message back until the next message or a Flush; the 80th has no
	// next message, so only a flush delivers it.
	res, st = runFake(t, c, fake.Knobs{FailPublishAfter: 40, ReorderEvery: 20})
	assert.Equal(t, int64(80), res.Counts.Sent)
	assert.Equal(t, int64(4), st.Reordered+1, "held at 20, 40 and 60 and let go by the next message; the 80th by a flush")
	assert.Equal(t, res.Counts.Expected, res.Counts.Received, "the message held at the end arrived: the publishers flushed after their error")
	assert.Zero(t, res.Counts.Lost)
}

// TestFakeSlowConsumerBacklog: a durable subscriber slower than the
// publisher builds a backlog that arrives after the window, late but
// complete; the fast subscriber keeps up.
func TestFakeSlowConsumerBacklog(t *testing.T) {
	c := fakeCase(scenario.Durable, 1, 2, 300)
	res, st := runFake(t, c, fake.Knobs{SlowSubscribers: 1, SlowDelay: 10 * time.Millisecond})
	require.Greater(t, res.Counts.Sent, int64(150), "a 1 s case at 300 msgs/s sends well over 150 (the slow subscriber takes at most 100 per second)")
	assert.Positive(t, res.Counts.Late, "the slow subscriber's backlog arrives after the window")
	assert.True(t, res.DrainComplete)
	assert.Zero(t, res.Counts.Lost)
	assert.Equal(t, st.Routed, res.Counts.Received)
}

// TestFakeSubscriberDisconnect: a durable subscriber taken away gets what
// arrived meanwhile when it comes back (lazy acknowledgement redelivers
// what it had not acknowledged, flagged); a non-durable one loses what was
// published while it was away, and what was queued for it.
func TestFakeSubscriberDisconnect(t *testing.T) {
	withFault := func(sub scenario.Subscription, ack scenario.AckMode) scenario.Case {
		c := fakeCase(sub, 1, 2, 300)
		c.Ack = ack
		c.Window = 2 * time.Second
		c.Faults = []scenario.Fault{{Kind: scenario.SubscriberDisconnect, At: 500 * time.Millisecond, For: 500 * time.Millisecond, Subscribers: 1}}
		return c
	}
	t.Run("durable", func(t *testing.T) {
		res, st := runFake(t, withFault(scenario.Durable, scenario.AckClient), fake.Knobs{})
		require.Len(t, res.Faults, 1)
		f := res.Faults[0]
		assert.Empty(t, f.Error)
		assert.Equal(t, 1, f.Reconnected)
		assert.Positive(t, st.HeldAway, "the broker held messages while the subscriber was away")
		assert.GreaterOrEqual(t, f.Backlog, st.HeldAway, "what the broker held arrives after the subscriber began to come back")
		assert.Zero(t, res.Counts.Lost)
		assert.Equal(t, st.Redelivered, res.Counts.Redelivered)
		assert.Equal(t, st.Redelivered, res.Counts.Duplicated, "each redelivery repeats a delivery not acknowledged")
	})
	t.Run("durable, backlog before Subscriber returns", func(t *testing.T) {
		// The whole backlog arrives inside Subscriber: the fault's end is
		// marked before it, so the backlog is still counted.
		res, st := runFake(t, withFault(scenario.Durable, scenario.AckClient), fake.Knobs{DeliverOnSubscribe: true})
		require.Len(t, res.Faults, 1)
		f := res.Faults[0]
		assert.Empty(t, f.Error)
		assert.Equal(t, 1, f.Reconnected)
		assert.Positive(t, st.HeldAway)
		assert.GreaterOrEqual(t, f.Backlog, st.HeldAway)
		assert.Zero(t, res.Counts.Lost)
	})
	t.Run("non-durable", func(t *testing.T) {
		c := withFault(scenario.NonDurable, scenario.AckAuto)
		c.Drain = time.Second // what is lost never comes
		res, st := runFake(t, c, fake.Knobs{})
		n := res.Counts
		f := res.Faults[0]
		assert.Positive(t, f.DueWhile)
		assert.Positive(t, n.Lost)
		assert.LessOrEqual(t, n.Lost, f.DueWhile+st.Discarded, "only what was published while away or queued at leaving is lost")
		assert.Zero(t, st.HeldAway)
		assert.Zero(t, n.Duplicated)
	})
}

// TestFakeSelector: a subscriber gets exactly the messages whose value
// its selector range holds, and no other.
func TestFakeSelector(t *testing.T) {
	c := fakeCase(scenario.NonDurable, 2, 4, 300)
	c.Selector = true
	res, st := runFake(t, c, fake.Knobs{})
	n := res.Counts
	assert.Less(t, n.Expected, 4*n.Sent, "a selector takes a part of the messages")
	assert.Positive(t, n.Expected)
	assert.Equal(t, st.Routed, n.Expected)
	assert.Equal(t, n.Expected, n.Received)
	assert.Zero(t, n.Unexpected)
}

// roleDriver counts the connections a driver opened per role.
type roleDriver struct {
	*fake.Driver
	pubs, subs atomic.Int64
}

func (d *roleDriver) Publisher(ctx context.Context, s driver.PubSpec) (driver.Publisher, error) {
	d.pubs.Add(1)
	return d.Driver.Publisher(ctx, s)
}

func (d *roleDriver) Subscriber(ctx context.Context, s driver.SubSpec, h driver.Handler) (driver.Subscriber, error) {
	d.subs.Add(1)
	return d.Driver.Subscriber(ctx, s, h)
}

// TestPubDriverOpensThePublishers: with a driver of their own (a link per
// role: it dials from the publishers' namespace) every publisher is opened
// by it and every subscriber by the case's driver, and the messages still
// meet at the one broker.
func TestPubDriverOpensThePublishers(t *testing.T) {
	d := fake.Open(fake.Knobs{})
	subs, pubs := &roleDriver{Driver: d}, &roleDriver{Driver: d}
	res, err := Run(context.Background(), Config{Case: fakeCase(scenario.NonDurable, 3, 2, 200), Prefix: "pslab-fake",
		Driver: subs, PubDriver: pubs, Seed: 3})
	require.NoError(t, err)
	assert.EqualValues(t, 3, pubs.pubs.Load())
	assert.Zero(t, pubs.subs.Load())
	assert.EqualValues(t, 2, subs.subs.Load())
	assert.Zero(t, subs.pubs.Load())
	assert.Positive(t, res.Counts.Sent)
	assert.Equal(t, res.Counts.Expected, res.Counts.Received)
}
