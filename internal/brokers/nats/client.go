package nats

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// natsSubscriber is one subscriber: a core subscription (per subject) or a
// JetStream consumer.
//
// Across a lost connection: nats.go reconnects by itself and restores core
// subscriptions (a new interest: what was published meanwhile is lost).
// For JetStream, the library's Consume issues a new pull request after the
// reconnect; the subscriber checks that its consumer still exists and, if
// the broker lost it (memory storage, or an ephemeral consumer), creates it
// again, and the case's stream too if that is gone: a durable one under the
// same name, an ephemeral one delivering only new messages (a new
// subscription). Unacknowledged messages are redelivered by the broker.
type natsSubscriber struct {
	nc    *nats.Conn
	watch *natsWatch
	subs  []*nats.Subscription
	js    jetstream.JetStream
	acker *lazyAcker

	// JetStream: what a resubscription needs.
	spec   driver.SubSpec
	stream string
	cfg    jetstream.ConsumerConfig
	h      driver.Handler

	mu       sync.Mutex // guards consume and consName
	consume  jetstream.ConsumeContext
	consName string
	live     *liveConsumers   // the driver's, for Held
	core     *coreSubscribers // the driver's, for Held (core subscribers)
	name     string

	stop     chan struct{} // closed by close
	stopOnce sync.Once
	resub    chan struct{} // a reconnect to check the consumer after
	wg       sync.WaitGroup
}

// Subscriber implements Driver.
func (d *Driver) Subscriber(ctx context.Context, s driver.SubSpec, h driver.Handler) (driver.Subscriber, error) {
	sub := &natsSubscriber{watch: &natsWatch{}, spec: s, h: h, stop: make(chan struct{}), resub: make(chan struct{}, 1), live: &d.live,
		name: subscriberConnName(s.Case, s.ID)}
	f := s.Case.Factors
	if !usesCore(f) {
		sub.watch.onReconnect = func() {
			select {
			case sub.resub <- struct{}{}:
			default:
			}
		}
	}
	if err := d.watchTLS(sub.watch, s.Case); err != nil {
		return nil, err
	}
	nc, err := natsConnect(ctx, d.ep, sub.name, sub.watch)
	if err != nil {
		return nil, err
	}
	sub.nc = nc
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
	if usesCore(f) {
		cb := func(m *nats.Msg) { h(driver.Delivery{Body: m.Data}) }
		for _, subj := range subjects {
			ns, err := nc.Subscribe(subj, cb)
			if err != nil {
				nc.Close()
				return nil, err
			}
			if d.corePendingMsgs > 0 {
				_ = ns.SetPendingLimits(d.corePendingMsgs, -1)
			}
			sub.subs = append(sub.subs, ns)
		}
		if err := flushWithin(ctx, nc); err != nil { // subscriptions registered before publishers start
			nc.Close()
			return nil, err
		}
		sub.core = &d.core
		sub.core.add(sub)
		return sub, nil
	}
	if err := sub.consumeJetStream(ctx, subjects); err != nil {
		nc.Close()
		return nil, err
	}
	sub.wg.Add(1)
	go sub.resubscribeLoop()
	return sub, nil
}

// ConnStats implements ConnReporter.
func (s *natsSubscriber) ConnStats() driver.ConnStats { return s.watch.log.Stats() }

func (s *natsSubscriber) consumeJetStream(ctx context.Context, subjects []string) error {
	js, err := jetstream.New(s.nc)
	if err != nil {
		return err
	}
	f := s.spec.Case.Factors
	cfg := jetstream.ConsumerConfig{
		DeliverPolicy:  jetstream.DeliverAllPolicy,
		AckPolicy:      jetstream.AckExplicitPolicy,
		AckWait:        ackWait(s.spec.AckWait),
		MaxAckPending:  20000,
		FilterSubjects: subjects,
	}
	if f.Ack != scenario.AckAuto {
		cfg.AckPolicy = jetstream.AckAllPolicy
	}
	if f.Subscription == scenario.Durable {
		cfg.Durable = s.spec.DurableName
	} else {
		// A non-durable subscription gets what is published after it
		// subscribes (JMS), never the stream's older messages: a new
		// ephemeral consumer after a disconnect must not replay what the
		// stream kept for other consumers' interest.
		cfg.DeliverPolicy = jetstream.DeliverNewPolicy
		cfg.InactiveThreshold = 30 * time.Second
	}
	s.js, s.stream, s.cfg = js, streamName(s.spec.Case.Prefix), cfg
	if f.Ack != scenario.AckAuto {
		s.acker = newLazyAcker(s.spec.AckEvery, time.Duration(s.spec.AckIntervalMs)*time.Millisecond, f.Ack == scenario.AckDupsOK)
	}
	return s.startConsumer(ctx, cfg)
}

