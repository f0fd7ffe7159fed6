package artemis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/go-stomp/stomp/v3/frame"

	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// stompAckPolicy decides when a subscriber acknowledges.
type stompAckPolicy struct {
	mode       string        // SUBSCRIBE ack header: client-individual or client
	every      int           // cumulative ACK after this many messages (client)
	interval   time.Duration // and after this long (dups-ok); 0: no timer
	maxBytes   int           // and when this many bytes are unacknowledged
	flushClose bool          // send the pending ACK on Close
}

// stompAckPolicyFor maps the paper's ack modes onto STOMP.
func stompAckPolicyFor(a scenario.AckMode, every, intervalMs int) stompAckPolicy {
	if every <= 0 {
		every = driver.DefaultAckEvery
	}
	if intervalMs <= 0 {
		intervalMs = driver.DefaultAckIntervalMs
	}
	switch a {
	case scenario.AckDupsOK:
		return stompAckPolicy{mode: "client", every: every, interval: time.Duration(intervalMs) * time.Millisecond,
			maxBytes: stompWindowBytes / 2, flushClose: true}
	case scenario.AckClient:
		return stompAckPolicy{mode: "client", every: every, maxBytes: stompWindowBytes / 2}
	default: // AUTO
		return stompAckPolicy{mode: "client-individual", every: 1, flushClose: true}
	}
}

// subscribeFrame builds the SUBSCRIBE frame of s.
func subscribeFrame(s driver.SubSpec, pol stompAckPolicy) *frame.Frame {
	f := frame.New(frame.SUBSCRIBE,
		frame.Id, "0",
		frame.Destination, stompTopic(s.Case, s.Topic),
		"subscription-type", "MULTICAST",
		frame.Ack, pol.mode,
		"consumer-window-size", strconv.Itoa(stompWindowBytes))
	if s.Case.Factors.Subscription == scenario.Durable {
		f.Header.Add("durable-subscription-name", stompDurableName(s))
	}
	if s.Case.Factors.Selector {
		f.Header.Add("selector", stompSelector(s.SelectFrom, s.SelectTo))
	}
	if s.Case.Factors.Filtered() && len(s.FilterValues) > 0 {
		f.Header.Add("selector", stompFilterSelector(s.Case.Factors, s.FilterValues))
	}
	return f
}

// stompSub is one subscriber connection. Deliveries and ACKs run on the
// connection's reader goroutine; the DUPS_OK timer acks from its own.
//
// Across a lost connection (stompLink redials): the new connection logs in
// with the same client-id and SUBSCRIBEs with the same headers, confirmed
// by a RECEIPT before the outage ends. A durable subscription's queue kept
// everything published meanwhile (persistent messages also across a broker
// restart) and Artemis redelivers what was not acknowledged; a non-durable
// subscription is a new temporary queue, so what was published meanwhile
// is lost. ACKs not sent on the old connection are dropped (their messages
// come again).
type stompSub struct {
	link    *stompLink
	spec    driver.SubSpec
	pol     stompAckPolicy
	h       driver.Handler
	durable bool

	mu       sync.Mutex
	ackConn  *stompConn // the connection the pending ACK belongs to
	pending  string     // ack id of the newest unacknowledged message
	nPending int
	bPending int
	lastAck  time.Time
	stop     chan struct{}
	wg       sync.WaitGroup
	// closing is set (under mu) when Close begins: from then on no message
	// reaches the handler, as a JMS consumer delivers nothing after close;
	// the broker redelivers what it had sent, since it is never ACKed.
	// inflight counts handler calls under way, so Close sends its last ACK
	// after them and before DISCONNECT (an ACK after DISCONNECT is void,
	// and its message would come again: a duplicate).
	closing  bool
	inflight sync.WaitGroup
}

