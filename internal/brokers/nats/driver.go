package nats

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// Driver drives NATS core and JetStream (nats.go). Mapping (DESIGN.md):
// non-durable + non-persistent + auto ack is a core subscription; everything
// else goes through a JetStream stream per case (file storage when
// persistent, memory when not) with a durable consumer per durable
// subscriber or an ephemeral consumer otherwise.
type Driver struct {
	ep    driver.Endpoint
	admin *nats.Conn
	js    jetstream.JetStream
	// corePendingMsgs, when positive, is the pending limit (messages) of
	// each core subscription; beyond it nats.go drops (a slow consumer).
	// 0 keeps the library's default (512 Ki messages, 64 MiB).
	corePendingMsgs int
	// live names the JetStream consumers its open subscribers consume
	// (Held counts an ephemeral consumer only while its subscriber is
	// there: one left by a subscriber that went away is no backlog).
	live liveConsumers
	// core finds the open core subscribers by connection name (Held).
	core coreSubscribers
}

// NewDriver connects the driver's admin connection to ep.
func NewDriver(ctx context.Context, ep driver.Endpoint) (*Driver, error) {
	nc, err := natsConnect(ctx, ep.Admin(), "pslab-admin", nil)
	if err != nil {
		return nil, err
	}
	// Admin requests (stream create/delete) wait longer than the library's
	// 5 s: after a case with hundreds of consumers JetStream is busy for a
	// while, and a failed purge would fail every case after it.
	js, err := jetstream.New(nc, jetstream.WithDefaultTimeout(adminTimeout))
	if err != nil {
		nc.Close()
		return nil, err
	}
	return &Driver{ep: ep, admin: nc, js: js}, nil
}

// Name implements Driver.
func (d *Driver) Name() string { return Name }

// Supports implements Driver: every factor combination of Gaddah & Kunz
// has a NATS mapping; of the filter kinds only subject filters do.
func (d *Driver) Supports(f scenario.Factors) error {
	if f.Ack == scenario.AckExactlyOnce {
		return fmt.Errorf("nats: ack %s (MQTT QoS 2) has no NATS expression: JetStream acknowledges at least once (its publish deduplication is by message id, not a delivery handshake): %w", f.Ack, driver.ErrUnsupported)
	}
	if why := FilterRefusals.Check(f); why != "" {
		return fmt.Errorf("nats: %s: %w", why, driver.ErrUnsupported)
	}
	return nil
}

// FilterMechanism implements FilterMechanism.
func (d *Driver) FilterMechanism(f scenario.Factors) string { return natsFilterMechanism(f) }

// usesCore tells whether a case runs on core NATS (no JetStream).
func usesCore(f scenario.Factors) bool {
	return f.Subscription == scenario.NonDurable && f.Delivery == scenario.NonPersistent && f.Ack == scenario.AckAuto
}

// TCPBounded implements TCPBounder: core NATS forwards or drops, it holds
// no publisher backlog a window would protect.
func (d *Driver) TCPBounded(f scenario.Factors) bool { return usesCore(f) }

// Mechanism implements Driver.
func (d *Driver) Mechanism(f scenario.Factors) string {
	var parts []string
	if usesCore(f) {
		parts = append(parts, "core NATS subscription (at-most-once, no broker acks; AUTO ack has nothing to acknowledge)",
			"core publish, flow control by PING/PONG flush (the window is publish_window; on an unshaped path 100000 messages, which TCP backpressure binds first, as nats-bench: a subscriber slower than the publishers makes the server drop its messages, counted as lost)")
	} else {
		storage := "memory"
		if f.Delivery == scenario.Persistent {
			storage = "file"
		}
		parts = append(parts, fmt.Sprintf("JetStream stream per case, %s storage", storage))
		if f.Subscription == scenario.Durable {
			parts = append(parts, "durable pull consumer per subscriber")
		} else {
			parts = append(parts, "ephemeral pull consumer per subscriber")
		}
		parts = append(parts, fmt.Sprintf("pulled in batches of delivery_window messages (%d when absent), redelivered when not acknowledged within ack_wait_s (%.0f s when absent)", defaultPullBatch, defaultAckWait.Seconds()))
		if f.Delivery == scenario.Persistent {
			parts = append(parts, "JetStream publish waiting for PubAck (window of outstanding acks, at most 50000 over all publishers)")
		} else {
			parts = append(parts, "core publish into the stream (no PubAck), flow control by PING/PONG flush")
		}
		switch f.Ack {
		case scenario.AckAuto:
			parts = append(parts, "AckExplicit, ack each message")
		case scenario.AckDupsOK:
			parts = append(parts, "AckAll, lazy: ack every ack_every messages or ack_interval")
		case scenario.AckClient:
			parts = append(parts, "AckAll at application points: every ack_every messages and at the end")
		}
	}
	if f.Selector {
		parts = append(parts, fmt.Sprintf(selectorAsSubject+" per value: subscriber takes %d subjects", scenario.SelectorSpan))
	}
	if f.Filtered() {
		parts = append(parts, natsFilterMechanism(f))
	}
	if f.TopicRoundRobin {
		parts = append(parts, "each publisher sends to every topic's subject in turn")
	}
	if f.TLS {
		parts = append(parts, tlsMechanism)
	}
	return strings.Join(parts, "; ")
}

