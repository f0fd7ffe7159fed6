package fake

import (
	"context"
	"errors"
	"fmt"
	"time"

	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// Driver is the fake's driver.Driver: clients are goroutines on the
// in-memory server, with no network in between.
type Driver struct{ srv *server }

// Open makes a fresh in-memory broker with knobs k and returns its driver
// (for tests of the load engine; the lab goes through Broker).
func Open(k Knobs) *Driver { return &Driver{srv: newServer(k)} }

// Stats says what the broker behind d did so far.
func (d *Driver) Stats() Stats {
	d.srv.mu.Lock()
	defer d.srv.mu.Unlock()
	return d.srv.stats
}

// Name implements driver.Driver.
func (d *Driver) Name() string { return Name }

// Supports implements driver.Driver: every factor combination has an
// in-memory expression; only shapes no case can have are refused.
func (d *Driver) Supports(f scenario.Factors) error { return supports(f) }

func supports(f scenario.Factors) error {
	if f.Ack == scenario.AckExactlyOnce {
		return fmt.Errorf("fake: ack %s (MQTT QoS 2) is not modelled: the fake's acknowledgement modes are JMS's: %w", f.Ack, driver.ErrUnsupported)
	}
	if why := driver.ShapeRefusal(f); why != "" {
		return fmt.Errorf("fake: %s: %w", why, driver.ErrUnsupported)
	}
	if f.TLS {
		return fmt.Errorf("fake: tls: on: the fake runs in memory, with no connection to encrypt: %w", driver.ErrUnsupported)
	}
	return nil
}

// Mechanism implements driver.Driver.
func (d *Driver) Mechanism(scenario.Factors) string {
	return "fake in-memory broker inside the pslab process (internal/brokers/fake): a queue per subscription, " +
		"durable subscriptions keep theirs while away, selectors and filters match by value, lazy acks redeliver " +
		"what was not acknowledged; no network and no broker: not a measurement of any broker"
}

// Prepare implements driver.Driver: subscriptions are made on subscribe.
func (d *Driver) Prepare(context.Context, driver.CaseSpec) error { return nil }

// Purge implements driver.Driver.
func (d *Driver) Purge(_ context.Context, prefix string) error {
	d.srv.purge(prefix)
	return nil
}

// Close implements driver.Driver.
func (d *Driver) Close() error { return nil }

// Publisher implements driver.Driver.
func (d *Driver) Publisher(_ context.Context, s driver.PubSpec) (driver.Publisher, error) {
	return &publisher{srv: d.srv, spec: s}, nil
}

type publisher struct {
	srv  *server
	spec driver.PubSpec
	sent int
}

// Publish routes m at once, waiting while a subscription it goes to is
// full (flow control).
func (p *publisher) Publish(ctx context.Context, m driver.Message) error {
	srv := p.srv
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if n := srv.knobs.FailPublishAfter; n > 0 && p.sent >= n {
		srv.stats.Refused++
		return fmt.Errorf("fake: publish refused after %d messages (knob FailPublishAfter)", n)
	}
	prefix, topic := p.spec.Case.Prefix, driver.MessageTopic(p.spec, m)
	for srv.full(prefix, topic, m.Sel) {
		if err := srv.wait(ctx); err != nil {
			return err
		}
	}
	if srv.knobs.ServiceRate > 0 {
		srv.enqueue(prefix, topic, m)
	} else {
		srv.route(prefix, topic, m)
	}
	p.sent++
	srv.stats.Published++
	return nil
}

// Flush waits until the broker has served what the case sent (its
// inbox, ServiceRate) and releases what ReorderEvery holds: everything
// sent is routed.
func (p *publisher) Flush(ctx context.Context) error {
	if err := p.srv.served(ctx, p.spec.Case.Prefix); err != nil {
		return err
	}
	p.srv.releaseHeld(p.spec.Case.Prefix)
	return nil
}

func (p *publisher) Close() error { return nil }

// Subscriber implements driver.Driver. A durable subscriber takes over its
// subscription (and the backlog it holds) by client id and durable name.
func (d *Driver) Subscriber(_ context.Context, spec driver.SubSpec, h driver.Handler) (driver.Subscriber, error) {
	srv := d.srv
	srv.mu.Lock()
	defer srv.mu.Unlock()
	srv.subscribeCalls++
	if srv.subscribeCalls <= srv.knobs.FailSubscribes {
		return nil, fmt.Errorf("fake: subscribe %d refused (knob FailSubscribes)", srv.subscribeCalls)
	}
	var s *subscription
	key := ""
	if spec.DurableName != "" {
		key = spec.ClientID + "/" + spec.DurableName
		s = srv.durables[key]
		if s != nil && s.conn != nil {
			return nil, fmt.Errorf("fake: durable subscription %s is in use by another subscriber", key)
		}
	}
	if s == nil {
		s = &subscription{prefix: spec.Case.Prefix, topic: spec.Topic, spec: spec, durable: key}
		srv.subs[s] = struct{}{}
		if key != "" {
			srv.durables[key] = s
		}
	}
	c := &subscriber{srv: srv, sub: s, h: h, done: make(chan struct{})}
	if spec.ID < srv.knobs.SlowSubscribers {
		c.slow = srv.knobs.SlowDelay
	}
	s.conn = c
	if srv.knobs.DeliverOnSubscribe {
		lazy := ackEvery(s.spec)
		for len(s.queue) > 0 {
			m := c.next()
			c.h(driver.Delivery{Body: m.body, Redelivered: m.redelivered})
			c.delivered(m, lazy)
		}
	}
	go c.loop()
	return c, nil
}

// subscriber is one connected subscriber: a goroutine delivering its
// subscription's queue to the handler.
type subscriber struct {
	srv    *server
	sub    *subscription
	h      driver.Handler
	slow   time.Duration
	done   chan struct{}
	closed bool // guarded by srv.mu: the loop must stop
	left   bool // guarded by srv.mu: Close, Unsubscribe or Abort ran
}

func (c *subscriber) loop() {
	srv, s := c.srv, c.sub
	defer close(c.done)
	lazy := ackEvery(s.spec)
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for {
		for !c.closed && len(s.queue) == 0 {
			srv.cond.Wait()
		}
		if c.closed {
			return
		}
		m := c.next()
		srv.mu.Unlock()
		if c.slow > 0 {
			time.Sleep(c.slow)
		}
		c.h(driver.Delivery{Body: m.body, Redelivered: m.redelivered})
		srv.mu.Lock()
		c.delivered(m, lazy)
	}
}

// next takes the first message off the subscription's queue. Called with
// mu held and the queue not empty.
func (c *subscriber) next() message {
	s := c.sub
	m := s.queue[0]
	s.queue[0] = message{}
	s.queue = s.queue[1:]
	if m.redelivered {
		c.srv.stats.Redelivered++
	}
	c.srv.cond.Broadcast() // room for publishers
	return m
}

// delivered keeps m unacknowledged until lazy deliveries have been
// acknowledged together. Called with mu held.
func (c *subscriber) delivered(m message, lazy int) {
	s := c.sub
	if lazy > 1 {
		s.unacked = append(s.unacked, m)
		if len(s.unacked) >= lazy {
			s.unacked = s.unacked[:0]
		}
	}
}

var errLeft = errors.New("fake: subscriber already closed")

// Close implements driver.Subscriber: a durable subscription stays, and
// what its subscriber had not acknowledged is delivered again.
func (c *subscriber) Close() error { return c.leave(false) }

// Unsubscribe implements driver.Subscriber.
func (c *subscriber) Unsubscribe() error { return c.leave(true) }

// Abort implements driver.Aborter (in memory, the same as Close).
func (c *subscriber) Abort() { _ = c.leave(false) }

func (c *subscriber) leave(remove bool) error {
	srv, s := c.srv, c.sub
	srv.mu.Lock()
	if c.left {
		srv.mu.Unlock()
		return errLeft
	}
	c.left, c.closed = true, true
	srv.cond.Broadcast()
	srv.mu.Unlock()
	<-c.done
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if s.conn == c {
		s.conn = nil
	}
	if s.durable == "" || remove {
		srv.stats.Discarded += int64(len(s.queue))
		delete(srv.subs, s)
		if s.durable != "" && srv.durables[s.durable] == s {
			delete(srv.durables, s.durable)
		}
		return nil
	}
	redo := make([]message, len(s.unacked), len(s.unacked)+len(s.queue))
	for i, m := range s.unacked {
		m.redelivered = true
		redo[i] = m
	}
	s.queue = append(redo, s.queue...)
	s.unacked = nil
	return nil
}
