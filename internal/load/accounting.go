package load

import (
	"sync/atomic"

	"pslab/internal/driver"
)

// subOverPubMax is how far a window's deliveries may exceed the deliveries
// due for what its publishers sent in it before the window is flagged: in a
// steady state they are equal, up to the messages in transit at the
// window's two ends.
const subOverPubMax = 1.10

// Accounting is how the deliveries still due at the end of the drain were
// told apart (backlog, in flight, lost), how the drain ended, and whether
// the warm-up reached a steady state.
type Accounting struct {
	// Held is what the broker said it still held (nil when it could not
	// be asked; then Lost may include backlog and HeldError says why).
	Held      *driver.Held `json:"held,omitempty"`
	HeldError string       `json:"held_error,omitempty"`
	// ReceivedAtHeld is the deliveries received when the broker had
	// answered (to compare with Held.Parsed).
	ReceivedAtHeld int64 `json:"received_at_held,omitempty"`
	// ClientPending and ClientDropped are the subscribers' client
	// libraries' own counts (driver.ClientHeldReporter).
	ClientPending int64 `json:"client_pending,omitempty"`
	ClientDropped int64 `json:"client_dropped,omitempty"`
	// ToBrokerSends counts the publishers' sends the broker had not
	// received when the drain ended (driver.UnreceivedReporter; asked
	// only when the drain's bound cut the publishers' flush), and
	// ToBrokerError why some publishers could not say (their sends then
	// count as lost).
	ToBrokerSends int64  `json:"to_broker_sends,omitempty"`
	ToBrokerError string `json:"to_broker_error,omitempty"`
	// ToBrokerUnrouted: the publishers could not say, and the deliveries
	// due for sends on their way to the broker are those due that the
	// broker had not routed to the case's queues (Held.Routed; unrouted).
	// ToBrokerSends is then 0: the broker counts deliveries, not sends.
	// DueInDoubt, the deliveries due for the publishers' sends in doubt,
	// is taken off it: those may never arrive (to broker is then a lower
	// bound).
	ToBrokerUnrouted bool   `json:"to_broker_unrouted,omitempty"`
	DueInDoubt       int64  `json:"due_in_doubt,omitempty"`
	Drain            Drain  `json:"drain"`
	Steady           Steady `json:"steady"`
	// SubOverPub is the window's deliveries over the deliveries due for the
	// messages sent in it (replication included); above subOverPubMax the
	// window was delivering an earlier backlog.
	SubOverPub float64 `json:"sub_over_pub"`
	// SubExceedsPub: SubOverPub > subOverPubMax.
	SubExceedsPub bool `json:"sub_exceeds_pub,omitempty"`

	WarmupS float64 `json:"-"` // copied to Result.WarmupS
}

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