// Subscriber implements Driver. It returns once the broker has confirmed
// the subscription (a RECEIPT for the SUBSCRIBE).
func (d *stompDriver) Subscriber(ctx context.Context, s driver.SubSpec, h driver.Handler) (driver.Subscriber, error) {
	f := s.Case.Factors
	if err := d.Supports(f); err != nil {
		return nil, err
	}
	if err := checkName(s.Case.Prefix); err != nil {
		return nil, err
	}
	if f.Selector && !(0 <= s.SelectFrom && s.SelectFrom < s.SelectTo && s.SelectTo <= scenario.SelectorValues) {
		return nil, fmt.Errorf("subscriber %d: selector range [%d, %d) outside 0..%d",
			s.ID, s.SelectFrom, s.SelectTo, scenario.SelectorValues)
	}
	if f.Filtered() && len(s.FilterValues) == 0 {
		return nil, fmt.Errorf("subscriber %d: filter case without filter values", s.ID)
	}
	sub := &stompSub{
		spec:    s,
		pol:     stompAckPolicyFor(f.Ack, s.AckEvery, s.AckIntervalMs),
		h:       h,
		durable: f.Subscription == scenario.Durable,
		lastAck: time.Now(),
		stop:    make(chan struct{}),
	}
	clientID := ""
	if sub.durable {
		clientID = stompClientID(s)
		if err := checkName(clientID); err != nil {
			return nil, err
		}
		if err := checkName(stompDurableName(s)); err != nil {
			return nil, err
		}
	}
	tc, err := d.tlsClient(s.Case)
	if err != nil {
		return nil, err
	}
	l, err := newStompLink(ctx, d.ep, tc, clientID, sub.onMessage, sub.subscribe)
	if err != nil {
		return nil, err
	}
	sub.link = l
	if sub.pol.interval > 0 {
		sub.wg.Add(1)
		go sub.ackTimer()
	}
	return sub, nil
}

// subscribe sends the SUBSCRIBE of a new connection and waits for its
// receipt.
func (s *stompSub) subscribe(ctx context.Context, c *stompConn) error {
	if err := c.request(ctx, subscribeFrame(s.spec, s.pol), "subscribed"); err != nil {
		return fmt.Errorf("subscriber %d: SUBSCRIBE %s: %w", s.spec.ID, stompTopic(s.spec.Case, s.spec.Topic), err)
	}
	return nil
}

// ConnStats implements ConnReporter.
func (s *stompSub) ConnStats() driver.ConnStats { return s.link.Log.Stats() }

// frameSize estimates the encoded size Artemis counts against the
// consumer window.
func frameSize(f *frame.Frame) int {
	n := len(f.Command) + len(f.Body) + 3
	for i := 0; i < f.Header.Len(); i++ {
		k, v := f.Header.GetAt(i)
		n += len(k) + len(v) + 2
	}
	return n
}

func (s *stompSub) onMessage(c *stompConn, f *frame.Frame) {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return
	}
	s.inflight.Add(1)
	s.mu.Unlock()
	defer s.inflight.Done()
	s.h(driver.Delivery{Body: f.Body, Redelivered: f.Header.Get("redelivered") == "true"})
	id := f.Header.Get(frame.Ack)
	s.mu.Lock()
	if s.ackConn != c { // a new connection: the old one's ACK state is void
		s.ackConn, s.pending, s.nPending, s.bPending = c, "", 0, 0
	}
	s.pending = id
	s.nPending++
	s.bPending += frameSize(f)
	due := s.nPending >= s.pol.every || (s.pol.maxBytes > 0 && s.bPending >= s.pol.maxBytes)
	if !due {
		s.mu.Unlock()
		return
	}
	err := s.ackLocked()
	s.mu.Unlock()
	if err != nil {
		c.fail(err)
	}
}

var ackPrefix = []byte("ACK\nid:")

