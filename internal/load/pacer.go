package load

import (
	"sync/atomic"
	"time"
)

// pacer releases one open-loop publisher's messages on a fixed schedule:
// message k (1-based) is due at start + k/rate, computed from k (no
// accumulated rounding: over any second exactly rate messages are due, to
// within one). It wakes at most once per tick and then releases, back to
// back, every message whose tick has come: a message is scheduled for the
// first tick at or after its due time (the offered load is the rate, in
// one batch per tick), and the caller stamps that scheduled time into the
// message. Latency counts from it, so a late release (a late wake-up, a
// stall of the client, flow control) is in the latency, never hidden
// (coordinated omission), while the batching itself is not: a message
// due just after a tick would otherwise carry up to a tick of the
// pacer's own wait (half a tick on average: 1 ms at 2 ms ticks, three
// times a NATS wireline latency at 50,000 msg/s). A publisher that falls
// behind sends what is due at once.
//
// Waking per tick rather than per message is what makes moderate rates
// cheap: the messages of one wake-up leave in one write (the client
// library's flusher runs when the publisher sleeps), the broker reads and
// routes them together and the subscriber reads them together, so the
// cost of a wake-up (the timer, the Go runtime's scheduler and sysmon
// threads, a system call each way, the hand-offs between goroutines) is
// shared by the batch (results/client-cost). The ticks fall on one grid
// from start for every publisher of a case, so the publishers wake
// together: one wake-up of the process serves them all.
type pacer struct {
	start    int64   // epoch ns: the schedule's origin (the case's start plus the publisher's phase)
	grid     int64   // epoch ns: the wake-ups' origin, the case's start for every publisher
	nsPerMsg float64 // 1e9 / rate
	// tick: wake-ups fall on grid + j·tick (ns); 0 when the interval
	// between messages is no shorter than the tick: then the pacer wakes
	// at each message's due time.
	tick   int64
	k      uint64 // messages released so far
	now    func() int64
	sleep  func(time.Duration)
	stats  PacerStats
	lagSum float64
}

// newPacer paces rate messages per second from t0+phase (epoch ns; the
// publisher's schedule, staggered by phaseOf) with wake-ups on a grid of
// tick from t0 (the case's start, the same for all its publishers, so
// that they still wake together), on the process's monotonic clock.
func newPacer(t0, phase int64, rate float64, tick time.Duration) *pacer {
	p := &pacer{start: t0 + phase, grid: t0, nsPerMsg: float64(time.Second) / rate, tick: int64(tick), now: now, sleep: time.Sleep}
	if p.nsPerMsg >= float64(p.tick) {
		p.tick = 0
	}
	return p
}

// wakeFor is when to wake for a message due at next: the first tick at or
// after it.
func (p *pacer) wakeFor(next int64) int64 {
	if p.tick == 0 {
		return next
	}
	return next + (p.tick-(next-p.grid)%p.tick)%p.tick
}

// due is the due time of message k (epoch ns).
func (p *pacer) due(k uint64) int64 { return p.start + int64(float64(k)*p.nsPerMsg) }

// run releases messages in order, calling send(seq, dueAt) for each (seq
// 1-based; dueAt the tick it is scheduled for), until stop is set or send returns false. It checks stop
// before every message, so nothing is sent after stop is set.
func (p *pacer) run(stop *atomic.Bool, send func(seq uint64, dueAt int64) bool) {
	for !stop.Load() {
		w := p.now()
		next := p.due(p.k + 1)
		// A message due after the last wake-up waits for the next tick,
		// unless that has passed too (the publisher is behind).
		if wake := p.wakeFor(next); wake > w {
			p.sleep(time.Duration(wake - w))
			continue
		}
		p.stats.Wakes++
		var n int64
		for sched := p.wakeFor(next); sched <= w; sched = p.wakeFor(next) {
			if stop.Load() {
				p.note(n)
				return
			}
			p.k++
			n++
			lag := w - sched
			p.lagSum += float64(lag)
			p.stats.LagMaxMs = max(p.stats.LagMaxMs, float64(lag)/1e6)
			if !send(p.k, sched) {
				p.note(n)
				return
			}
			next = p.due(p.k + 1)
		}
		p.note(n)
	}
}

// note counts a wake-up's batch of n messages.
func (p *pacer) note(n int64) {
	p.stats.Released += n
	p.stats.MaxBatch = max(p.stats.MaxBatch, n)
}

// result is the pacer's statistics once it has stopped.
func (p *pacer) result() PacerStats {
	st := p.stats
	st.TickUs = float64(p.tick) / 1e3
	if st.Released > 0 {
		st.LagMeanMs = p.lagSum / float64(st.Released) / 1e6
	}
	return st
}

// mergePacers sums the pacer statistics of a case's publishers (nil
// without any: a saturating case).
func mergePacers(all []PacerStats) *PacerStats {
	var m PacerStats
	var lag float64
	for _, st := range all {
		m.TickUs = max(m.TickUs, st.TickUs)
		m.Released += st.Released
		m.Wakes += st.Wakes
		m.MaxBatch = max(m.MaxBatch, st.MaxBatch)
		m.LagMaxMs = max(m.LagMaxMs, st.LagMaxMs)
		lag += st.LagMeanMs * float64(st.Released)
	}
	if m.Wakes == 0 {
		return nil
	}
	if m.Released > 0 {
		m.LagMeanMs = lag / float64(m.Released)
	}
	return &m
}

// paceBatch is how many messages a wake-up of the pacers aims to release
// over all of a case's publishers (they wake together): enough that the
// cost of a wake-up is small against the messages' own (see pacer).
// paceTickMax bounds the tick, and with it the pacer's share of the
// latency (about half a tick on average), at low rates; paceTickMin keeps
// the tick above the timer's resolution at very high ones.
const (
	paceBatch   = 128
	paceTickMax = 2 * time.Millisecond
	paceTickMin = 50 * time.Microsecond
)

// paceTick is the pacer's tick of a case whose publishers offer total
// messages per second in all.
func paceTick(total float64) time.Duration {
	return min(max(time.Duration(paceBatch/total*float64(time.Second)), paceTickMin), paceTickMax)
}
