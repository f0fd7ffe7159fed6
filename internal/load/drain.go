package load

import (
	"context"
	"fmt"
	"strings"
	"time"

	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// Drain bounds. The drain lasts at least the case's drain unless every
// due delivery has arrived; beyond it, it goes on while deliveries keep
// arriving, and ends when none has arrived for the stall bound: the time
// what is still due takes to cross the link (its bytes over the link's
// rate on a shaped link, else its count over the window's delivery rate),
// between minStall and maxStall. minStall is 2 s: on the lossy emulated
// link, TCP's retransmission back-off leaves gaps of a second and more in a
// backlog that is still on its way (a 1 s bound ended a JetStream drain
// with 652 deliveries queued in the smoke run). It never lasts longer than the case's
// drain plus Config.MaxDrain (DefaultMaxDrain).
const (
	minStall        = 2 * time.Second
	maxStall        = 30 * time.Second
	DefaultMaxDrain = 60 * time.Second
	// wireOverhead approximates the protocol bytes of one delivery beyond
	// its body (NATS MSG line or STOMP MESSAGE headers).
	wireOverhead = 100
)

// maxDrain is how far beyond the case's drain the flush and the drain may
// go (Config.MaxDrain, default DefaultMaxDrain).
func (r *run) maxDrain() time.Duration {
	if r.cfg.MaxDrain > 0 {
		return r.cfg.MaxDrain
	}
	return DefaultMaxDrain
}

// drainDeadline is the drain's upper bound, which also bounds the
// publishers' flush: the case's drain plus maxDrain after the window's end.
func (r *run) drainDeadline(windowEnd time.Time) time.Time {
	return windowEnd.Add(r.cfg.Case.Drain + r.maxDrain())
}

// stallBound is how long the drain waits for the next delivery while
// outstanding deliveries are still due.
func (r *run) stallBound(outstanding int64) time.Duration {
	c := r.cfg.Case
	var est time.Duration
	if bits := r.cfg.LinkBitsPerSec; bits > 0 {
		est = time.Duration(float64(outstanding) * float64(c.Size+wireOverhead) * 8 / bits * float64(time.Second))
	} else if rate := r.windowDeliveryRate(); rate > 0 {
		est = time.Duration(float64(outstanding) / rate * float64(time.Second))
	}
	return min(max(est, minStall), maxStall)
}

// windowDeliveryRate is the deliveries per second received in the window.
func (r *run) windowDeliveryRate() float64 {
	var n int64
	for _, s := range r.subs {
		s.mu.Lock()
		n += s.inWindow
		s.mu.Unlock()
	}
	return float64(n) / r.cfg.Case.Window.Seconds()
}

// drain waits for the expected deliveries (see the bounds above), then
// asks the driver and the subscribers what they still hold. It reports
// whether every expected delivery arrived.
func (r *run) drain(ctx context.Context, start, windowEnd time.Time, expected int64) bool {
	c := r.cfg.Case
	d := &r.acct.Drain
	deadline := r.drainDeadline(windowEnd)
	d.BoundS = deadline.Sub(windowEnd).Seconds()
	last := expected - r.received()
	lastProgress := time.Now()
	stall := r.stallBound(last)
	done := func() bool {
		out := expected - r.received()
		if out <= 0 {
			d.Ended = DrainComplete
			return true
		}
		t := time.Now()
		if out < last {
			last, lastProgress, stall = out, t, r.stallBound(out)
		}
		if t.Sub(windowEnd) >= c.Drain && t.Sub(lastProgress) >= stall {
			d.Ended = DrainStalled
			return true
		}
		return false
	}
	r.waitUntil(ctx, deadline, start, done)
	switch {
	case d.Ended != "":
	case ctx.Err() != nil:
		d.Ended = DrainCancelled
	default:
		d.Ended = DrainBound
	}
	d.S, d.StallS = time.Since(windowEnd).Seconds(), stall.Seconds()
	if ctx.Err() != nil {
		// Interrupted: the run ends now, and its record is marked
		// interrupted; nothing is asked of the broker.
		r.acct.HeldError = "not asked: the run was interrupted"
	} else {
		r.askHeld(ctx)
	}
	return d.Ended == DrainComplete
}

// heldTimeout bounds the question to the broker of what it holds.
const heldTimeout = 30 * time.Second

// askHeld records what the broker (driver.HeldReporter) and the
// subscribers' client libraries (driver.ClientHeldReporter) still hold.
func (r *run) askHeld(ctx context.Context) {
	a := &r.acct
	if hr, ok := r.cfg.Driver.(driver.HeldReporter); ok {
		hctx, cancel := context.WithTimeout(ctx, heldTimeout)
		h, err := hr.Held(hctx, r.cs)
		cancel()
		if err != nil {
			a.HeldError = fmt.Sprintf("asking %s what it holds: %v", r.cfg.Driver.Name(), err)
		} else {
			a.Held = &h
			a.ReceivedAtHeld = r.received()
		}
	} else {
		a.HeldError = r.cfg.Driver.Name() + " cannot say what the broker holds"
	}
	for _, s := range r.subs {
		if ch, ok := s.current().(driver.ClientHeldReporter); ok {
			h := ch.ClientHeld()
			a.ClientPending += h.Pending
			a.ClientDropped += h.Dropped
		}
	}
	if a.Drain.FlushCut {
		// After the broker's count: a send that reaches the broker in
		// between is then counted in neither (lost), never in both.
		r.askUnreceived(ctx)
	}
}

// askUnreceived records the sends the broker had not received yet, of
// publishers whose flush the drain's bound cut, and the deliveries due
// for them (r.toBroker): each publisher's unreceived sends times its
// deliveries due per send, rounded down.
func (r *run) askUnreceived(ctx context.Context) {
	a := &r.acct
	for _, p := range r.pubs {
		if _, ok := p.conn.(driver.UnreceivedReporter); !ok {
			a.DueInDoubt = r.dueInDoubt()
			r.toBroker, a.ToBrokerError = unrouted(r.expected(), a.Held, r.queuesBroken(), a.DueInDoubt)
			a.ToBrokerUnrouted = a.ToBrokerError == ""
			return
		}
	}
	var why []string
	for _, p := range r.pubs {
		ur := p.conn.(driver.UnreceivedReporter)
		hctx, cancel := context.WithTimeout(ctx, heldTimeout)
		n, err := ur.Unreceived(hctx)
		cancel()
		if err != nil {
			why = append(why, fmt.Sprintf("publisher %d: %v", p.id, err))
			continue
		}
		a.ToBrokerSends += n
		if sent := p.sent.Load(); sent > 0 && n > 0 {
			r.toBroker += n * r.dueFrom(p) / sent
		}
	}
	if len(why) > 0 {
		a.ToBrokerError = strings.Join(why[:min(len(why), 3)], "; ")
		if len(why) > 3 {
			a.ToBrokerError += fmt.Sprintf("; and %d more", len(why)-3)
		}
	}
}

// unrouted is the deliveries due (expected) that the broker had not put on
// the case's subscription queues (held.Routed), for publishers that cannot
// say what the broker received (STOMP): due for sends still on their way
// to it, or for sends in doubt (unconfirmed when a publisher's connection
// was lost), which may never arrive. So the deliveries due for the sends
// in doubt (inDoubt) are taken off: what is left is on its way, at least.
// That needs every queue to have lived since the case's first send, so
// broken (what breaks it, from queuesBroken) refuses it, and so does a
// broker that routed more than was due. why says why there is no count.
func unrouted(expected int64, held *driver.Held, broken string, inDoubt int64) (toBroker int64, why string) {
	switch {
	case held == nil || held.Routed == nil:
		return 0, "the publishers cannot say what the broker has not received, nor the broker what it routed"
	case broken != "":
		return 0, "the broker's routed count cannot tell sends on their way: " + broken
	case *held.Routed > expected:
		return 0, fmt.Sprintf("the broker routed %d deliveries, more than the %d due: its queues are not the case's alone", *held.Routed, expected)
	}
	return max(expected-*held.Routed-inDoubt, 0), ""
}

// queuesBroken says why the broker's routed count of a case's queues would
// not tell the sends still on their way to it: the broker was restarted
// (its counts begin again), a fault disconnected subscribers, or a
// non-durable subscriber's connection was lost (its queue is made anew,
// without what the old one had routed). A durable subscription's queue
// outlives its connection. Empty when none happened.
func (r *run) queuesBroken() string {
	for _, f := range r.cfg.Case.Faults {
		if f.Kind == scenario.BrokerRestart || f.Kind == scenario.SubscriberDisconnect {
			return "the case's faults include " + string(f.Kind)
		}
	}
	if r.cfg.Case.Subscription == scenario.Durable {
		return ""
	}
	n := 0
	for _, st := range r.subConnStats() {
		n += len(st.Outages)
	}
	if n > 0 {
		return fmt.Sprintf("%d non-durable subscriber connection(s) were lost (their queues were made anew)", n)
	}
	return ""
}

// dueInDoubt is the deliveries due for the publishers' sends in doubt,
// rounded up: the broker may have routed them or not.
func (r *run) dueInDoubt() int64 {
	var n int64
	for _, p := range r.pubs {
		cr, ok := p.conn.(driver.ConnReporter)
		if !ok {
			continue
		}
		if d, sent := cr.ConnStats().InDoubt, p.sent.Load(); d > 0 && sent > 0 {
			n += (d*r.dueFrom(p) + sent - 1) / sent
		}
	}
	return n
}
