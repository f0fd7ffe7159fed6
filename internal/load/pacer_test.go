package load

import (
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock drives a pacer without real time: sleeping advances it by the
// requested duration plus an oversleep (a late wake-up), and a stall can
// be scheduled (the publisher held up, e.g. by flow control).
type fakeClock struct {
	t         int64
	oversleep time.Duration
	sleeps    int
	// stop is set once a sleep reaches stopAt (0: never).
	stopAt int64
	stop   *atomic.Bool
}

func (c *fakeClock) now() int64 { return c.t }

func (c *fakeClock) sleep(d time.Duration) {
	c.sleeps++
	c.t += int64(max(d, 0) + c.oversleep)
	if c.stopAt > 0 && c.t >= c.stopAt {
		c.stop.Store(true)
	}
}

// sent is one message as the pacer handed it over: its sequence number,
// its scheduled time (the first tick at or after its due time) and the
// clock when it was sent.
type sent struct {
	seq       uint64
	due, when int64
}

// runPacer paces rate msgs/s with tick on clk from start until a sleep
// passes end; hold, when set, is called with each message (it may advance
// the clock: a slow send).
func runPacer(clk *fakeClock, start int64, rate float64, tick time.Duration, end int64, hold func(s sent)) (*pacer, []sent) {
	p := newPacer(start, 0, rate, tick)
	p.now, p.sleep = clk.now, clk.sleep
	var stop atomic.Bool
	clk.stop, clk.stopAt = &stop, end
	var out []sent
	p.run(&stop, func(seq uint64, due int64) bool {
		s := sent{seq: seq, due: due, when: clk.now()}
		out = append(out, s)
		if hold != nil {
			hold(s)
		}
		return true
	})
	return p, out
}

// dueBy counts the messages due at or before t: what an exact pacer has
// sent by then.
func dueBy(start int64, rate float64, t int64) int {
	n := 0
	for k := uint64(1); start+int64(float64(k)*float64(time.Second)/rate) <= t; k++ {
		n++
	}
	return n
}

// scheduledBy counts the messages of p scheduled (on their tick) at or
// before t: what an exact pacer has sent by then.
func scheduledBy(p *pacer, t int64) int {
	n := 0
	for k := uint64(1); p.wakeFor(p.due(k)) <= t; k++ {
		n++
	}
	return n
}

// TestPacerOffersExactlyTheRate: over ten seconds of (fake) time the pacer
// releases exactly the messages scheduled, whatever the tick and however
// late the wake-ups; every message carries the first tick at or after its
// due time (due times spaced by 1/rate from the start), and none leaves
// before it is scheduled.
func TestPacerOffersExactlyTheRate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		rate      float64
		tick      time.Duration
		oversleep time.Duration
	}{
		{"per message", 1000, 0, 0},
		{"tick below the interval", 1000, 200 * time.Microsecond, 0},
		{"batched", 50_000, time.Millisecond, 0},
		{"batched, late wake-ups", 50_000, time.Millisecond, 700 * time.Microsecond},
		{"fractional rate", 333.3, 2 * time.Millisecond, 50 * time.Microsecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &fakeClock{t: 5e9, oversleep: tc.oversleep}
			start, end := int64(5e9), int64(15e9)
			p, out := runPacer(clk, start, tc.rate, tc.tick, end, nil)
			require.NotEmpty(t, out)
			last := out[len(out)-1].when
			assert.Equal(t, scheduledBy(p, last), len(out), "exactly the messages scheduled by the last send")
			assert.InDelta(t, tc.rate*10, len(out), 1+tc.rate*float64(tc.oversleep+2*tc.tick)/1e9,
				"ten seconds at the rate, up to the last wake-up's lateness")
			interval := float64(time.Second) / tc.rate
			for i, s := range out {
				switch {
				case s.seq != uint64(i+1):
					t.Fatalf("message %d has sequence number %d: not contiguous", i+1, s.seq)
				case s.due != p.wakeFor(start+int64(float64(s.seq)*interval)):
					t.Fatalf("message %d is stamped %d, not its tick %d", s.seq, s.due, p.wakeFor(start+int64(float64(s.seq)*interval)))
				case s.due < start+int64(float64(s.seq)*interval) || (tc.tick > 0 && s.due-start-int64(float64(s.seq)*interval) >= int64(tc.tick)):
					t.Fatalf("message %d is stamped %d, not within a tick after its due time", s.seq, s.due)
				case s.when < s.due:
					t.Fatalf("message %d left at %d, before it was scheduled at %d", s.seq, s.when, s.due)
				case i > 0 && s.due < out[i-1].due:
					t.Fatalf("messages %d and %d are scheduled out of order", i, s.seq)
				}
			}
			// Any second of scheduled times holds the rate's messages, to
			// within one tick's (two pointers over the scheduled times,
			// which only grow).
			lo, hi := 0, 0
			for from := start; from+1e9 <= out[len(out)-1].due; from += 250e6 {
				for lo < len(out) && out[lo].due <= from {
					lo++
				}
				for hi < len(out) && out[hi].due <= from+1e9 {
					hi++
				}
				assert.InDelta(t, tc.rate, hi-lo, 1+math.Ceil(tc.rate*float64(tc.tick)/1e9), "messages scheduled in (%d, %d]", from, from+1e9)
			}
			st := p.result()
			assert.Equal(t, int64(len(out)), st.Released)
			if tc.tick > 0 {
				assert.LessOrEqual(t, st.Wakes, int64((end-start)/int64(tc.tick))+2, "at most one wake-up per tick")
			}
		})
	}
}

