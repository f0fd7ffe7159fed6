package driver

import (
	"context"

	"pslab/internal/record"
)

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

// Held is what the broker still holds for a case (record.Held: the
// record's accounting.held block).
type Held = record.Held
