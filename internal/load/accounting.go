package load

import (
	"sync/atomic"
)

// subOverPubMax is how far a window's deliveries may exceed the deliveries
// due for what its publishers sent in it before the window is flagged: in a
// steady state they are equal, up to the messages in transit at the
// window's two ends.
const subOverPubMax = 1.10

// Split divides the deliveries still due (missing) into in flight (what
// the client libraries hold), backlog (what the broker holds, by its own
// count), to broker (due for sends the broker had not received yet) and
// lost (held nowhere). Each count is bounded by what is left (the
// broker's includes messages received but not yet acknowledged). known is
// false when the broker could not be asked: everything not in flight or
// on its way to the broker then counts as lost, and may include backlog.
func Split(missing, clientPending, brokerHeld, toBroker int64, known bool) (inFlight, backlog, toBrk, lost int64) {
	missing = max(missing, 0)
	inFlight = min(max(clientPending, 0), missing)
	if known {
		backlog = min(max(brokerHeld, 0), missing-inFlight)
	}
	toBrk = min(max(toBroker, 0), missing-inFlight-backlog)
	return inFlight, backlog, toBrk, missing - inFlight - backlog - toBrk
}

// account fills the result's delivery accounting (Counts.Lost, Backlog,
// InFlight, Dropped, DueInWindow), the warm-up and the accounting block.
// Valid once the publishers have stopped.
func (r *run) account(res *Result) {
	cnt := &res.Counts
	a := r.acct
	var held int64
	if a.Held != nil {
		held = a.Held.Backlog
	}
	cnt.InFlight, cnt.Backlog, cnt.ToBroker, cnt.Lost = Split(cnt.Expected-cnt.Received, a.ClientPending, held, r.toBroker, a.Held != nil)
	cnt.Dropped = a.ClientDropped
	for _, s := range r.subs {
		cnt.DueInWindow += r.dueFor(s, func(p *pubState) [][]atomic.Int64 { return p.sentToWindow })
	}
	if cnt.DueInWindow > 0 {
		a.SubOverPub = float64(cnt.ReceivedInWindow) / float64(cnt.DueInWindow)
		a.SubExceedsPub = a.SubOverPub > subOverPubMax
	}
	res.WarmupS = a.WarmupS
	res.Accounting = &a
}

// The counts the accounting is made of, read from the clients' states:
// what the publishers sent, what the subscribers received, and what was
// due to whom (by topic and filtered value). The drain, the faults and
// the publishers read them too.

// sent is every publisher's sends so far.
func (r *run) sent() int64 {
	var n int64
	for _, p := range r.pubs {
		n += p.sent.Load()
	}
	return n
}

// received is every subscriber's distinct deliveries so far.
func (r *run) received() int64 {
	var n int64
	for _, s := range r.subs {
		n += s.distinct.Load()
	}
	return n
}

// expected deliveries: each subscriber is due every message of its topic
// whose selector or filter value it selects. Valid once publishers have
// stopped.
func (r *run) expected() int64 {
	var n int64
	for _, s := range r.subs {
		n += r.expectedFor(s)
	}
	return n
}

// dueFrom is the deliveries due for every message p sent.
func (r *run) dueFrom(p *pubState) int64 {
	var n int64
	for _, s := range r.subs {
		n += s.dueOf(p.sentTo[s.topic])
	}
	return n
}

// expectedFor is the deliveries due to s for every message sent.
func (r *run) expectedFor(s *subState) int64 {
	return r.dueFor(s, func(p *pubState) [][]atomic.Int64 { return p.sentTo })
}

// dueFor counts the deliveries due to s among the messages counted by
// sent (per publisher, topic and filtered value).
func (r *run) dueFor(s *subState, sent func(p *pubState) [][]atomic.Int64) int64 {
	var n int64
	for _, p := range r.pubs {
		n += s.dueOf(sent(p)[s.topic])
	}
	return n
}

// dueOf is the deliveries due to s among messages of its topic counted by
// filtered value.
func (s *subState) dueOf(counts []atomic.Int64) int64 {
	var n int64
	for v := range counts {
		if s.accepts(v) {
			n += counts[v].Load()
		}
	}
	return n
}
