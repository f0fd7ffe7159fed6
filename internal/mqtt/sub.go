package mqtt

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// subscriber is one MQTT subscriber. Deliveries arrive on the reader
// goroutine of its current connection, which runs the handler and
// acknowledges per the case's ack mode:
//
//	QoS 0         nothing to acknowledge
//	auto          PUBACK per message after the handler returns
//	dups-ok       PUBACKs held back, sent every `every` messages or
//	              `interval` (a timer), and on Close
//	client        PUBACKs held back, sent every `every` messages
//	exactly-once  PUBREC per message; a PUBLISH whose identifier awaits
//	              its PUBREL is not delivered again; PUBCOMP on PUBREL
//
// `every` is at most half the broker's in-flight limit, or the broker
// would wait for PUBACKs the client holds back. PUBACKs follow the order
// of the PUBLISHes, as MQTT asks.
type subscriber struct {
	d       *Driver
	cl      *client
	spec    driver.SubSpec
	qos     byte
	filters []string
	h       driver.Handler
	cs      *cstat
	durable bool
	ack     scenario.AckMode
	every   int
	timer   time.Duration // dups-ok: flush after this long; 0: no timer

	mu       sync.Mutex
	closing  bool
	pend     []byte // PUBACK packets held back
	npend    int
	pendConn *conn
	oldest   time.Time       // when the oldest PUBACK held back was due
	q2       map[uint16]bool // QoS 2: identifiers delivered, awaiting PUBREL
	inflight sync.WaitGroup
	stop     chan struct{}
	wg       sync.WaitGroup
}

// Subscriber implements driver.Driver.
func (d *Driver) Subscriber(ctx context.Context, spec driver.SubSpec, h driver.Handler) (driver.Subscriber, error) {
	f := spec.Case.Factors
	if err := d.Supports(f); err != nil {
		return nil, err
	}
	s := &subscriber{d: d, spec: spec, qos: QoS(f), filters: topicFilters(spec), h: h, cs: d.caseStat(spec.Case.Prefix),
		durable: f.Subscription == scenario.Durable, ack: f.Ack, q2: map[uint16]bool{}, stop: make(chan struct{})}
	s.every = spec.AckEvery
	if s.every <= 0 {
		s.every = driver.DefaultAckEvery
	}
	if lim := d.p.InflightLimit; lim > 0 {
		s.every = max(min(s.every, lim/2), 1)
	}
	if f.Ack == scenario.AckDupsOK {
		ms := spec.AckIntervalMs
		if ms <= 0 {
			ms = driver.DefaultAckIntervalMs
		}
		s.timer = time.Duration(ms) * time.Millisecond
	}
	id := subClientID(spec)
	cl, err := newClient(ctx, d, d.connectOpts(id, s.durable), s.onPacket, nil, s.subscribe)
	if err != nil {
		return nil, fmt.Errorf("subscriber %d: %w", spec.ID, err)
	}
	if s.durable {
		d.noteSession(id)
	}
	s.cl = cl
	if s.timer > 0 && s.qos == 1 {
		s.wg.Add(1)
		go s.ackTimer()
	}
	return s, nil
}

// subscribe runs on each new connection before it becomes current: a
// resumed session keeps its subscriptions; otherwise SUBSCRIBE, and a
// filter the broker refused or granted below the case's QoS is an error.
func (s *subscriber) subscribe(ctx context.Context, c *conn) error {
	s.mu.Lock()
	if !c.sessionPresent {
		clear(s.q2) // the broker kept no QoS 2 state either
	}
	s.mu.Unlock()
	if (s.durable && c.sessionPresent) || len(s.filters) == 0 {
		return nil
	}
	pkt, err := subscribePacket(s.d.p.Version, 1, s.filters, s.qos)
	if err != nil {
		return err
	}
	body, err := c.request(ctx, pkt, 1)
	if err != nil {
		return fmt.Errorf("SUBSCRIBE: %w", err)
	}
	_, codes, err := decodeSuback(s.d.p.Version, body)
	if err != nil {
		return err
	}
	if len(codes) != len(s.filters) {
		return fmt.Errorf("SUBACK: %d return codes for %d topic filters", len(codes), len(s.filters))
	}
	for i, code := range codes {
		switch {
		case code >= 0x80:
			return fmt.Errorf("SUBSCRIBE %s at QoS %d refused by the broker (code 0x%02x)", s.filters[i], s.qos, code)
		case code < s.qos:
			return fmt.Errorf("SUBSCRIBE %s at QoS %d: the broker granted only QoS %d", s.filters[i], s.qos, code)
		}
	}
	return nil
}