// ackLocked sends the ACK for the newest message (cumulative in ack:client
// mode) on the connection that delivered it. Called with s.mu held.
func (s *stompSub) ackLocked() error {
	if s.pending == "" {
		return nil
	}
	id := s.pending
	s.pending, s.nPending, s.bPending = "", 0, 0
	s.lastAck = time.Now()
	err := s.ackConn.writeRaw(ackPrefix, []byte(id), []byte("\n\n\x00"))
	if errors.Is(err, errNotSent) {
		return nil // the connection is gone; the broker redelivers
	}
	return err
}

// ackTimer sends the pending cumulative ACK once it is interval old (DUPS_OK).
func (s *stompSub) ackTimer() {
	defer s.wg.Done()
	t := time.NewTicker(s.pol.interval / 2)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.mu.Lock()
			var err error
			c := s.ackConn
			if s.pending != "" && time.Since(s.lastAck) >= s.pol.interval {
				err = s.ackLocked()
			}
			s.mu.Unlock()
			if err != nil {
				c.fail(err)
			}
		}
	}
}

func (s *stompSub) stopTimer() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	s.wg.Wait()
}

// Close implements Subscriber. AUTO and DUPS_OK send their pending ACK
// first; CLIENT does not (the application did not acknowledge), so Artemis
// redelivers those messages to the durable subscription's next consumer.
// Then a non-durable subscriber UNSUBSCRIBEs (its consumer and temporary
// queue go, confirmed, before the connection ends) and every subscriber
// sends DISCONNECT (stomp_close.go says why in this order). A durable one
// does not UNSUBSCRIBE: closing its consumer that way would return the
// unacknowledged messages without Artemis' redelivered mark, which a
// session's end sets on the first of them (docs/artemis.md). While the
// broker is unreachable Close stops reconnecting and returns at once.
func (s *stompSub) Close() error {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.inflight.Wait()
	s.stopTimer()
	if s.pol.flushClose {
		s.mu.Lock()
		var err error
		if s.ackConn != nil && s.ackConn == s.link.Current() {
			err = s.ackLocked()
		}
		s.mu.Unlock()
		if err != nil {
			s.link.Abort()
			return err
		}
	}
	var farewell func(context.Context, *stompConn) error
	if !s.durable {
		farewell = func(ctx context.Context, c *stompConn) error {
			if err := c.unsubscribe(ctx, "0"); err != nil {
				return fmt.Errorf("subscriber %d: UNSUBSCRIBE: %w", s.spec.ID, err)
			}
			return nil
		}
	}
	return s.link.Close(10*time.Second, farewell)
}

// Abort implements Aborter: no more deliveries, no last ack, no DISCONNECT.
func (s *stompSub) Abort() {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.stopTimer()
	s.link.Abort()
}

// Unsubscribe implements Subscriber: UNSUBSCRIBE (with the durable name,
// which deletes the durable subscription's queue) and disconnect. While the
// broker is unreachable it waits up to closeBound for the connection, then
// gives up (the durable subscription stays; Purge removes it).
func (s *stompSub) Unsubscribe() error {
	// No delivery and no ACK after this point: an ACK written after the
	// UNSUBSCRIBE names a consumer the broker has closed, and Artemis
	// answers it with an ERROR (AMQ339018), which tears the connection
	// down (stomp_close.go).
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.inflight.Wait()
	s.stopTimer()
	var durable []string
	if s.durable {
		durable = []string{"durable-subscription-name", stompDurableName(s.spec)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), driver.CloseBound)
	defer cancel()
	c, err := s.link.Conn(ctx)
	if err != nil {
		s.link.Abort()
		return fmt.Errorf("subscriber %d: UNSUBSCRIBE: broker unreachable: %w", s.spec.ID, err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.unsubscribe(ctx, "0", durable...); err != nil {
		s.link.Abort()
		return fmt.Errorf("subscriber %d: UNSUBSCRIBE: %w", s.spec.ID, err)
	}
	return s.link.Close(10*time.Second, nil)
}
