package nats

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// natsPublisher publishes on one connection, core or JetStream.
//
// Across a lost connection (nats.go reconnects by itself, see natsConnect):
// the connection has no reconnect buffer (ReconnectBufSize -1), so nats.go
// replays nothing (Resent stays 0) and a publish while it reconnects fails
// at once; Publish then waits until the connection is back and sends that
// message on the new connection. Sends already handed to the old connection
// and not yet confirmed are counted in InDoubt:
//   - core: sends after the last PONG that came back on the same
//     connection (exact up to a reconnect that completes inside one
//     nc.Publish call);
//   - JetStream: PubAcks the library abandoned with ErrDisconnected when it
//     noticed the loss (an upper bound: a publish on the new connection made
//     before the library processed the loss is abandoned too), and PubAcks
//     that came back with an error. Publishes the library retries itself
//     after a "no responders" status are not duplicates (the stream did not
//     take them).
//
// Nothing here times out on a live connection: a PubAck or PONG that has
// not come yet is still on its way (over a congested 1 Mbit/s link, TCP's
// back-off can hold one for minutes), and a publisher that gave up on it
// would stop sending and leave its sends unflushed. Waits end with the
// caller's context (the load engine bounds the flush by the drain's bound
// and records a cut) or with a lost connection, which nats.go notices by
// itself (its pings).
type natsPublisher struct {
	nc       *nats.Conn
	watch    *natsWatch
	js       jetstream.JetStream // nil: core publish
	subjects [][]string          // by topic (index 0 unless round robin), then value ([0] without one)
	allTopic bool                // round robin: Message.Topic indexes subjects
	window   int
	pending  []jetstream.PubAckFuture // JetStream: outstanding PubAcks, oldest first
	// core flow control: a PING/PONG round trip is started every
	// window/flushesInFlight sends and up to flushesInFlight of them are
	// in flight (oldest first), so at most `window` sends are unconfirmed
	// by a PONG and the publisher waits only when the oldest is not back.
	sinceFlush int
	flushes    []*flushOp
	// core confirmation, per connection: gen is the watch's count of
	// sockets dialed (natsWatch.conns) when the sends were handed over;
	// handed of them were, confirmed of those are covered by a PONG of the
	// same connection.
	gen       uint64
	handed    uint64
	confirmed uint64
	// JetStream: sends handed to connection jsGen (natsWatch.conns).
	jsGen, jsHanded uint64
	ep              driver.Endpoint // the server's monitoring endpoint: Unreceived
}

// flushOp is one PING/PONG round trip in flight; done is closed when it
// ends. On success it confirms the first upTo sends of connection gen.
type flushOp struct {
	done   chan struct{}
	err    error
	gen    uint64
	upTo   uint64
	cancel context.CancelFunc
}

// errConnLost reports a PONG that came back on a newer connection than its
// PING was meant for: it confirms nothing of the old one.
var errConnLost = errors.New("connection lost during flush")

// Publisher implements Driver.
func (d *Driver) Publisher(ctx context.Context, s driver.PubSpec) (driver.Publisher, error) {
	window := s.Window
	if window <= 0 {
		window = driver.UnshapedWindowOf(d, s.Case.Factors, 1)
	}
	// pslab makes its subjects itself (natsSubjectFor, from sanitized
	// names), so nats.go's check of every subject on every publish (3 % of
	// the client's CPU on loopback) is skipped.
	opts := []nats.Option{nats.ReconnectBufSize(-1), nats.SkipSubjectValidation()}
	if window == driver.TCPBoundedWindow {
		opts = append(opts, nats.WriteBufferSize(tcpBoundedWriteBuffer(s.Case.Factors.Publishers)))
	}
	w := &natsWatch{}
	if err := d.watchTLS(w, s.Case); err != nil {
		return nil, err
	}
	nc, err := natsConnect(ctx, d.ep, fmt.Sprintf("pslab-pub-%s-%d", natsRoot(s.Case.Prefix), s.ID), w, opts...)
	if err != nil {
		return nil, err
	}
	p := &natsPublisher{nc: nc, watch: w, ep: d.ep, window: window, subjects: natsPubSubjects(s),
		allTopic: s.Case.Factors.TopicRoundRobin, gen: w.conns()}
	if s.Case.Factors.Delivery == scenario.Persistent {
		// All publishers of a case feed one stream, whose ingest queue
		// nats-server bounds (100 000 messages by default; beyond it
		// publishes are refused with 429). Share a budget below that.
		p.window = min(p.window, max(1, jsIngestBudget/max(s.Case.Factors.Publishers, 1)))
		// The window is enforced here; the library's own cap is set above
		// it so that it never stalls and errors first. No PubAck timeout
		// (the library's default): see natsPublisher.
		p.js, err = jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(p.window+1))
		if err != nil {
			nc.Close()
			return nil, err
		}
	}
	return p, nil
}