// defaultAckWait is the consumers' redelivery timer without SubSpec.AckWait.
const defaultAckWait = 30 * time.Second

func ackWait(w time.Duration) time.Duration {
	if w > 0 {
		return w
	}
	return defaultAckWait
}

// defaultPullBatch is how many messages a JetStream subscriber pulls at a
// time without a delivery window (SubSpec.Window).
const defaultPullBatch = 1000

// pullBatch is the pull batch of a subscriber with delivery window w.
func pullBatch(w int) int {
	if w > 0 {
		return w
	}
	return defaultPullBatch
}

// DeliveryWindowed implements DeliveryWindowed: JetStream subscribers pull.
func (d *Driver) DeliveryWindowed(f scenario.Factors) bool { return !usesCore(f) }

// startConsumer creates (or finds) the consumer of cfg and consumes it,
// stopping the previous Consume if there was one.
func (s *natsSubscriber) startConsumer(ctx context.Context, cfg jetstream.ConsumerConfig) error {
	cons, err := s.js.CreateOrUpdateConsumer(ctx, s.stream, cfg)
	if err != nil {
		return fmt.Errorf("create consumer: %w", err)
	}
	cc, err := cons.Consume(s.deliver, jetstream.PullMaxMessages(pullBatch(s.spec.Window)))
	if err != nil {
		return err
	}
	s.mu.Lock()
	old := s.consume
	s.live.swap(s.consName, cons.CachedInfo().Name)
	s.consume, s.consName = cc, cons.CachedInfo().Name
	s.mu.Unlock()
	if old != nil {
		old.Stop()
	}
	return nil
}

func (s *natsSubscriber) deliver(m jetstream.Msg) {
	redelivered := false
	if md, err := m.Metadata(); err == nil {
		redelivered = md.NumDelivered > 1
	}
	s.h(driver.Delivery{Body: m.Data(), Redelivered: redelivered})
	if s.acker != nil {
		s.acker.received(m)
	} else {
		_ = m.Ack()
	}
}

func (s *natsSubscriber) Close() error { return s.close(false) }

func (s *natsSubscriber) Unsubscribe() error { return s.close(true) }

// Abort implements Aborter: no more deliveries, no last acks.
func (s *natsSubscriber) Abort() {
	s.stopDelivery()
	s.watch.abort(s.nc)
}

// drainBound caps the flush of a closing subscriber's last acks.
const drainBound = 5 * time.Second

// close stops delivery, acks the tail for lazy modes, optionally deletes the
// durable consumer, and disconnects. While the connection is down it gives
// up on the acks and the deletion after closeBound.
func (s *natsSubscriber) close(remove bool) error {
	s.stopDelivery()
	if s.nc.IsConnected() {
		_ = s.nc.FlushTimeout(drainBound) // the acks out before the connection goes
	}
	for _, ns := range s.subs {
		_ = ns.Unsubscribe()
	}
	var err error
	if remove && s.cfg.Durable != "" {
		ctx, cancel := context.WithTimeout(context.Background(), driver.CloseBound)
		err = s.js.DeleteConsumer(ctx, s.stream, s.cfg.Durable)
		cancel()
	}
	if s.core != nil {
		s.core.remove(s)
	}
	s.nc.Close()
	return err
}

// stopDelivery marks the subscriber closing and stops its consumer and its
// lazy acker.
func (s *natsSubscriber) stopDelivery() {
	s.watch.closing.Store(true)
	s.stopOnce.Do(func() { close(s.stop) })
	s.wg.Wait()
	s.mu.Lock()
	cc := s.consume
	s.live.swap(s.consName, "")
	s.mu.Unlock()
	if cc != nil {
		// Stop, not Drain: a draining pull consumer keeps receiving until
		// its pull request expires, so a subscriber "gone" would still get
		// messages. Messages already pulled but not handled stay pending at
		// the consumer and come again after AckWait (30 s) to a durable
		// consumer's next subscriber.
		cc.Stop()
	}
	if s.acker != nil {
		s.acker.stop()
	}
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
