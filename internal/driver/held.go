package driver

import "context"

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

// HeldReporter is implemented by drivers that can ask the broker what it
// still holds for a case (over their administration connection, from
// beside the broker). Drivers whose case holds nothing (core NATS) report
// zero and say so in Source.
type HeldReporter interface {
	Held(ctx context.Context, c CaseSpec) (Held, error)
}

// ClientHeld is what a subscriber's client library holds or dropped.
type ClientHeld struct {
	// Pending counts messages the client library has received from the
	// broker but not yet handed to the handler (still in flight).
	Pending int64
	// Dropped counts messages the client library discarded because its
	// pending buffer was full (a slow consumer): lost.
	Dropped int64
}

// ClientHeldReporter is implemented by subscribers whose client library
// counts what it holds and what it dropped (nats.go core subscriptions).
type ClientHeldReporter interface {
	ClientHeld() ClientHeld
}