// TestPacerBatchesPerTick: with the interval shorter than the tick, a
// wake-up releases every message due since the last one (about rate x
// tick) back to back, and wake-ups fall on the tick's grid from the start,
// so that all publishers of a case wake together.
func TestPacerBatchesPerTick(t *testing.T) {
	clk := &fakeClock{t: 0}
	tick := time.Millisecond
	p, out := runPacer(clk, 0, 100_000, tick, 1e9+1, nil) // wakes at 1, 2, ..., 1000 ms
	st := p.result()
	assert.Equal(t, int64(1000), st.Wakes, "one wake-up per tick over a second")
	assert.Equal(t, int64(100), st.MaxBatch, "100 messages due per millisecond")
	assert.Equal(t, int64(len(out)), st.Released)
	whens := map[int64]int{}
	for _, s := range out {
		whens[s.when]++
	}
	for w, n := range whens {
		assert.Zero(t, w%int64(tick), "a wake-up off the grid at %d", w)
		assert.Equal(t, 100, n, "the batch at %d", w)
	}
	assert.Zero(t, st.LagMeanMs, "punctual wake-ups release every message on its tick: the batching adds no lag to the latency")
	assert.Equal(t, int(st.Wakes)+1, clk.sleeps, "one sleep per tick (and the last one past the end), none per message")
}

// TestPacerCatchesUpAfterAStall: a publisher held up (here: one send takes
// 300 ms, as a full flow-control window would) then sends every message
// that fell due meanwhile at once, each stamped with its own due time, so
// the stall shows in the latency of all of them (coordinated omission),
// and the offered load over the run is still the rate.
func TestPacerCatchesUpAfterAStall(t *testing.T) {
	clk := &fakeClock{t: 0}
	const rate = 10_000
	stalled := false
	stallSeq := uint64(0)
	_, out := runPacer(clk, 0, rate, time.Millisecond, 2e9, func(s sent) {
		if !stalled && s.due >= 500e6 {
			stalled, stallSeq = true, s.seq
			clk.t += 300e6
		}
	})
	require.NotZero(t, stallSeq)
	last := out[len(out)-1].when
	assert.Equal(t, dueBy(0, rate, last), len(out), "nothing skipped: every message due was sent")
	lateByHalf := 0
	for _, s := range out[stallSeq:] { // the messages after the stalled one
		if s.when-s.due >= 150e6 {
			lateByHalf++
		}
	}
	assert.InDelta(t, 0.15*rate, lateByHalf, 0.002*rate+1,
		"the messages due in the stall's first 150 ms are sent when it ends, late by at least 150 ms (their own due times)")
	for i := int(stallSeq); i < len(out); i++ {
		require.Equal(t, out[i-1].seq+1, out[i].seq)
		require.GreaterOrEqual(t, out[i].due, out[i-1].due, "scheduled in order")
		require.Less(t, out[i].due-(int64(out[i].seq)*int64(time.Second)/rate), int64(time.Millisecond), "scheduled within a tick after its due time")
	}
}

