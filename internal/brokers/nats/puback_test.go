package nats

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stubFuture is a PubAck that has come (ok), failed (err) or is still on
// its way (neither).
type stubFuture struct {
	ok  chan *jetstream.PubAck
	err chan error
}

func newStubFuture(err error, acked bool) stubFuture {
	f := stubFuture{ok: make(chan *jetstream.PubAck, 1), err: make(chan error, 1)}
	switch {
	case err != nil:
		f.err <- err
	case acked:
		f.ok <- &jetstream.PubAck{}
	}
	return f
}

func (f stubFuture) Ok() <-chan *jetstream.PubAck { return f.ok }
func (f stubFuture) Err() <-chan error            { return f.err }
func (f stubFuture) Msg() *nats.Msg               { return nil }

// stubJetStream only marks a publisher as a JetStream one.
type stubJetStream struct{ jetstream.JetStream }

// TestJetStreamFlushAwaitsEveryPubAck: a failed PubAck neither ends the
// flush nor is forgotten. Each failure counts in doubt (the stream may or
// may not hold the message); the flush waits for the PubAcks behind it and
// returns the first failure that was not a lost connection. Before, the
// flush returned at the first failure and left the sends behind it
// uncounted, and they counted as lost.
func TestJetStreamFlushAwaitsEveryPubAck(t *testing.T) {
	refused := errors.New("nats: maximum messages exceeded")
	p := &natsPublisher{watch: &natsWatch{}, js: stubJetStream{}}
	for _, f := range []stubFuture{
		newStubFuture(nil, true),
		newStubFuture(nats.ErrDisconnected, false),
		newStubFuture(refused, false),
		newStubFuture(nil, true),
		newStubFuture(refused, false),
		newStubFuture(nil, true),
	} {
		p.pending = append(p.pending, f)
	}
	err := p.Flush(context.Background())
	require.ErrorIs(t, err, refused)
	assert.Empty(t, p.pending, "the flush waited for every PubAck")
	assert.Equal(t, int64(3), p.ConnStats().InDoubt, "one abandoned at a lost connection, two refused")
}

// TestJetStreamFlushEndsWithItsContext: a PubAck still on its way is
// waited for until the caller's context ends (the drain's bound), not cut
// by a timeout of the driver's own; it stays outstanding, not in doubt
// (the load engine records the cut flush).
func TestJetStreamFlushEndsWithItsContext(t *testing.T) {
	p := &natsPublisher{watch: &natsWatch{}, js: stubJetStream{}}
	p.pending = append(p.pending, newStubFuture(nil, true), newStubFuture(nil, false))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := p.Flush(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Len(t, p.pending, 1, "the PubAck on its way is still outstanding")
	assert.Zero(t, p.ConnStats().InDoubt)
}
