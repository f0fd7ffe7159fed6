package artemis

import (
	"context"
	"testing"
	"time"

	"github.com/go-stomp/stomp/v3/frame"

	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// waitStats polls a client's ConnStats until ok or 10 s.
func waitStats(t *testing.T, r driver.ConnReporter, what string, ok func(driver.ConnStats) bool) driver.ConnStats {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := r.ConnStats()
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 10 s: %+v", what, st)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A publisher whose connection drops counts the sends after the last
// receipt as in doubt and goes on on a new connection.
func TestPublisherReconnectInDoubt(t *testing.T) {
	s := newFakeSTOMP(t, true)
	d, _ := NewSTOMP(s.endpoint())
	ctx := context.Background()
	pub, err := d.Publisher(ctx, driver.PubSpec{Case: driver.CaseSpec{Prefix: "pslab-t", Factors: baseFactors()}, Window: 8}) // receipt every 2
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	for i := 0; i < 6; i++ {
		if err := pub.Publish(ctx, driver.Message{Body: []byte("x"), Sel: -1}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 6; i++ {
		s.nextOf(frame.SEND)
	}
	s.release(1) // confirms sends 1 and 2
	p := pub.(*stompPub)
	for p.confirmed.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	s.drop()
	waitStats(t, p, "outage", func(st driver.ConnStats) bool { return len(st.Outages) == 1 })
	if err := pub.Publish(ctx, driver.Message{Body: []byte("after"), Sel: -1}); err != nil {
		t.Fatal(err)
	}
	if f := s.nextOf(frame.SEND); string(f.Body) != "after" {
		t.Fatalf("first send on the new connection: %q", f.Body)
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	st := p.ConnStats()
	if st.InDoubt != 4 || st.Resent != 0 {
		t.Errorf("InDoubt %d, Resent %d; want 4 (sends 3..6) and 0", st.InDoubt, st.Resent)
	}
	if o := st.Outages[0]; o.Restored.Before(o.Lost) || o.Restored.IsZero() {
		t.Errorf("outage %+v", o)
	}
}

// A durable subscriber whose connection drops logs in again with its
// client-id and subscribes again with the same durable name.
func TestSubscriberResubscribes(t *testing.T) {
	s := newFakeSTOMP(t, false)
	d, _ := NewSTOMP(s.endpoint())
	f := baseFactors()
	f.Subscription = scenario.Durable
	spec := driver.SubSpec{Case: driver.CaseSpec{Prefix: "pslab-t", Factors: f}, ClientID: "pslab-t-c1", DurableName: "d1"}
	sub, err := d.Subscriber(context.Background(), spec, func(driver.Delivery) {})
	if err != nil {
		t.Fatal(err)
	}
	first := s.nextOf(frame.SUBSCRIBE)
	s.drop()
	second := s.nextOf(frame.SUBSCRIBE)
	for _, h := range []string{frame.Destination, "durable-subscription-name", frame.Ack, "subscription-type"} {
		if first.Header.Get(h) != second.Header.Get(h) {
			t.Errorf("SUBSCRIBE header %s: %q then %q", h, first.Header.Get(h), second.Header.Get(h))
		}
	}
	st := waitStats(t, sub.(driver.ConnReporter), "restored outage", func(st driver.ConnStats) bool {
		return len(st.Outages) == 1 && !st.Outages[0].Restored.IsZero()
	})
	s.mu.Lock()
	ids := append([]string(nil), s.clientIDs...)
	s.mu.Unlock()
	if len(ids) != 2 || ids[0] != "pslab-t-c1" || ids[1] != ids[0] {
		t.Errorf("CONNECT client-ids %v, want the same twice", ids)
	}
	t.Logf("outage %v", st.Outages[0].Restored.Sub(st.Outages[0].Lost))
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}
}