// TestPacerStops: nothing is sent once stop is set, and a send that fails
// ends the pacer at once.
func TestPacerStops(t *testing.T) {
	clk := &fakeClock{}
	p := newPacer(0, 0, 100_000, time.Millisecond)
	p.now, p.sleep = clk.now, clk.sleep
	var stop atomic.Bool
	n := 0
	p.run(&stop, func(seq uint64, _ int64) bool {
		n++
		if seq == 150 { // in the second batch
			stop.Store(true)
		}
		return true
	})
	assert.Equal(t, 150, n, "the rest of the batch is not sent once stop is set")
	assert.Equal(t, int64(150), p.result().Released)

	p = newPacer(0, 0, 100_000, time.Millisecond)
	p.now, p.sleep = clk.now, clk.sleep
	n = 0
	p.run(&atomic.Bool{}, func(seq uint64, _ int64) bool {
		n++
		return seq < 42
	})
	assert.Equal(t, 42, n)
}

// TestPaceTick: the tick aims at paceBatch messages per wake-up of the
// process over all publishers, within paceTickMax, and is never longer
// than needed.
func TestPaceTick(t *testing.T) {
	assert.Equal(t, paceTickMax, paceTick(1000), "a low rate waits at most the longest tick")
	for _, total := range []float64{200_000, 1e6, 2e6} {
		tick := paceTick(total)
		assert.Less(t, tick, paceTickMax)
		assert.InDelta(t, paceBatch, total*tick.Seconds(), 1, "messages per wake-up at %g msgs/s", total)
	}
	assert.Equal(t, paceTickMin, paceTick(1e12), "never below the timer's resolution")
}

// TestMergePacers: the case's pacer statistics add the publishers' counts,
// keep the worst lag and batch, and weigh the mean lag by messages.
func TestMergePacers(t *testing.T) {
	assert.Nil(t, mergePacers(make([]PacerStats, 3)), "a saturating case has no pacer")
	m := mergePacers([]PacerStats{
		{TickUs: 1000, Released: 100, Wakes: 10, MaxBatch: 12, LagMeanMs: 1, LagMaxMs: 2},
		{TickUs: 1000, Released: 300, Wakes: 20, MaxBatch: 15, LagMeanMs: 3, LagMaxMs: 9},
	})
	require.NotNil(t, m)
	assert.Equal(t, PacerStats{TickUs: 1000, Released: 400, Wakes: 30, MaxBatch: 15, LagMeanMs: 2.5, LagMaxMs: 9}, *m)
}

// TestPacerPhaseKeepsTheGrid: a publisher's phase (phaseOf) moves its due
// times, not its wake-ups: those stay on the case's grid from t0, so that
// the publishers of a case still wake together.
func TestPacerPhaseKeepsTheGrid(t *testing.T) {
	const t0, tick = int64(1_000_000), int64(time.Millisecond)
	phase := -int64(3 * time.Microsecond) // of a 10 µs interval
	clk := &fakeClock{t: t0}
	p := newPacer(t0, phase, 100_000, time.Duration(tick))
	p.now, p.sleep = clk.now, clk.sleep
	var stop atomic.Bool
	clk.stop, clk.stopAt = &stop, t0+10*tick
	var out []sent
	p.run(&stop, func(seq uint64, due int64) bool {
		out = append(out, sent{seq: seq, due: due, when: clk.now()})
		return true
	})
	require.NotEmpty(t, out)
	for _, s := range out {
		assert.Equal(t, p.wakeFor(t0+phase+int64(s.seq)*10_000), s.due, "message %d's tick", s.seq)
		assert.Zero(t, (s.due-t0)%tick, "message %d scheduled off the grid", s.seq)
		assert.Zero(t, (s.when-t0)%tick, "message %d left off the grid, at t0%+d ns", s.seq, s.when-t0)
		assert.GreaterOrEqual(t, s.when, s.due)
	}
}
