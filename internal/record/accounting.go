package record

// Accounting is how the deliveries still due at the end of the drain were
// told apart (backlog, in flight, lost), how the drain ended, and whether
// the warm-up reached a steady state.
type Accounting struct {
	// Held is what the broker said it still held (nil when it could not
	// be asked; then Lost may include backlog and HeldError says why).
	Held      *Held  `json:"held,omitempty"`
	HeldError string `json:"held_error,omitempty"`
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
	// messages sent in it (replication included); above the load engine's bound (1.10) the
	// window was delivering an earlier backlog.
	SubOverPub float64 `json:"sub_over_pub"`
	// SubExceedsPub: SubOverPub above the bound.
	SubExceedsPub bool `json:"sub_exceeds_pub,omitempty"`

	WarmupS float64 `json:"-"` // copied to Result.WarmupS
}

// Drain reasons.
const (
	DrainComplete  = "complete"  // every due delivery arrived
	DrainStalled   = "stalled"   // nothing arrived for the stall bound
	DrainBound     = "bound"     // the drain's upper bound ran out
	DrainCancelled = "cancelled" // the run was interrupted
)

// Drain is how the drain went.
type Drain struct {
	S      float64 `json:"s"`       // from the window's end (publishers' flush included)
	Ended  string  `json:"ended"`   // DrainComplete, DrainStalled, DrainBound, DrainCancelled
	StallS float64 `json:"stall_s"` // the no-progress bound when it ended
	BoundS float64 `json:"bound_s"` // the upper bound
	// FlushS is how long after the window's end every publisher's sends
	// were confirmed by the broker (or the flush was cut); FlushCut says
	// the drain's upper bound cut a flush: sends the broker never
	// confirmed may then be counted as lost.
	FlushS   float64 `json:"flush_s"`
	FlushCut bool    `json:"flush_cut,omitempty"`

	late LateKeys // drainLate keys the record it was read from lacked
}

// drainLate are Drain's keys younger than the first committed records.
var drainLate = []string{"flush_s"}

// UnmarshalJSON reads d and notes which late keys the JSON lacked.
func (d *Drain) UnmarshalJSON(data []byte) error {
	type plain Drain
	return UnmarshalLate(data, (*plain)(d), &d.late, drainLate...)
}

// MarshalJSON writes d, leaving out the late keys its JSON lacked.
func (d Drain) MarshalJSON() ([]byte, error) {
	type plain Drain
	return MarshalLate(plain(d), d.late, drainLate...)
}

// Steady is how the warm-up ended.
type Steady struct {
	Levelled bool `json:"levelled"`
	// SpanS is the span the rates were counted over; RateBefore and
	// RateAfter are the delivery rates (msgs/s) of the last two spans of the
	// warm-up.
	SpanS      float64 `json:"span_s"`
	RateBefore float64 `json:"rate_before"`
	RateAfter  float64 `json:"rate_after"`
	// Why says why the rate was not checked, or did not level off.
	Why string `json:"why,omitempty"`
}

// Held is what the broker still holds for a case's subscriptions when its
// drain ends, by the broker's own count, and what the client library holds
// or discarded.
type Held struct {
	// Backlog counts messages queued at the broker for the case's
	// subscriptions, not yet acknowledged (JetStream: the consumers'
	// NumPending + NumAckPending; Artemis: the queues' messageCount, which
	// includes the messages being delivered). Messages a subscriber has
	// received but not yet acknowledged are in it too; the load engine
	// bounds the backlog by what is still due.
	Backlog int64 `json:"backlog"`
	// Delivering is the part of Backlog handed to a consumer but not yet
	// acknowledged (JetStream NumAckPending, Artemis deliveringCount).
	Delivering int64 `json:"delivering,omitempty"`
	// InSockets is the part of Backlog that had left the broker's own
	// buffers and was in the kernels' socket buffers or on the link (core
	// NATS; a lower bound, see Source).
	InSockets int64 `json:"in_sockets,omitempty"`
	// Queued and Parsed are the two counts a core NATS backlog is the
	// difference of, over the case's subscriber connections with a known
	// client: what the server queued for them (connz out_msgs) and what
	// their clients parsed (nats.go InMsgs). Expected deliveries beyond
	// Queued never left the server; Parsed beyond the deliveries received
	// were in the client.
	Queued int64 `json:"queued,omitempty"`
	Parsed int64 `json:"parsed,omitempty"`
	// ClosedByServer counts the case's subscribers whose newest connection
	// the broker had closed (core NATS: connz state=closed, by reason in
	// ClosedReasons) while their clients had not connected again, mostly
	// because they had not noticed yet behind a stalled link. What it had
	// queued for them and they had not parsed is held nowhere: lost.
	// Their counts are in Queued and Parsed.
	ClosedByServer int            `json:"closed_by_server,omitempty"`
	ClosedReasons  map[string]int `json:"closed_reasons,omitempty"`
	// ReplacedReasons counts, by the broker's reason, the case's subscriber
	// connections it had closed and their clients had since replaced by a
	// new one (core NATS: older connz state=closed entries of a subscriber):
	// the broker's side of the client outages a record counts, e.g. "Slow
	// Consumer (Pending Bytes)" where the client only saw EOF. What it had
	// queued for them and they had not read went with them.
	ReplacedReasons map[string]int `json:"replaced_reasons,omitempty"`
	// Routed counts what the broker put on the case's subscription queues
	// since they were made, one per message and queue, delivered since or
	// not (Artemis messagesAdded); nil when the broker cannot say. Read
	// after the backlog of each queue, so that a message routed between
	// the two counts is in Routed, not in Backlog. Deliveries due beyond
	// Routed are for sends the broker had not received, if every queue
	// lived through the case.
	Routed *int64 `json:"routed,omitempty"`
	// Source says how the broker was asked.
	Source string `json:"source"`
}