// ConnStats implements ConnReporter.
func (p *natsPublisher) ConnStats() driver.ConnStats { return p.watch.log.Stats() }

// natsPubSubjects lists a publisher's subjects by topic and value.
func natsPubSubjects(s driver.PubSpec) [][]string {
	f := s.Case.Factors
	topics := []int{s.Topic}
	if f.TopicRoundRobin {
		topics = make([]int, f.Topics)
		for t := range topics {
			topics[t] = t
		}
	}
	out := make([][]string, len(topics))
	for i, t := range topics {
		n := f.MessageValues()
		out[i] = make([]string, n)
		for v := range out[i] {
			val := v
			if n == 1 && !f.Filtered() {
				val = -1
			}
			out[i][v] = natsSubjectFor(s.Case.Prefix, f, t, val)
		}
	}
	return out
}

func (p *natsPublisher) Publish(ctx context.Context, m driver.Message) error {
	ti := 0
	if p.allTopic {
		ti = m.Topic
	}
	subj := p.subjects[ti][max(m.Sel, 0)]
	if p.js != nil {
		return p.publishJS(ctx, subj, m.Body)
	}
	return p.publishCore(ctx, subj, m.Body)
}

func (p *natsPublisher) publishJS(ctx context.Context, subj string, body []byte) error {
	for len(p.pending) >= p.window {
		if err := p.awaitOldest(ctx); err != nil {
			return err
		}
	}
	for {
		gen := p.watch.conns()
		f, err := p.js.PublishAsync(subj, body)
		if err == nil {
			p.pending = append(p.pending, f)
			if gen != p.jsGen {
				p.jsGen, p.jsHanded = gen, 0
			}
			p.jsHanded++
			return nil
		}
		if !errors.Is(err, nats.ErrReconnectBufExceeded) {
			return err
		}
		if err := p.awaitConnected(ctx); err != nil { // not handed over: send it again
			return err
		}
	}
}

func (p *natsPublisher) publishCore(ctx context.Context, subj string, body []byte) error {
	for {
		// Flow control first, so that an error means this message was not sent.
		if p.sinceFlush >= max(p.window/flushesInFlight, 1) {
			if len(p.flushes) >= flushesInFlight {
				if err := p.waitOldest(ctx); err != nil {
					return err
				}
			}
			if err := p.awaitConnected(ctx); err != nil {
				return err
			}
			p.startFlush(ctx)
			p.sinceFlush = 0
		}
		p.sync()
		err := p.nc.Publish(subj, body)
		if err == nil {
			p.handed++
			p.sinceFlush++
			return nil
		}
		if !errors.Is(err, nats.ErrReconnectBufExceeded) {
			return err
		}
		if err := p.awaitConnected(ctx); err != nil { // not handed over: send it again
			return err
		}
	}
}

// sync notices a reconnect since the last send: what the old connection
// had not confirmed is in doubt.
func (p *natsPublisher) sync() {
	if g := p.watch.conns(); g != p.gen {
		p.watch.log.AddInDoubt(int64(p.handed - p.confirmed))
		p.gen, p.handed, p.confirmed = g, 0, 0
		for _, op := range p.flushes { // their PONGs can confirm nothing now
			op.cancel()
		}
		p.flushes = nil
	}
}

