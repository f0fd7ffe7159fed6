package artemis_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pslab/internal/broker"
	"pslab/internal/brokers/artemis"
	"pslab/internal/driver"
	"pslab/internal/driver/drivertest"
	"pslab/internal/scenario"
	"pslab/internal/testbroker"
)

// Integration tests against a real ActiveMQ Artemis (its own instance
// "test-driver" on free ports, testbroker.RunArtemis). Skipped when
// Artemis is not installed; CI runs `pslab broker install artemis` first
// (scripts/test.sh).

// collector records deliveries.
type collector struct {
	mu   sync.Mutex
	msgs []driver.Delivery
}

func (c *collector) handle(d driver.Delivery) {
	c.mu.Lock()
	c.msgs = append(c.msgs, d)
	c.mu.Unlock()
}

// waitBody waits until a delivery with body b arrived and returns all so far.
func (c *collector) waitBody(t *testing.T, b string) []driver.Delivery {
	t.Helper()
	return c.wait(t, "body "+b, func(ms []driver.Delivery) bool {
		for _, m := range ms {
			if string(m.Body) == b {
				return true
			}
		}
		return false
	})
}

func (c *collector) waitCount(t *testing.T, n int) []driver.Delivery {
	t.Helper()
	return c.wait(t, strconv.Itoa(n)+" deliveries", func(ms []driver.Delivery) bool { return len(ms) >= n })
}

func (c *collector) wait(t *testing.T, what string, done func([]driver.Delivery) bool) []driver.Delivery {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c.mu.Lock()
		ms := append([]driver.Delivery(nil), c.msgs...)
		c.mu.Unlock()
		if done(ms) {
			return ms
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 30 s for %s; got %d deliveries: %s", what, len(ms), bodies(ms))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func bodies(ms []driver.Delivery) string {
	var s []string
	for _, m := range ms {
		b := string(m.Body)
		if m.Redelivered {
			b += "(R)"
		}
		s = append(s, b)
	}
	return strings.Join(s, ",")
}

// plain lists bodies without redelivery marks. Artemis sets
// redelivered:true only on messages it counts as delivered (after a close,
// the first unacknowledged one), so tests compare bodies.
func plain(ms []driver.Delivery) string {
	var s []string
	for _, m := range ms {
		s = append(s, string(m.Body))
	}
	return strings.Join(s, ",")
}

func names(prefix string, from, to int) string {
	var s []string
	for i := from; i < to; i++ {
		s = append(s, prefix+strconv.Itoa(i))
	}
	return strings.Join(s, ",")
}

type env struct {
	t  *testing.T
	d  driver.Driver
	cs driver.CaseSpec
}

func newEnv(t *testing.T, d driver.Driver, f scenario.Factors) *env {
	var b [4]byte
	rand.Read(b[:])
	prefix := "pslab-test-" + hex.EncodeToString(b[:])
	cs := driver.CaseSpec{Prefix: prefix, Factors: f}
	ctx := context.Background()
	if err := d.Prepare(ctx, cs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Purge(context.Background(), prefix); err != nil {
			t.Errorf("purge %s: %v", prefix, err)
		}
	})
	return &env{t: t, d: d, cs: cs}
}

func (e *env) factors(mod func(*scenario.Factors)) driver.CaseSpec {
	cs := e.cs
	mod(&cs.Factors)
	return cs
}

// publish sends bodies (with selector values sels, or -1) and flushes.
func (e *env) publish(cs driver.CaseSpec, window int, bodies []string, sels []int) {
	e.t.Helper()
	ctx := context.Background()
	p, err := e.d.Publisher(ctx, driver.PubSpec{Case: cs, Window: window})
	if err != nil {
		e.t.Fatal(err)
	}
	for i, b := range bodies {
		sel := -1
		if sels != nil {
			sel = sels[i]
		}
		if err := p.Publish(ctx, driver.Message{Body: []byte(b), Sel: sel}); err != nil {
			e.t.Fatal(err)
		}
	}
	if err := p.Flush(ctx); err != nil {
		e.t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		e.t.Fatal(err)
	}
}

