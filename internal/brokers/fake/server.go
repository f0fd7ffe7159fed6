package fake

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// Knobs are the faults the fake injects. They are deterministic (every
// n-th message of a subscription) so that a test can predict the load
// engine's accounting exactly; Stats says what was done.
type Knobs struct {
	// DropEvery drops every n-th message routed to a subscription.
	DropEvery int
	// DuplicateEvery delivers every n-th message routed to a subscription
	// twice, the second time not flagged redelivered.
	DuplicateEvery int
	// ReorderEvery holds every n-th message routed to a subscription back
	// and delivers it after the next one (or at the publisher's Flush).
	ReorderEvery int
	// SlowSubscribers subscribers (the lowest ids) wait SlowDelay before
	// each delivery: a slow consumer, whose queue fills.
	SlowSubscribers int
	SlowDelay       time.Duration
	// FailPublishAfter makes a publisher's Publish fail once it has sent
	// this many messages (0: never).
	FailPublishAfter int
	// DeliverOnSubscribe makes Subscriber hand what the subscription
	// already holds (a durable one's backlog) to the handler before it
	// returns, publishers waiting meanwhile: a broker whose first
	// deliveries overtake the reply to the subscribe (STOMP MESSAGE frames
	// before the SUBSCRIBE's RECEIPT).
	DeliverOnSubscribe bool
	// MaxQueue bounds the messages queued for one connected subscription;
	// a publisher whose message would exceed it waits (flow control).
	// Default 65536.
	MaxQueue int
	// ServiceRate, when positive, is the broker's service capacity in
	// messages per second: published messages wait in the broker's inbox
	// and are routed one every 1/ServiceRate seconds (service.go), so an
	// offered load above it builds a backlog at the broker and a capacity
	// search has a capacity to find. 0: routed at once.
	ServiceRate float64
	// FailSubscribes makes the driver's first n Subscriber calls fail, as
	// a connection set-up the link broke would: the lab's set-up retry
	// has something to retry.
	FailSubscribes int
}

// Stats count what the fake did, over all subscriptions.
type Stats struct {
	Routed      int64 // messages routed to subscriptions (one per matching subscription)
	Dropped     int64 // by DropEvery
	Duplicated  int64 // by DuplicateEvery
	Reordered   int64 // held messages delivered after the message that followed them
	Redelivered int64 // deliveries of unacknowledged messages again, after their subscriber left
	HeldAway    int64 // messages queued for a durable subscription while no subscriber was connected
	Discarded   int64 // queued for a non-durable subscription when its subscriber left
	Published   int64 // Publish calls that succeeded
	Refused     int64 // Publish calls that failed (FailPublishAfter)
}

// server is one in-memory broker. One mutex guards everything; cond is
// broadcast on every change a waiter may care about (a message queued,
// queue space freed, a connection closed).
type server struct {
	knobs Knobs

	mu       sync.Mutex
	cond     *sync.Cond
	subs     map[*subscription]struct{}
	durables map[string]*subscription // by client id + durable name
	stats    Stats
	// inbox holds published messages waiting for service (ServiceRate).
	inbox   []inboxed
	serving bool // the service goroutine runs
	// subscribeCalls counts Subscriber calls (FailSubscribes).
	subscribeCalls int
}