// startFlush starts a PING/PONG round trip covering every send so far.
func (p *natsPublisher) startFlush(ctx context.Context) {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), roundTripBackstop)
	op := &flushOp{done: make(chan struct{}), gen: p.gen, upTo: p.handed, cancel: cancel}
	p.flushes = append(p.flushes, op)
	go func() {
		defer cancel()
		op.err = p.nc.FlushWithContext(fctx)
		if op.err == nil && p.watch.conns() != op.gen {
			op.err = errConnLost
		}
		close(op.done)
	}()
	// Let the flush send its PING now, behind the sends it covers: with
	// one P (the clients on one core, GOMAXPROCS 1) it would otherwise
	// wait until the publisher blocks at the end of the window, and every
	// round trip would start only when the pipe is full (stop-and-wait).
	runtime.Gosched()
}

// wait blocks until every flush in flight ends.
func (p *natsPublisher) wait(ctx context.Context) error {
	for len(p.flushes) > 0 {
		if err := p.waitOldest(ctx); err != nil {
			return err
		}
	}
	return nil
}

// waitOldest blocks until the oldest flush in flight ends. A flush that
// failed because the connection was lost is not an error: sync counts what
// it did not confirm as in doubt.
func (p *natsPublisher) waitOldest(ctx context.Context) error {
	op := p.flushes[0]
	select {
	case <-op.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	p.flushes = p.flushes[1:]
	if op.err == nil {
		if op.gen == p.gen {
			p.confirmed = max(p.confirmed, op.upTo)
		}
		return nil
	}
	if p.lostConn(op.err) {
		return nil
	}
	return fmt.Errorf("flow control flush: %w", op.err)
}

// lostConn tells whether err came from a lost connection that nats.go is
// re-establishing (rather than from a closed client or a timeout).
func (p *natsPublisher) lostConn(err error) bool {
	if p.nc.IsClosed() {
		return false
	}
	return errors.Is(err, errConnLost) || errors.Is(err, nats.ErrConnectionClosed) ||
		p.nc.Status() != nats.CONNECTED
}

// awaitConnected blocks while nats.go reconnects.
func (p *natsPublisher) awaitConnected(ctx context.Context) error {
	for {
		switch p.nc.Status() {
		case nats.CONNECTED:
			return nil
		case nats.CLOSED:
			return nats.ErrConnectionClosed
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// tcpBoundedWriteBuffer is the write buffer of each of pubs publishers
// bounded by TCP backpressure only (TCPBoundedWindow, an unshaped path):
// nats.go writes its buffer to the socket when it is full, and at the
// default 32 KB (about 230 messages of 100 B) the write system calls were
// a sixth of the load client's CPU on loopback. 1 MB cut the client's CPU
// per message by about 13 % (results/nats-bench); the case's publishers
// share 64 MB at most, and never less than nats.go's default each.
func tcpBoundedWriteBuffer(pubs int) int {
	return min(max(64<<20/max(pubs, 1), nats.DefaultWriteBufSize), 1<<20)
}

// jsIngestBudget is the total of outstanding JetStream publishes of all
// publishers of a case: half of nats-server's default stream ingest queue.
const jsIngestBudget = 50_000

// flushesInFlight is how many PING/PONG round trips a core publisher keeps
// in flight: a new one every window/flushesInFlight sends, so the window
// is a pipe that never drains while the broker keeps up, not a stop-and-wait
// round trip every half window (which halved the loopback throughput).
const flushesInFlight = 4

// flushTimeout bounds one PING/PONG round trip outside a measurement
// (subscriptions registered before the publishers start): generous, since
// a window of large messages over a 1 Mbit/s link takes seconds to drain.
const flushTimeout = 2 * time.Minute

// flushWithin flushes nc within flushTimeout or until ctx ends.
func flushWithin(ctx context.Context, nc *nats.Conn) error {
	return flushFor(ctx, nc, flushTimeout)
}

// roundTripBackstop is the deadline nats.go requires of a publisher's
// PING/PONG round trip (FlushWithContext refuses a context without one).
// It is not meant to end a wait: the caller's context does (the drain's
// bound), or nats.go's own stale-connection check (two missed pings, a few
// minutes) ends the connection first.
const roundTripBackstop = time.Hour

// flushFor flushes nc within d or until ctx ends.
func flushFor(ctx context.Context, nc *nats.Conn, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return nc.FlushWithContext(ctx)
}

// awaitOldest waits for the oldest outstanding PubAck. A send whose PubAck
// failed is counted in doubt: the library abandoned it because the
// connection was lost (not an error: the publisher goes on), or the stream
// answered with an error (returned).
func (p *natsPublisher) awaitOldest(ctx context.Context) error {
	f := p.pending[0]
	select {
	case <-f.Ok():
	case err := <-f.Err():
		p.pending = p.pending[1:]
		p.watch.log.AddInDoubt(1)
		if !errors.Is(err, nats.ErrDisconnected) {
			return fmt.Errorf("publish not acknowledged: %w", err)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	p.pending = p.pending[1:]
	return nil
}

// awaitAll waits for every outstanding PubAck, also after one failed (each
// failure is in doubt); it returns the first failure, or the context's
// error at once.
func (p *natsPublisher) awaitAll(ctx context.Context) error {
	var first error
	for len(p.pending) > 0 {
		if err := p.awaitOldest(ctx); err != nil {
			if ctx.Err() != nil {
				return err
			}
			first = cmp.Or(first, err)
		}
	}
	return first
}

// CopiesBody implements BodyCopier: a core publish copies the body into the
// connection's buffer before it returns; JetStream keeps it for retries.
func (p *natsPublisher) CopiesBody() bool { return p.js == nil }

// Flush implements Publisher. After a lost connection it returns once the
// new connection confirms everything sent on it; what the old one had not
// confirmed is in doubt, not waited for.
func (p *natsPublisher) Flush(ctx context.Context) error {
	if p.js != nil {
		return p.awaitAll(ctx)
	}
	if err := p.wait(ctx); err != nil {
		return err
	}
	for {
		if err := p.awaitConnected(ctx); err != nil {
			return err
		}
		p.sync()
		if p.handed == p.confirmed {
			return nil
		}
		gen, upTo := p.gen, p.handed
		err := flushFor(ctx, p.nc, roundTripBackstop)
		if err == nil && p.watch.conns() == gen {
			p.confirmed = upTo
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil && !p.lostConn(err) {
			return err
		}
		// lost meanwhile: the next round counts it and flushes the new one
	}
}

// Unreceived implements UnreceivedReporter: the sends handed to the
// current connection less the messages the server has received on it
// (connz in_msgs of the connection's cid). Sends on an earlier
// connection are in doubt, not here. A publish the library sent twice
// (after a "no responders" status) counts twice at the server, so this
// never counts too many.
func (p *natsPublisher) Unreceived(ctx context.Context) (int64, error) {
	if p.ep.MonitorURL == "" {
		return 0, errors.New("no monitoring endpoint")
	}
	handed := p.jsHanded
	if p.js == nil {
		p.sync()
		handed = p.handed
	} else if p.jsGen != p.watch.conns() {
		handed = 0 // nothing handed to the new connection yet
	}
	cid, err := p.nc.GetClientID()
	if err != nil {
		return 0, err
	}
	conns, err := connz(ctx, p.ep, "cid", strconv.FormatUint(cid, 10))
	if err != nil {
		return 0, err
	}
	if len(conns) != 1 {
		return 0, fmt.Errorf("connz has no connection %d", cid)
	}
	return max(int64(handed)-conns[0].InMsgs, 0), nil
}

// Abort implements Aborter.
func (p *natsPublisher) Abort() {
	p.stopFlushing()
	p.watch.abort(p.nc)
}

func (p *natsPublisher) Close() error {
	p.stopFlushing()
	p.nc.Close()
	return nil
}

// stopFlushing marks the publisher closing and ends its flush in flight.
func (p *natsPublisher) stopFlushing() {
	p.watch.closing.Store(true)
	for _, op := range p.flushes {
		op.cancel()
		<-op.done
	}
	p.flushes = nil
}