func streamName(prefix string) string { return prefix }

// adminTimeout bounds one JetStream admin request.
const adminTimeout = time.Minute

// natsRoot is the first token of a case's subjects: its prefix
// (pslab-<run>-c<case>-r<rep>, about 20 characters) hashed to "p" and 7
// base-36 digits. The subject travels with every message, twice (PUB and
// MSG): the readable prefix made pslab's 100 B messages a sixth longer on
// the wire than nats-bench's and cost as much client CPU as all of pslab's
// accounting (results/nats-bench). The stream keeps the readable prefix as
// its name; two case runs share a root with odds of one in 36^7.
func natsRoot(prefix string) string {
	h := fnv.New64a()
	h.Write([]byte(prefix))
	const space = 36 * 36 * 36 * 36 * 36 * 36 * 36
	return fmt.Sprintf("p%07s", strconv.FormatUint(h.Sum64()%space, 36))
}

// subject of a topic, and of a selector value within it.
func subject(prefix string, topic, sel int) string {
	if sel < 0 {
		return fmt.Sprintf("%s.t%d", natsRoot(prefix), topic)
	}
	return fmt.Sprintf("%s.t%d.s%d", natsRoot(prefix), topic, sel)
}

// Prepare implements Driver: creates the case's stream unless it is core.
func (d *Driver) Prepare(ctx context.Context, c driver.CaseSpec) error {
	if usesCore(c.Factors) {
		return nil
	}
	cfg := streamConfig(c)
	// nats-server occasionally refuses a file store right after another
	// stream was deleted ("error creating store for stream", the cause only
	// in its log); it succeeds when asked again.
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		if _, err = d.js.CreateStream(ctx, cfg); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("create stream %s: %w", c.Prefix, err)
		case <-time.After(time.Duration(attempt) * 500 * time.Millisecond):
		}
	}
	return fmt.Errorf("create stream %s (3 attempts): %w", c.Prefix, err)
}

// streamConfig is the JetStream stream of a case.
func streamConfig(c driver.CaseSpec) jetstream.StreamConfig {
	storage := jetstream.MemoryStorage
	if c.Factors.Delivery == scenario.Persistent {
		storage = jetstream.FileStorage
	}
	return jetstream.StreamConfig{
		Name:      streamName(c.Prefix),
		Subjects:  []string{natsRoot(c.Prefix) + ".>"},
		Storage:   storage,
		Retention: jetstream.InterestPolicy,
		Discard:   jetstream.DiscardOld,
		Replicas:  1,
	}
}

// Purge implements Driver: deletes every stream whose name has the prefix
// (their consumers, durable ones included, go with them).
func (d *Driver) Purge(ctx context.Context, prefix string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*adminTimeout)
	defer cancel()
	names := d.js.StreamNames(ctx)
	var doomed []string
	for n := range names.Name() {
		if strings.HasPrefix(n, prefix) {
			doomed = append(doomed, n)
		}
	}
	if err := names.Err(); err != nil && !errors.Is(err, jetstream.ErrEndOfData) {
		return fmt.Errorf("list streams: %w", err)
	}
	for _, n := range doomed {
		if err := d.js.DeleteStream(ctx, n); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return fmt.Errorf("delete stream %s: %w", n, err)
		}
	}
	return nil
}

// Close implements Driver.
func (d *Driver) Close() error {
	d.admin.Close()
	return nil
}

// natsDialer adapts a Dialer to nats.CustomDialer and keeps the socket it
// dialed last in the client's watch (for Abort). While the connection is
// set up it dials with the set-up's context, and a cancellation closes the
// socket of a handshake under way; reconnects later dial without it.
type natsDialer struct {
	d driver.Dialer
	w *natsWatch

	mu   sync.Mutex
	ctx  context.Context
	last net.Conn
}

func (n *natsDialer) Dial(network, addr string) (net.Conn, error) {
	n.mu.Lock()
	ctx := n.ctx
	n.mu.Unlock()
	c, err := n.d.DialContext(ctx, network, addr)
	if err == nil {
		n.mu.Lock()
		n.last = c
		n.mu.Unlock()
		if n.w != nil {
			n.w.sock.Store(&c)
			n.w.dials.Add(1)
		}
	}
	return c, err
}

