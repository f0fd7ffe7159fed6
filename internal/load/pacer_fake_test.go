package load

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/body"
	"pslab/internal/brokers/fake"
	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// stampLog wraps the fake broker's driver and records, for every publish,
// the stamp in the body and the clock when Publish was called; stallAt
// (publisher 0's sequence number, 0: none) holds that publish for stall,
// as a full flow-control window would.
type stampLog struct {
	*fake.Driver
	stallAt uint64
	stall   time.Duration

	mu    sync.Mutex
	sends map[int][]stampedSend // by publisher, in publish order
}

type stampedSend struct {
	st   body.Stamp
	when int64
}

func (l *stampLog) Publisher(ctx context.Context, s driver.PubSpec) (driver.Publisher, error) {
	p, err := l.Driver.Publisher(ctx, s)
	if err != nil {
		return nil, err
	}
	return &stampPub{Publisher: p, log: l}, nil
}

type stampPub struct {
	driver.Publisher
	log *stampLog
}

func (p *stampPub) Publish(ctx context.Context, m driver.Message) error {
	when := now()
	st, _, err := body.Decode(m.Body)
	if err != nil {
		return err
	}
	l := p.log
	l.mu.Lock()
	l.sends[int(st.Publisher)] = append(l.sends[int(st.Publisher)], stampedSend{st: st, when: when})
	l.mu.Unlock()
	if st.Publisher == 0 && st.Seq == l.stallAt {
		time.Sleep(l.stall)
	}
	return p.Publisher.Publish(ctx, m)
}

// runStamped runs c on the fake broker through a stampLog.
func runStamped(t *testing.T, c scenario.Case, stallAt uint64, stall time.Duration) (*Result, fake.Stats, map[int][]stampedSend) {
	t.Helper()
	l := &stampLog{Driver: fake.Open(fake.Knobs{}), stallAt: stallAt, stall: stall, sends: map[int][]stampedSend{}}
	res, err := Run(context.Background(), Config{Case: c, Prefix: "pslab-fake", Driver: l, Seed: 5})
	require.NoError(t, err)
	require.NoError(t, l.Purge(context.Background(), "pslab-fake"))
	return res, l.Stats(), l.sends
}

// checkSchedule: each publisher's messages carry contiguous sequence
// numbers and scheduled times that only grow, a tick apart or on one tick
// (per message with tick 0: spaced by 1/rate, publisher p of P staggered
// p/P of an interval early: phaseOf), and none was handed to the driver
// before it was scheduled.
func checkSchedule(t *testing.T, sends map[int][]stampedSend, pubs int, rate float64, tick time.Duration) {
	t.Helper()
	require.Len(t, sends, pubs)
	interval := float64(time.Second) / rate
	if tick > 0 && float64(tick) <= interval {
		tick = 0
	}
	first := sends[0][0].st.SentNanos - int64(interval) // the schedule's start (tick 0)
	for p, ss := range sends {
		require.NotEmpty(t, ss, "publisher %d", p)
		for i, s := range ss {
			require.Equal(t, uint64(i+1), s.st.Seq, "publisher %d: sequence numbers are contiguous", p)
			if tick == 0 {
				start := float64(first - int64(interval*float64(p)/float64(pubs)))
				require.InDelta(t, start+float64(s.st.Seq)*interval, float64(s.st.SentNanos), 1,
					"publisher %d message %d: stamped with its due time on the case's schedule", p, s.st.Seq)
			} else if i > 0 {
				d := s.st.SentNanos - ss[i-1].st.SentNanos
				require.True(t, d == 0 || d%int64(tick) == 0, "publisher %d message %d: scheduled %d ns after the one before, not on the tick grid", p, s.st.Seq, d)
			}
			require.GreaterOrEqual(t, s.when, s.st.SentNanos, "publisher %d message %d left before it was scheduled", p, s.st.Seq)
		}
	}
}

// checkPacedExact: the engine's counts agree with what the fake broker did and
// with each other, and the latency covers every delivery due for the
// window's messages.
func checkPacedExact(t *testing.T, res *Result, st fake.Stats, subs int) {
	t.Helper()
	n := res.Counts
	assert.Equal(t, st.Published, n.Sent)
	assert.Equal(t, int64(subs)*n.Sent, n.Expected)
	assert.Equal(t, st.Routed, n.Expected)
	assert.Equal(t, n.Expected, n.Received)
	assert.Zero(t, n.Lost+n.Duplicated+n.Reordered+n.Unexpected+n.DecodeErrors+n.PublishErrors)
	assert.Equal(t, int64(subs)*n.SentInWindow, n.DueInWindow)
	assert.Equal(t, n.DueInWindow, res.Histogram.Count(), "a latency for every delivery due for the window's messages")
	var pub int64
	for _, x := range res.PubSeries {
		pub += x
	}
	assert.Equal(t, n.Sent, pub)
	require.NotNil(t, res.Pacer)
	assert.Equal(t, n.Sent, res.Pacer.Released, "every message released was sent")
}

