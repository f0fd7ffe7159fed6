package driver

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"pslab/internal/scenario"
)

// natsPublisher publishes on one connection, core or JetStream.
type natsPublisher struct {
	nc       *nats.Conn
	js       jetstream.JetStream // nil: core publish
	subjects [][]string          // by topic (index 0 unless round robin), then value ([0] without one)
	allTopic bool                // round robin: Message.Topic indexes subjects
	window   int
	pending  []jetstream.PubAckFuture // JetStream: outstanding PubAcks, oldest first
	// core flow control: at most one flush in flight, started every window/2
	// sends, so at most `window` sends are unconfirmed by a PONG.
	sinceFlush int
	inflight   *flushOp
}

// flushOp is one PING/PONG round trip in flight; done is closed when it ends.
type flushOp struct {
	done chan struct{}
	err  error
}

// wait blocks until the flush in flight (if any) ends and returns its error.
func (p *natsPublisher) wait() error {
	if p.inflight == nil {
		return nil
	}
	<-p.inflight.done
	err := p.inflight.err
	p.inflight = nil
	return err
}

// Publisher implements Driver.
func (d *NATS) Publisher(ctx context.Context, s PubSpec) (Publisher, error) {
	nc, err := natsConnect(ctx, d.ep, fmt.Sprintf("pslab-pub-%d", s.ID))
	if err != nil {
		return nil, err
	}
	p := &natsPublisher{nc: nc, window: s.Window, subjects: natsPubSubjects(s), allTopic: s.Case.Factors.TopicRoundRobin}
	if p.window <= 0 {
		p.window = DefaultWindow(s.Case.Factors)
	}
	if s.Case.Factors.Delivery == scenario.Persistent {
		// All publishers of a case feed one stream, whose ingest queue
		// nats-server bounds (100 000 messages by default; beyond it
		// publishes are refused with 429). Share a budget below that.
		p.window = min(p.window, max(1, jsIngestBudget/max(s.Case.Factors.Publishers, 1)))
		// The window is enforced here; the library's own cap is set above
		// it so that it never stalls and errors first.
		p.js, err = jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(p.window+1),
			jetstream.WithPublishAsyncTimeout(time.Minute))
		if err != nil {
			nc.Close()
			return nil, err
		}
	}
	return p, nil
}

