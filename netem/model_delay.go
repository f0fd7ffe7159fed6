package netem

import (
	"math/rand/v2"
)

// delayModel draws each packet's one-way propagation delay in nanoseconds.
type delayModel struct {
	delay, jitter int64 // ns
	normal        bool
	rng           *rand.Rand
}

func newDelayModel(p Profile, seed, stream uint64) delayModel {
	return delayModel{
		delay:  msToNs(p.DelayMs),
		jitter: msToNs(p.JitterMs),
		normal: p.JitterDist == JitterNormal,
		rng:    rand.New(rand.NewPCG(seed, stream)),
	}
}

// draw returns one delay (never negative). A normal draw below zero is
// drawn again (at most 16 times, then 0), so the mean stays the
// configured delay as long as jitter is well below it; profiles keep
// jitter at most half the delay.
func (m *delayModel) draw() int64 {
	if m.jitter == 0 {
		return m.delay
	}
	for range 16 {
		var j float64
		if m.normal {
			j = m.rng.NormFloat64()
		} else {
			j = 2*m.rng.Float64() - 1
		}
		d := m.delay + int64(j*float64(m.jitter))
		if d >= 0 {
			return d
		}
	}
	return 0
}

func msToNs(ms float64) int64 { return int64(ms * 1e6) }

// outageModel says when the link is off (a handoff, a car in a tunnel):
// on for OnMs then off for OffMs, repeating from the start of the link
// (scheduled), or with exponentially distributed on and off times of
// those means (random, as Mahimahi's mm-onoff). While the link is off
// nothing is sent, packets arriving are dropped (counted as outage drops)
// and packets already queued wait.
type outageModel struct {
	on, off int64 // ns (mean for random)
	random  bool
	rng     *rand.Rand
	// the current period: on in [start, offAt), off in [offAt, next)
	start, offAt, next int64
}

func newOutageModel(p Profile, seed, stream uint64, t0 int64) *outageModel {
	if p.OutageOffMs <= 0 {
		return nil
	}
	o := &outageModel{on: msToNs(p.OutageOnMs), off: msToNs(p.OutageOffMs), random: p.OutageRandom,
		rng: rand.New(rand.NewPCG(seed, stream))}
	o.begin(t0)
	return o
}

func (o *outageModel) begin(t int64) {
	on, off := o.on, o.off
	if o.random {
		on = max(1, int64(o.rng.ExpFloat64()*float64(o.on)))
		off = max(1, int64(o.rng.ExpFloat64()*float64(o.off)))
	}
	o.start, o.offAt, o.next = t, t+on, t+on+off
}

// advance moves the period forward to the one holding t (t never goes
// back).
func (o *outageModel) advance(t int64) {
	for t >= o.next {
		o.begin(o.next)
	}
}

// isOff reports whether the link is off at t.
func (o *outageModel) isOff(t int64) bool {
	if o == nil {
		return false
	}
	o.advance(t)
	return t >= o.offAt
}

// onAt returns t if the link is on then, else the end of the outage.
func (o *outageModel) onAt(t int64) int64 {
	if o == nil {
		return t
	}
	o.advance(t)
	if t >= o.offAt {
		return o.next
	}
	return t
}