func newServer(k Knobs) *server {
	if k.MaxQueue <= 0 {
		k.MaxQueue = 1 << 16
	}
	s := &server{knobs: k, subs: map[*subscription]struct{}{}, durables: map[string]*subscription{}}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// message is one queued delivery.
type message struct {
	body        []byte
	redelivered bool
}

// subscription is what the broker keeps for a subscriber: while it is
// connected (conn != nil) its queue is delivered; a durable one outlives
// its connection and queues what arrives while it is away.
type subscription struct {
	prefix  string
	topic   int
	spec    driver.SubSpec
	durable string // key in server.durables; "" for a non-durable subscription

	queue   []message
	held    *message // by ReorderEvery, waiting for the next message
	routed  int      // messages routed here, for the knobs
	conn    *subscriber
	unacked []message // delivered, not yet acknowledged (DUPS_OK, CLIENT)
}

// matches tells whether a message with filtered value sel on topic of the
// case prefix is for s: the selector range, the filter's values, or every
// message of the topic.
func (s *subscription) matches(prefix string, topic, sel int) bool {
	if s.prefix != prefix || s.topic != topic {
		return false
	}
	f := s.spec.Case.Factors
	switch {
	case f.Selector:
		return sel >= s.spec.SelectFrom && sel < s.spec.SelectTo
	case f.Filtered():
		return slices.Contains(s.spec.FilterValues, sel)
	}
	return true
}

// route queues m for every matching subscription, applying the knobs.
// Called with mu held.
func (srv *server) route(prefix string, topic int, m driver.Message) {
	k := srv.knobs
	for s := range srv.subs {
		if !s.matches(prefix, topic, m.Sel) {
			continue
		}
		srv.stats.Routed++
		s.routed++
		if s.conn == nil {
			srv.stats.HeldAway++
		}
		msg := message{body: m.Body}
		switch {
		case every(k.DropEvery, s.routed):
			srv.stats.Dropped++
			continue
		case every(k.ReorderEvery, s.routed) && s.held == nil:
			s.held = &msg
			continue
		}
		s.queue = append(s.queue, msg)
		if every(k.DuplicateEvery, s.routed) {
			s.queue = append(s.queue, msg)
			srv.stats.Duplicated++
		}
		if s.held != nil {
			s.queue = append(s.queue, *s.held)
			s.held = nil
			srv.stats.Reordered++
		}
	}
	srv.cond.Broadcast()
}

func every(n, i int) bool { return n > 0 && i%n == 0 }

// releaseHeld queues the messages ReorderEvery still holds (nothing
// followed them), in order: a Flush confirms everything sent so far.
func (srv *server) releaseHeld(prefix string) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for s := range srv.subs {
		if s.held != nil && s.prefix == prefix {
			s.queue = append(s.queue, *s.held)
			s.held = nil
		}
	}
	srv.cond.Broadcast()
}

// full tells whether a connected subscription the message would go to has
// no room for it. Called with mu held.
func (srv *server) full(prefix string, topic, sel int) bool {
	for s := range srv.subs {
		if s.conn != nil && len(s.queue) >= srv.knobs.MaxQueue && s.matches(prefix, topic, sel) {
			return true
		}
	}
	return false
}

// wait blocks on cond until ctx ends or cond is broadcast. Called with mu
// held; it returns with mu held.
func (srv *server) wait(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		srv.mu.Lock()
		srv.cond.Broadcast()
		srv.mu.Unlock()
	})
	srv.cond.Wait()
	stop()
	return ctx.Err()
}

// purge removes every subscription of a case whose prefix starts with
// prefix, closing its connection if one is left.
func (srv *server) purge(prefix string) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	inbox := srv.inbox[:0]
	for _, in := range srv.inbox {
		if !strings.HasPrefix(in.prefix, prefix) {
			inbox = append(inbox, in)
		}
	}
	srv.inbox = inbox
	for s := range srv.subs {
		if !strings.HasPrefix(s.prefix, prefix) {
			continue
		}
		if s.conn != nil {
			s.conn.closed = true
		}
		delete(srv.subs, s)
		if s.durable != "" {
			delete(srv.durables, s.durable)
		}
	}
	srv.cond.Broadcast()
}

// ackEvery is how many deliveries a lazy (DUPS_OK, CLIENT) subscriber
// acknowledges at once.
func ackEvery(s driver.SubSpec) int {
	if s.Case.Factors.Ack == scenario.AckAuto {
		return 1
	}
	if s.AckEvery > 0 {
		return s.AckEvery
	}
	return driver.DefaultAckEvery
}