// onPacket handles one packet (the connection's reader goroutine).
func (s *subscriber) onPacket(c *conn, pk packet) error {
	switch pk.typ {
	case pktPublish:
	case pktPubrel:
		a, err := decodeAck(pk.typ, pk.body)
		if err != nil {
			return err
		}
		s.mu.Lock()
		delete(s.q2, a.id)
		s.mu.Unlock()
		return s.queue(c, appendAck(nil, pktPubcomp, a.id))
	default:
		return nil
	}
	m, err := decodePublish(s.d.p.Version, pk.flags, pk.body)
	if err != nil {
		return err
	}
	s.cs.parsed.Add(1)
	if m.qos == 0 {
		// Nothing to acknowledge, and nothing comes again: delivered even
		// while closing (what arrives before the connection ends).
		s.h(driver.Delivery{Body: m.payload})
		return nil
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil // not delivered and not acknowledged: the broker sends it again
	}
	if m.qos == 2 && s.q2[m.id] {
		s.mu.Unlock() // delivered before; its PUBREC was lost
		return s.queue(c, appendAck(nil, pktPubrec, m.id))
	}
	if m.qos == 2 {
		s.q2[m.id] = true
	}
	s.inflight.Add(1)
	s.mu.Unlock()
	s.h(driver.Delivery{Body: m.payload, Redelivered: m.dup})
	defer s.inflight.Done()
	switch {
	case m.qos == 2:
		return s.queue(c, appendAck(nil, pktPubrec, m.id))
	case s.ack == scenario.AckAuto || s.ack == scenario.AckExactlyOnce:
		return s.queue(c, appendAck(nil, pktPuback, m.id))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pendConn != c { // a new connection: the old one's PUBACKs are void
		s.pend, s.npend, s.pendConn = s.pend[:0], 0, c
	}
	if s.npend == 0 {
		s.oldest = time.Now()
	}
	s.pend = appendAck(s.pend, pktPuback, m.id)
	s.npend++
	if s.npend >= s.every {
		return s.flushLocked(false)
	}
	return nil
}

// queue queues an acknowledgement from the reader goroutine; a closed
// connection is no error (the broker sends the message again on the next
// one).
func (s *subscriber) queue(c *conn, b []byte) error {
	if err := c.queue(b); err != nil && !errors.Is(err, errClosed) {
		return err
	}
	return nil
}

// flushLocked sends the PUBACKs held back: from the reader goroutine
// (wake false) or from another, which wakes the writer. Called with s.mu
// held.
func (s *subscriber) flushLocked(wake bool) error {
	if s.npend == 0 {
		return nil
	}
	c := s.pendConn
	err := c.put(wake, [][]byte{s.pend})
	if errors.Is(err, errClosed) {
		err = nil
	}
	s.pend, s.npend = s.pend[:0], 0
	return err
}

// ackTimer sends the PUBACKs held back once the oldest is `timer` old
// (DUPS_OK).
func (s *subscriber) ackTimer() {
	defer s.wg.Done()
	t := time.NewTicker(s.timer / 2)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.mu.Lock()
			c := s.pendConn
			var err error
			if s.npend > 0 && time.Since(s.oldest) >= s.timer {
				err = s.flushLocked(true)
			}
			s.mu.Unlock()
			if err != nil {
				c.fail(err)
			}
		}
	}
}

// quiesce stops deliveries to the handler and the ack timer.
func (s *subscriber) quiesce() {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.inflight.Wait()
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	s.wg.Wait()
}

// Close implements driver.Subscriber: no more deliveries; AUTO and
// DUPS_OK send the PUBACKs held back (CLIENT does not: the application
// did not acknowledge, so a persistent session gets those messages again);
// then DISCONNECT. A durable subscription's session stays on the broker.
func (s *subscriber) Close() error {
	s.quiesce()
	if s.ack != scenario.AckClient {
		s.mu.Lock()
		var err error
		if s.pendConn != nil && s.pendConn == s.cl.Current() {
			err = s.flushLocked(true)
		}
		s.mu.Unlock()
		if err != nil {
			s.cl.Abort()
			return err
		}
	}
	return s.cl.Close(10*time.Second, nil)
}

// Abort implements driver.Aborter: no more deliveries, no PUBACK, no
// DISCONNECT; a persistent session stays.
func (s *subscriber) Abort() {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	s.wg.Wait()
	s.cl.Abort()
}

// Unsubscribe implements driver.Subscriber: UNSUBSCRIBE and DISCONNECT.
// A durable subscriber's session, empty now, is ended by Purge.
func (s *subscriber) Unsubscribe() error {
	s.quiesce()
	return s.cl.Close(10*time.Second, func(ctx context.Context, c *conn) error {
		if len(s.filters) == 0 {
			return nil
		}
		pkt, err := unsubscribePacket(s.d.p.Version, 2, s.filters)
		if err != nil {
			return err
		}
		if _, err := c.request(ctx, pkt, 2); err != nil {
			return fmt.Errorf("subscriber %d: UNSUBSCRIBE: %w", s.spec.ID, err)
		}
		return nil
	})
}

// ConnStats implements driver.ConnReporter.
func (s *subscriber) ConnStats() driver.ConnStats { return s.cl.Log.Stats() }