// natsPubSubjects lists a publisher's subjects by topic and value.
func natsPubSubjects(s PubSpec) [][]string {
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

func (p *natsPublisher) Publish(ctx context.Context, m Message) error {
	ti := 0
	if p.allTopic {
		ti = m.Topic
	}
	subj := p.subjects[ti][max(m.Sel, 0)]
	if p.js != nil {
		for len(p.pending) >= p.window {
			if err := p.awaitOldest(ctx); err != nil {
				return err
			}
		}
		f, err := p.js.PublishAsync(subj, m.Body)
		if err != nil {
			return err
		}
		p.pending = append(p.pending, f)
		return nil
	}
	// Flow control first, so that an error means this message was not sent.
	if p.sinceFlush >= max(p.window/2, 1) {
		p.sinceFlush = 0
		if err := p.wait(); err != nil {
			return fmt.Errorf("flow control flush: %w", err)
		}
		op := &flushOp{done: make(chan struct{})}
		p.inflight = op
		go func() { op.err = flushWithin(ctx, p.nc); close(op.done) }()
	}
	if err := p.nc.Publish(subj, m.Body); err != nil {
		return err
	}
	p.sinceFlush++
	return nil
}

// jsIngestBudget is the total of outstanding JetStream publishes of all
// publishers of a case: half of nats-server's default stream ingest queue.
const jsIngestBudget = 50_000

// flushTimeout bounds one PING/PONG round trip: generous, since a window of
// large messages over a 1 Mbit/s link takes seconds to drain.
const flushTimeout = 2 * time.Minute

// flushWithin flushes nc within flushTimeout or until ctx ends.
func flushWithin(ctx context.Context, nc *nats.Conn) error {
	ctx, cancel := context.WithTimeout(ctx, flushTimeout)
	defer cancel()
	return nc.FlushWithContext(ctx)
}

// awaitOldest waits for the oldest outstanding PubAck.
func (p *natsPublisher) awaitOldest(ctx context.Context) error {
	f := p.pending[0]
	p.pending = p.pending[1:]
	select {
	case <-f.Ok():
		return nil
	case err := <-f.Err():
		return fmt.Errorf("publish not acknowledged: %w", err)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// CopiesBody implements BodyCopier: a core publish copies the body into the
// connection's buffer before it returns; JetStream keeps it for retries.
func (p *natsPublisher) CopiesBody() bool { return p.js == nil }

func (p *natsPublisher) Flush(ctx context.Context) error {
	for len(p.pending) > 0 {
		if err := p.awaitOldest(ctx); err != nil {
			return err
		}
	}
	if err := p.wait(); err != nil {
		return err
	}
	return flushWithin(ctx, p.nc)
}

func (p *natsPublisher) Close() error {
	_ = p.wait()
	p.nc.Close()
	return nil
}

// natsSubscriber is one subscriber: a core subscription (per subject) or a
// JetStream consumer.
type natsSubscriber struct {
	nc      *nats.Conn
	subs    []*nats.Subscription
	consume jetstream.ConsumeContext
	js      jetstream.JetStream
	stream  string
	durable string
	acker   *lazyAcker
}

// Subscriber implements Driver.
func (d *NATS) Subscriber(ctx context.Context, s SubSpec, h Handler) (Subscriber, error) {
	nc, err := natsConnect(ctx, d.ep, fmt.Sprintf("pslab-sub-%d", s.ID))
	if err != nil {
		return nil, err
	}
	f := s.Case.Factors
	subjects := []string{subject(s.Case.Prefix, s.Topic, -1)}
	if f.Filtered() {
		if len(s.FilterValues) == 0 {
			nc.Close()
			return nil, fmt.Errorf("subscriber %d: filter case without filter values", s.ID)
		}
		subjects = natsFilterSubjects(s.Case.Prefix, f, s.Topic, s.FilterValues)
	}
	if f.Selector {
		subjects = subjects[:0]
		for v := s.SelectFrom; v < s.SelectTo; v++ {
			subjects = append(subjects, subject(s.Case.Prefix, s.Topic, v))
		}
	}
	sub := &natsSubscriber{nc: nc}
	if usesCore(f) {
		cb := func(m *nats.Msg) { h(Delivery{Body: m.Data}) }
		for _, subj := range subjects {
			ns, err := nc.Subscribe(subj, cb)
			if err != nil {
				nc.Close()
				return nil, err
			}
			sub.subs = append(sub.subs, ns)
		}
		if err := flushWithin(ctx, nc); err != nil { // subscriptions registered before publishers start
			nc.Close()
			return nil, err
		}
		return sub, nil
	}
	if err := sub.consumeJetStream(ctx, s, subjects, h); err != nil {
		nc.Close()
		return nil, err
	}
	return sub, nil
}

func (s *natsSubscriber) consumeJetStream(ctx context.Context, spec SubSpec, subjects []string, h Handler) error {
	js, err := jetstream.New(s.nc)
	if err != nil {
		return err
	}
	f := spec.Case.Factors
	cfg := jetstream.ConsumerConfig{
		DeliverPolicy:  jetstream.DeliverAllPolicy,
		AckPolicy:      jetstream.AckExplicitPolicy,
		AckWait:        30 * time.Second,
		MaxAckPending:  20000,
		FilterSubjects: subjects,
	}
	if f.Ack != scenario.AckAuto {
		cfg.AckPolicy = jetstream.AckAllPolicy
	}
	if f.Subscription == scenario.Durable {
		cfg.Durable = spec.DurableName
	} else {
		cfg.InactiveThreshold = 30 * time.Second
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, streamName(spec.Case.Prefix), cfg)
	if err != nil {
		return fmt.Errorf("create consumer: %w", err)
	}
	s.js, s.stream, s.durable = js, streamName(spec.Case.Prefix), cfg.Durable
	if f.Ack != scenario.AckAuto {
		s.acker = newLazyAcker(spec.AckEvery, time.Duration(spec.AckIntervalMs)*time.Millisecond, f.Ack == scenario.AckDupsOK)
	}
	s.consume, err = cons.Consume(func(m jetstream.Msg) {
		redelivered := false
		if md, err := m.Metadata(); err == nil {
			redelivered = md.NumDelivered > 1
		}
		h(Delivery{Body: m.Data(), Redelivered: redelivered})
		if s.acker != nil {
			s.acker.received(m)
		} else {
			_ = m.Ack()
		}
	}, jetstream.PullMaxMessages(1000))
	return err
}

func (s *natsSubscriber) Close() error { return s.close(false) }

func (s *natsSubscriber) Unsubscribe() error { return s.close(true) }

// close stops delivery, acks the tail for lazy modes, optionally deletes the
// durable consumer, and disconnects.
func (s *natsSubscriber) close(remove bool) error {
	if s.consume != nil {
		s.consume.Stop()
	}
	if s.acker != nil {
		s.acker.stop()
	}
	for _, ns := range s.subs {
		_ = ns.Unsubscribe()
	}
	var err error
	if remove && s.durable != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = s.js.DeleteConsumer(ctx, s.stream, s.durable)
		cancel()
	}
	s.nc.Close()
	return err
}

// lazyAcker acknowledges cumulatively (AckAll) every n messages and, when
// timed, also after interval with no ack (DUPS_OK's lazy acknowledgement).
type lazyAcker struct {
	mu     sync.Mutex
	n      int
	count  int
	last   jetstream.Msg
	ticker *time.Ticker
	done   chan struct{}
}

func newLazyAcker(n int, interval time.Duration, timed bool) *lazyAcker {
	if n < 1 {
		n = 1
	}
	a := &lazyAcker{n: n, done: make(chan struct{})}
	if timed && interval > 0 {
		a.ticker = time.NewTicker(interval)
		go a.tick(a.ticker.C)
	}
	return a
}

func (a *lazyAcker) received(m jetstream.Msg) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.count++
	a.last = m
	if a.count >= a.n {
		a.flushLocked()
	}
}

func (a *lazyAcker) flushLocked() {
	if a.last != nil {
		_ = a.last.Ack()
		a.last = nil
		a.count = 0
	}
}

// tick acks on every tick of c until stop; c is passed in because stop
// clears a.ticker.
func (a *lazyAcker) tick(c <-chan time.Time) {
	for {
		select {
		case <-a.done:
			return
		case <-c:
			a.mu.Lock()
			a.flushLocked()
			a.mu.Unlock()
		}
	}
}

// stop acks the tail (the application's last acknowledgement point).
func (a *lazyAcker) stop() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ticker != nil {
		a.ticker.Stop()
		close(a.done)
		a.ticker = nil
	}
	a.flushLocked()
}
