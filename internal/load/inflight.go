package load

import (
	"context"
	"sync/atomic"
	"time"
)

// StallAfter is how long a publisher waits at the in-flight bound with no
// delivery arriving before it goes on anyway (and the stall is counted): a
// lost message is never delivered, so without it the bound would shrink by
// one for every loss and could stop the publishers for good.
const StallAfter = time.Second

// inFlight bounds the deliveries due but not yet received across a case
// (scenario field in_flight): a closed loop that paces saturating
// publishers at the subscribers' pace. A broker that accepts messages
// faster than it dispatches them to r subscribers otherwise piles them up
// until it pages, collects garbage or stops answering, and its "received"
// rate is then not a rate it can sustain. The bound is soft: publishers
// that pass the check at the same moment may each add one message.
type inFlight struct {
	bound   int64
	fanout  [][]int64 // [topic][value]: subscribers due one such message
	due     atomic.Int64
	arrived atomic.Int64
	stalls  atomic.Int64
	peak    atomic.Int64 // most deliveries pending right after an admission
	// stallAfter is StallAfter (tests shorten or lengthen it).
	stallAfter time.Duration
}

// newInFlight returns nil (no bound) when bound is 0.
func newInFlight(bound int, subs []*subState, topics, values int) *inFlight {
	if bound <= 0 {
		return nil
	}
	f := &inFlight{bound: int64(bound), fanout: make([][]int64, topics), stallAfter: StallAfter}
	for t := range f.fanout {
		f.fanout[t] = make([]int64, max(values, 1))
		for v := range f.fanout[t] {
			for _, s := range subs {
				if s.topic == t && s.accepts(v) {
					f.fanout[t][v]++
				}
			}
		}
	}
	return f
}

// admit waits until a message of topic and value fits under the bound and
// counts its deliveries as due. It returns false when stop was set or ctx
// ended while waiting.
func (f *inFlight) admit(ctx context.Context, stop *atomic.Bool, topic, value int) bool {
	if f == nil {
		return true
	}
	n := f.fanout[topic][value]
	last, since := f.arrived.Load(), time.Now()
	for {
		arrived := f.arrived.Load()
		pending := f.due.Load() - arrived
		if pending == 0 || pending+n <= f.bound {
			break
		}
		if stop.Load() || ctx.Err() != nil {
			return false
		}
		if arrived != last {
			last, since = arrived, time.Now()
		} else if time.Since(since) >= f.stallAfter {
			f.stalls.Add(1)
			break
		}
		time.Sleep(100 * time.Microsecond)
	}
	pending := f.due.Add(n) - f.arrived.Load()
	for p := f.peak.Load(); pending > p && !f.peak.CompareAndSwap(p, pending); p = f.peak.Load() {
	}
	return true
}

// delivered counts one distinct delivery.
func (f *inFlight) delivered() {
	if f != nil {
		f.arrived.Add(1)
	}
}

// stallCount is how many times a publisher went on after StallAfter, and
// peakPending the most deliveries pending after an admission.
func (f *inFlight) counts() (stalls, peakPending int64) {
	if f == nil {
		return 0, 0
	}
	return f.stalls.Load(), f.peak.Load()
}