// TestFakePacedRateAndStamps: an open-loop case on the fake broker offers
// its rate (counted over the window by due time: never more than due,
// within a wide margin of it), stamps every message with its due time on
// its publisher's (staggered) schedule, releases messages in batches
// (fewer wake-ups than messages) and keeps the accounting exact.
func TestFakePacedRateAndStamps(t *testing.T) {
	const pubs, subs, rate = 2, 2, 2000.0
	c := fakeCase(scenario.NonDurable, pubs, subs, rate)
	c.Window = time.Second
	res, st, sends := runStamped(t, c, 0, 0)
	checkSchedule(t, sends, pubs, rate, paceTick(rate*pubs))
	checkPacedExact(t, res, st, subs)
	n := res.Counts
	due := rate * c.Window.Seconds() * pubs
	assert.LessOrEqual(t, float64(n.SentInWindow), due+pubs, "never more than the messages due in the window")
	assert.Greater(t, float64(n.SentInWindow), 0.5*due, "about the messages due in the window")
	assert.InDelta(t, 1.0, res.PubTput/(rate*pubs), 0.5)
	for i := range len(sends[0]) {
		if i < len(sends[1]) {
			d := sends[0][i].st.SentNanos - sends[1][i].st.SentNanos
			require.True(t, d >= 0 && d <= int64(paceTick(rate*pubs)), "publisher 1 of 2 is staggered early, by at most a tick: %d ns", d)
		}
	}
	p := res.Pacer
	assert.Equal(t, float64(paceTick(rate*pubs).Microseconds()), p.TickUs)
	assert.Less(t, p.Wakes, p.Released/2, "a tick spans several messages: released in batches")
	assert.Greater(t, p.MaxBatch, int64(1))
}

// TestFakePacedCatchUpAfterStall: a publisher held up for 300 ms (its
// Publish blocks, as at a full flow-control window) then sends every
// message that fell due meanwhile, each with its own due time: no sequence
// number or due time is skipped, those messages leave late by up to the
// stall (coordinated omission: the latency counts from the due time), the
// held publisher ends with as many sends as the other, and the accounting
// stays exact.
func TestFakePacedCatchUpAfterStall(t *testing.T) {
	const pubs, subs, rate = 2, 1, 2000.0
	c := fakeCase(scenario.NonDurable, pubs, subs, rate)
	c.Window = time.Second
	stall := 300 * time.Millisecond
	const at = 1000 // half a second in
	res, st, sends := runStamped(t, c, at, stall)
	checkSchedule(t, sends, pubs, rate, paceTick(rate*pubs))
	checkPacedExact(t, res, st, subs)
	held, other := sends[0], sends[1]
	require.Greater(t, len(held), at, "the held publisher went on after the stall")
	late := 0
	for _, s := range held[at:] {
		if s.when-s.st.SentNanos >= int64(stall)/4 {
			late++
		}
	}
	// The messages due in the stall's first 3/4 are sent when it ends: at
	// least 3/4 x 300 ms x 2000/s of them late by a quarter of the stall.
	assert.GreaterOrEqual(t, late, int(0.75*stall.Seconds()*rate)-1, "messages due during the stall are sent late, with their own due times")
	assert.InDelta(t, len(other), len(held), 0.1*float64(len(other)), "the held publisher caught up")
}

// TestFakePaceTickZero: pace_tick 0 wakes the publisher for every message
// (no batching: most wake-ups release one), on the same schedule.
func TestFakePaceTickZero(t *testing.T) {
	// 5 ms apart: a wake-up must be that late, most of the time, for two
	// messages to share it, which a loaded CI machine's timers are not.
	const rate = 200.0
	c := fakeCase(scenario.NonDurable, 1, 1, rate)
	c.PaceTick, c.PaceTickSet = 0, true
	res, st, sends := runStamped(t, c, 0, 0)
	checkSchedule(t, sends, 1, rate, 0)
	checkPacedExact(t, res, st, 1)
	assert.Zero(t, res.Pacer.TickUs)
	assert.Greater(t, res.Pacer.Wakes, res.Pacer.Released/2, "mostly one message per wake-up")
}