func seqBodies(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

func (e *env) sub(s driver.SubSpec, c *collector) driver.Subscriber {
	e.t.Helper()
	if s.Case.Prefix == "" {
		s.Case = e.cs
	}
	sub, err := e.d.Subscriber(context.Background(), s, c.handle)
	if err != nil {
		e.t.Fatal(err)
	}
	return sub
}

// durableSpec is a durable subscriber whose queue name the test knows.
func (e *env) durableSpec(ack scenario.AckMode, every, intervalMs int) (driver.SubSpec, string) {
	cs := e.factors(func(f *scenario.Factors) { f.Subscription, f.Ack = scenario.Durable, ack })
	s := driver.SubSpec{Case: cs, ClientID: e.cs.Prefix + "-c1", DurableName: "d1", AckEvery: every, AckIntervalMs: intervalMs}
	return s, s.ClientID + ".d1"
}

// waitDetached waits until the broker has dropped the consumers of queue
// (a closed connection's session is cleaned up asynchronously).
func (e *env) waitDetached(queue string) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := artemis.STOMPConsumers(context.Background(), e.d, queue)
		if err != nil {
			e.t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("queue %s still has %d consumers after 30 s", queue, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// redelivered reconnects the durable subscription, publishes a sentinel
// and returns what arrived up to and including it.
func (e *env) reconnect(s driver.SubSpec, queue string) []driver.Delivery {
	e.t.Helper()
	e.waitDetached(queue)
	c := &collector{}
	sub := e.sub(s, c)
	defer sub.Close()
	e.publish(s.Case, 10, []string{"end"}, nil)
	return c.waitBody(e.t, "end")
}

// runArtemis starts the test instance on loopback and opens its STOMP
// driver; both end with the test.
func runArtemis(t *testing.T) (*artemis.Artemis, driver.Endpoint, driver.Driver) {
	t.Helper()
	return testbroker.RunArtemis(t, artemis.ArtemisConfig{Instance: "test-driver", HeapMB: 512})
}

func TestArtemisSTOMP(t *testing.T) {
	a, ep, d := runArtemis(t)
	ctx := context.Background()
	base := scenario.Factors{Publishers: 1, Subscribers: 1, Topics: 1, Model: scenario.OneToOne,
		Subscription: scenario.NonDurable, Delivery: scenario.NonPersistent, Ack: scenario.AckAuto,
		Body: scenario.BodyBytes, Size: 100}

	t.Run("BadPassword", func(t *testing.T) {
		bad := ep
		bad.Password = "wrong-password"
		d2, _ := artemis.NewSTOMP(bad)
		_, err := d2.Publisher(ctx, driver.PubSpec{Case: driver.CaseSpec{Prefix: "pslab-x", Factors: base}, Window: 1})
		if !errors.Is(err, artemis.ErrLoginRefused) {
			t.Fatalf("wrong password: %v", err)
		}
		t.Logf("as a user sees it: %v", err)
	})

	t.Run("NonDurableDelivers", func(t *testing.T) {
		e := newEnv(t, d, base)
		c := &collector{}
		sub := e.sub(driver.SubSpec{}, c)
		e.publish(e.cs, 1, seqBodies("m", 50), nil) // window 1: stop and wait
		got := c.waitCount(t, 50)
		sub.Close()
		if bodies(got) != names("m", 0, 50) {
			t.Errorf("got %s", bodies(got))
		}
	})

	t.Run("DurableReceivesWhileDisconnected", func(t *testing.T) {
		e := newEnv(t, d, base)
		s, q := e.durableSpec(scenario.AckAuto, 0, 0)
		e.sub(s, &collector{}).Close() // creates the subscription
		e.publish(s.Case, 16, seqBodies("m", 50), nil)
		got := e.reconnect(s, q)
		if want := names("m", 0, 50) + ",end"; bodies(got) != want {
			t.Errorf("after reconnect got %s, want %s", bodies(got), want)
		}
	})

	t.Run("Selector", func(t *testing.T) {
		f := base
		f.Selector = true
		e := newEnv(t, d, f)
		c1, c2 := &collector{}, &collector{}
		s1 := e.sub(driver.SubSpec{SelectFrom: 20, SelectTo: 40}, c1)
		s2 := e.sub(driver.SubSpec{ID: 1, SelectFrom: 80, SelectTo: 100}, c2)
		var bs []string
		var sels []int
		for i := 0; i < 500; i++ {
			bs = append(bs, fmt.Sprintf("%d/%d", i, i%100))
			sels = append(sels, i%100)
		}
		e.publish(e.cs, 100, append(bs, "end"), append(sels, 25))
		e.publish(e.cs, 100, []string{"end"}, []int{85})
		for _, tc := range []struct {
			c        *collector
			from, to int
		}{{c1, 20, 40}, {c2, 80, 100}} {
			got := tc.c.waitBody(t, "end")
			var want []string
			for i := 0; i < 500; i++ {
				if v := i % 100; v >= tc.from && v < tc.to {
					want = append(want, fmt.Sprintf("%d/%d", i, v))
				}
			}
			want = append(want, "end")
			if len(got) != 101 || bodies(got) != strings.Join(want, ",") {
				t.Errorf("selector [%d,%d): %d deliveries (want 100 + end): %s", tc.from, tc.to, len(got), bodies(got))
			}
		}
		s1.Close()
		s2.Close()
	})

	t.Run("AckAutoRedeliversNothing", func(t *testing.T) {
		e := newEnv(t, d, base)
		s, q := e.durableSpec(scenario.AckAuto, 0, 0)
		c := &collector{}
		sub := e.sub(s, c)
		e.publish(s.Case, 16, seqBodies("m", 20), nil)
		c.waitCount(t, 20)
		sub.Close()
		if got := e.reconnect(s, q); bodies(got) != "end" {
			t.Errorf("after AUTO ack of all, reconnect got %s, want only end", bodies(got))
		}
	})

	t.Run("AckClientRedeliversAfterLastAck", func(t *testing.T) {
		e := newEnv(t, d, base)
		s, q := e.durableSpec(scenario.AckClient, 10, 0)
		c := &collector{}
		sub := e.sub(s, c)
		e.publish(s.Case, 16, seqBodies("m", 25), nil)
		c.waitCount(t, 25)
		sub.Close()
		got := e.reconnect(s, q)
		if want := "m20,m21,m22,m23,m24,end"; plain(got) != want {
			t.Errorf("CLIENT ack every 10 of 25: reconnect got %s, want %s", bodies(got), want)
		}
		if !got[0].Redelivered {
			t.Errorf("first redelivered message not marked redelivered: %s", bodies(got))
		}
	})

	t.Run("AckDupsOKFlushesOnClose", func(t *testing.T) {
		e := newEnv(t, d, base)
		s, q := e.durableSpec(scenario.AckDupsOK, 10, 3600*1000)
		c := &collector{}
		sub := e.sub(s, c)
		e.publish(s.Case, 16, seqBodies("m", 25), nil)
		c.waitCount(t, 25)
		sub.Close()
		if got := e.reconnect(s, q); bodies(got) != "end" {
			t.Errorf("DUPS_OK closed cleanly: reconnect got %s, want only end", bodies(got))
		}
	})

	t.Run("AckDupsOKCrashRedeliversUnacked", func(t *testing.T) {
		e := newEnv(t, d, base)
		s, q := e.durableSpec(scenario.AckDupsOK, 10, 3600*1000)
		c := &collector{}
		sub := e.sub(s, c)
		e.publish(s.Case, 16, seqBodies("m", 25), nil)
		c.waitCount(t, 25)
		artemis.AbortSTOMPSubscriber(sub)
		got := e.reconnect(s, q)
		if want := "m20,m21,m22,m23,m24,end"; plain(got) != want {
			t.Errorf("DUPS_OK every 10, crashed after 25: reconnect got %s, want %s", bodies(got), want)
		}
	})

	t.Run("AckDupsOKTimer", func(t *testing.T) {
		e := newEnv(t, d, base)
		s, q := e.durableSpec(scenario.AckDupsOK, 1000, 50)
		c := &collector{}
		sub := e.sub(s, c)
		e.publish(s.Case, 16, seqBodies("m", 25), nil)
		c.waitCount(t, 25)
		deadline := time.Now().Add(30 * time.Second)
		for artemis.STOMPPendingAcks(sub) > 0 { // the 50 ms timer acks
			if time.Now().After(deadline) {
				t.Fatal("DUPS_OK timer did not ack within 30 s")
			}
			time.Sleep(10 * time.Millisecond)
		}
		artemis.AbortSTOMPSubscriber(sub)
		if got := e.reconnect(s, q); bodies(got) != "end" {
			t.Errorf("DUPS_OK acked by timer, crashed: reconnect got %s, want only end", bodies(got))
		}
	})

	t.Run("UnsubscribeAndPurge", func(t *testing.T) {
		e := newEnv(t, d, base)
		s, q := e.durableSpec(scenario.AckAuto, 0, 0)
		sub := e.sub(s, &collector{})
		if err := sub.Unsubscribe(); err != nil {
			t.Fatal(err)
		}
		if qs, _ := artemis.STOMPQueueNames(ctx, d, q); len(qs) != 0 {
			t.Errorf("after Unsubscribe queues %v remain", qs)
		}
		// Two durable subscriptions left behind, one with messages.
		for i := 0; i < 2; i++ {
			s2 := s
			s2.ID, s2.ClientID = i, fmt.Sprintf("%s-k%d", e.cs.Prefix, i)
			e.sub(s2, &collector{}).Close()
		}
		e.publish(s.Case, 16, seqBodies("m", 10), nil)
		qs, err := artemis.STOMPQueueNames(ctx, d, e.cs.Prefix)
		if err != nil || len(qs) != 2 {
			t.Fatalf("durable queues before purge: %v, %v", qs, err)
		}
		if err := d.Purge(ctx, e.cs.Prefix); err != nil {
			t.Fatal(err)
		}
		if qs, err := artemis.STOMPQueueNames(ctx, d, e.cs.Prefix); err != nil || len(qs) != 0 {
			t.Fatalf("queues after purge: %v, %v", qs, err)
		}
		// A new subscription with the old name starts empty.
		s2 := s
		s2.ClientID = e.cs.Prefix + "-k0"
		c := &collector{}
		sub = e.sub(s2, c)
		e.publish(s.Case, 16, []string{"end"}, nil)
		if got := c.waitBody(t, "end"); bodies(got) != "end" {
			t.Errorf("after purge the subscription got %s, want only end", bodies(got))
		}
		sub.Close()
	})

	// The purge never removes a consumer by force (that ERROR frame can
	// deadlock Artemis 2.44, stomp_close.go): while a subscriber is
	// connected it refuses, the subscriber keeps receiving, and once it
	// has closed the purge goes through.
	t.Run("PurgeWaitsForConsumers", func(t *testing.T) {
		e := newEnv(t, d, base)
		s, q := e.durableSpec(scenario.AckAuto, 0, 0)
		c := &collector{}
		sub := e.sub(s, c)
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := d.Purge(pctx, e.cs.Prefix)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "still in use") {
			t.Fatalf("purge with a consumer connected: %v, want a refusal", err)
		}
		t.Logf("as a user sees it: %v", err)
		e.publish(s.Case, 16, []string{"after"}, nil)
		if got := c.waitBody(t, "after"); bodies(got) != "after" {
			t.Errorf("the subscriber got %s after the refused purge, want after", bodies(got))
		}
		if err := sub.Close(); err != nil {
			t.Fatal(err)
		}
		if err := d.Purge(ctx, e.cs.Prefix); err != nil {
			t.Fatalf("purge after Close: %v", err)
		}
		if qs, err := artemis.STOMPQueueNames(ctx, d, q); err != nil || len(qs) != 0 {
			t.Fatalf("queues after purge: %v, %v", qs, err)
		}
	})

	// Held.Routed is what Artemis put on the case's queues: none of the
	// sends held back in the publisher's socket (as behind a stalled
	// link), all of them on each queue once they are through.
	t.Run("HeldCountsWhatWasRouted", func(t *testing.T) {
		e := newEnv(t, d, base)
		c1, c2 := &collector{}, &collector{}
		s1 := e.sub(driver.SubSpec{}, c1)
		defer s1.Close()
		s2 := e.sub(driver.SubSpec{ID: 1}, c2)
		defer s2.Close()
		dialer := drivertest.NewStallDialer()
		sep := ep
		sep.Dialer = dialer
		sd, err := artemis.NewSTOMP(sep)
		if err != nil {
			t.Fatal(err)
		}
		defer sd.Close()
		p, err := sd.Publisher(ctx, driver.PubSpec{Case: e.cs, Window: 1000})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if _, ok := p.(driver.UnreceivedReporter); ok {
			t.Error("a STOMP publisher cannot say what the broker received; the broker's routed count stands in")
		}
		dialer.StallWritesFrom(0)
		const sent = 300
		for range sent {
			if err := p.Publish(ctx, driver.Message{Body: make([]byte, 100), Sel: -1}); err != nil {
				t.Fatal(err)
			}
		}
		routed := func() int64 {
			t.Helper()
			h, err := d.(driver.HeldReporter).Held(ctx, e.cs)
			if err != nil {
				t.Fatal(err)
			}
			if h.Routed == nil {
				t.Fatalf("no routed count: %+v", h)
			}
			return *h.Routed
		}
		if n := routed(); n != 0 {
			t.Errorf("routed %d with every send held back in the publisher's socket, want 0", n)
		}
		if err := dialer.ResumeWrites(); err != nil {
			t.Fatal(err)
		}
		if err := p.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		c1.waitCount(t, sent)
		c2.waitCount(t, sent)
		if n := routed(); n != 2*sent {
			t.Errorf("routed %d after the flush, want %d (every send on each of two queues)", n, 2*sent)
		}
	})

	// Last: restarts the broker.
	t.Run("PersistentSurvivesRestart", func(t *testing.T) {
		e := newEnv(t, d, base)
		s, q := e.durableSpec(scenario.AckAuto, 0, 0)
		e.sub(s, &collector{}).Close()
		pers := e.factors(func(f *scenario.Factors) { f.Subscription, f.Delivery = scenario.Durable, scenario.Persistent })
		e.publish(pers, 8, seqBodies("p", 20), nil)
		e.publish(s.Case, 8, seqBodies("n", 20), nil)
		if err := a.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		ep2, err := a.Start(ctx, broker.LoopbackHost{})
		if err != nil {
			t.Fatal(err)
		}
		if ep2 != ep {
			t.Fatalf("endpoint changed across restart: %+v vs %+v", ep2, ep)
		}
		got := e.reconnect(s, q) // the driver's admin connection reconnects
		if want := names("p", 0, 20) + ",end"; bodies(got) != want {
			t.Errorf("after restart got %s, want %s (persistent only)", bodies(got), want)
		}
	})
}
