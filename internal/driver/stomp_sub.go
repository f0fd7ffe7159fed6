package driver

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/go-stomp/stomp/v3/frame"

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
		every = DefaultAckEvery
	}
	if intervalMs <= 0 {
		intervalMs = DefaultAckIntervalMs
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
func subscribeFrame(s SubSpec, pol stompAckPolicy) *frame.Frame {
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
type stompSub struct {
	c       *stompConn
	spec    SubSpec
	pol     stompAckPolicy
	h       Handler
	durable bool

	mu       sync.Mutex
	pending  string // ack id of the newest unacknowledged message
	nPending int
	bPending int
	lastAck  time.Time
	stop     chan struct{}
	wg       sync.WaitGroup
}

// Subscriber implements Driver. It returns once the broker has confirmed
// the subscription (a RECEIPT for the SUBSCRIBE).
func (d *stompDriver) Subscriber(ctx context.Context, s SubSpec, h Handler) (Subscriber, error) {
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
	c, err := dialSTOMP(ctx, d.ep, clientID, sub.onMessage)
	if err != nil {
		return nil, err
	}
	sub.c = c
	if err := c.request(ctx, subscribeFrame(s, sub.pol), "subscribed"); err != nil {
		c.abort()
		return nil, fmt.Errorf("subscriber %d: SUBSCRIBE %s: %w", s.ID, stompTopic(s.Case, s.Topic), err)
	}
	if sub.pol.interval > 0 {
		sub.wg.Add(1)
		go sub.ackTimer()
	}
	return sub, nil
}

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

func (s *stompSub) onMessage(f *frame.Frame) {
	s.h(Delivery{Body: f.Body, Redelivered: f.Header.Get("redelivered") == "true"})
	id := f.Header.Get(frame.Ack)
	s.mu.Lock()
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
		s.c.fail(err)
	}
}

var ackPrefix = []byte("ACK\nid:")

// ackLocked sends the ACK for the newest message (cumulative in ack:client
// mode). Called with s.mu held.
func (s *stompSub) ackLocked() error {
	if s.pending == "" {
		return nil
	}
	id := s.pending
	s.pending, s.nPending, s.bPending = "", 0, 0
	s.lastAck = time.Now()
	return s.c.writeRaw(ackPrefix, []byte(id), []byte("\n\n\x00"))
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
		case <-s.c.done:
			return
		case <-t.C:
			s.mu.Lock()
			var err error
			if s.pending != "" && time.Since(s.lastAck) >= s.pol.interval {
				err = s.ackLocked()
			}
			s.mu.Unlock()
			if err != nil {
				s.c.fail(err)
				return
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
func (s *stompSub) Close() error {
	s.stopTimer()
	if s.pol.flushClose {
		s.mu.Lock()
		err := s.ackLocked()
		s.mu.Unlock()
		if err != nil {
			s.c.abort()
			return err
		}
	}
	return s.c.close(10 * time.Second)
}

// Unsubscribe implements Subscriber: UNSUBSCRIBE (with the durable name,
// which deletes the durable subscription's queue) and disconnect.
func (s *stompSub) Unsubscribe() error {
	s.stopTimer()
	f := frame.New(frame.UNSUBSCRIBE, frame.Id, "0")
	if s.durable {
		f.Header.Add("durable-subscription-name", stompDurableName(s.spec))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.c.request(ctx, f, "unsubscribed"); err != nil {
		s.c.abort()
		return fmt.Errorf("subscriber %d: UNSUBSCRIBE: %w", s.spec.ID, err)
	}
	return s.c.close(10 * time.Second)
}