// setUp follows ctx while the connection is set up: a cancellation closes
// the socket being set up. The returned function ends that and lets later
// reconnects dial on their own; it reports whether ctx ended meanwhile.
func (n *natsDialer) setUp(ctx context.Context) (done func() bool) {
	n.mu.Lock()
	n.ctx = ctx
	n.mu.Unlock()
	stop := context.AfterFunc(ctx, func() {
		n.mu.Lock()
		if n.last != nil {
			_ = n.last.Close()
		}
		n.mu.Unlock()
	})
	return func() bool {
		stopped := stop()
		n.mu.Lock()
		n.ctx = context.Background()
		n.mu.Unlock()
		return !stopped || ctx.Err() != nil
	}
}

// abort resets the client's socket (SO_LINGER 0) and closes the client:
// nothing more goes out, and the server drops what it still had queued.
func (w *natsWatch) abort(nc *nats.Conn) {
	w.closing.Store(true)
	if c := w.sock.Load(); c != nil {
		driver.ResetOnClose(*c)
		_ = (*c).Close()
	}
	nc.Close()
}

// natsConnect connects to ep. nats.go reconnects by itself, forever, with
// a back-off from reconnectMin to reconnectMax; w (if not nil) records the
// connection's outages.
func natsConnect(ctx context.Context, ep driver.Endpoint, name string, w *natsWatch, extra ...nats.Option) (*nats.Conn, error) {
	opts := []nats.Option{
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.CustomReconnectDelay(func(attempts int) time.Duration {
			return min(driver.ReconnectMin<<min(max(attempts-1, 0), 4), driver.ReconnectMax)
		}),
		nats.Timeout(10 * time.Second),
		// A write blocked this long means the link is gone (an emulated
		// 1 Mbit/s link drains a 32 KB buffer in a third of a second); the
		// default minute would also hold up closing a connection that long.
		nats.FlusherTimeout(15 * time.Second),
		// Slow consumers are counted as losses by the load engine; silence
		// the default logging of the async error.
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}),
	}
	if ep.User != "" {
		opts = append(opts, nats.UserInfo(ep.User, ep.Password))
	}
	d := ep.Dialer
	if d == nil {
		d = &net.Dialer{Timeout: 10 * time.Second}
	}
	url := ep.URL
	if w != nil && w.tls != nil {
		d = w.tls.Dialer(d)
		opts = append(opts, nats.Secure(w.tls.Config()))
		url = cmp.Or(ep.TLSURL, ep.URL)
	}
	dialer := &natsDialer{d: d, w: w, ctx: context.Background()}
	opts = append(opts, nats.SetCustomDialer(dialer))
	if w != nil {
		opts = append(opts, w.options()...)
	}
	opts = append(opts, extra...)
	var nc *nats.Conn
	var err error
	setUpDone := dialer.setUp(ctx)
	for attempt := 1; ; attempt++ {
		nc, err = nats.Connect(url, opts...)
		if err == nil || attempt == connectAttempts || !retryableSetUp(err) || ctx.Err() != nil {
			break
		}
	}
	if setUpDone() {
		if nc != nil {
			nc.Close()
		}
		return nil, fmt.Errorf("connect to NATS at %s: %w", ep.URL, context.Cause(ctx))
	}
	if err != nil {
		if w != nil && w.tls != nil && isTLSError(err) {
			w.tls.Failed()
		}
		return nil, fmt.Errorf("connect to NATS at %s: %w", url, err)
	}
	return nc, nil
}

// connectAttempts bounds the tries of a connection set-up that failed
// the way a lossy link makes it fail (retryableSetUp). Set-up is not
// measured; another try is what a real client would do.
const connectAttempts = 2

// retryableSetUp reports whether a failed nats.Connect is worth another
// try on a lossy link:
//   - a network timeout: with 64 set-ups sharing 1 Mbit/s, a handshake now
//     and then loses enough segments to exceed its 10 s (1 run in 200 of
//     set 1's 200+-client cases failed that way);
//   - a PING where nats.go waits for the PONG to its CONNECT (earlyPing):
//     a server that has not measured the client's round trip yet PINGs it
//     2 s after the accept, and a handshake slowed past that by lost
//     segments reads that PING first. pslab's own nats-server has the
//     short first PING off (child.go); a config file cannot say so, and a
//     broker container keeps it (docs/containers.md).
func retryableSetUp(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || earlyPing(err)
}

// earlyPing reports whether err is nats.go's refusal of a server PING
// that came before the PONG of its connect ("nats: expected 'PONG', got
// 'PING'"; nats.go has no error value for it).
func earlyPing(err error) bool {
	return strings.Contains(err.Error(), "expected 'PONG', got 'PING'")
}

// selectorAsSubject begins the mechanism of a selector case (the report's
// caveat finds these records by it).
const selectorAsSubject = "selector as subject"
