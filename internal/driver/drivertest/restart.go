// Package drivertest holds the tests every broker's driver must pass
// against a real broker, written once and called from each broker
// package's tests: kill-and-restart with counts of what arrived, close
// during an outage, abort keeping a durable subscription, and a
// subscriber outrun by its publisher (lost against backlog).
package drivertest

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pslab/internal/broker"
	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// Restartable is a broker the tests can kill and restart.
type Restartable interface {
	broker.Restartable
	PID() int
}

// SeqSink records the sequence numbers (the first 8 bytes of a body, big
// endian) a subscriber received.
type SeqSink struct {
	mu    sync.Mutex
	seen  map[uint64]int
	total int
}

// NewSeqSink is an empty sink.
func NewSeqSink() *SeqSink { return &SeqSink{seen: map[uint64]int{}} }

// Handle is the subscriber's driver.Handler.
func (s *SeqSink) Handle(d driver.Delivery) {
	if len(d.Body) < 8 {
		return
	}
	seq := binary.BigEndian.Uint64(d.Body)
	s.mu.Lock()
	s.seen[seq]++
	s.total++
	s.mu.Unlock()
}

// Count returns how many distinct sequence numbers above from arrived.
func (s *SeqSink) Count(from uint64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for seq := range s.seen {
		if seq > from {
			n++
		}
	}
	return n
}

// Total is how many deliveries arrived, duplicates included.
func (s *SeqSink) Total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// Missing lists the numbers 1..upTo that never arrived.
func (s *SeqSink) Missing(upTo uint64) []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []uint64
	for seq := uint64(1); seq <= upTo; seq++ {
		if s.seen[seq] == 0 {
			out = append(out, seq)
		}
	}
	return out
}

// WaitFor polls cond every 20 ms up to limit.
func WaitFor(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ratePublisher publishes 100-byte bodies numbered 1, 2, ... every 5 ms.
type ratePublisher struct {
	p      driver.Publisher
	cancel context.CancelFunc
	done   chan struct{}
	sent   atomic.Uint64 // Publish returned nil for 1..sent
	err    error         // valid after done
}

func startPublishing(p driver.Publisher) *ratePublisher {
	ctx, cancel := context.WithCancel(context.Background())
	r := &ratePublisher{p: p, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for seq := uint64(1); ; seq++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			body := make([]byte, 100)
			binary.BigEndian.PutUint64(body, seq)
			if err := r.p.Publish(ctx, driver.Message{Body: body, Sel: -1}); err != nil {
				if !errors.Is(err, context.Canceled) {
					r.err = err
				}
				return
			}
			r.sent.Store(seq)
		}
	}()
	return r
}

// stop ends publishing, flushes and returns how many were sent.
func (r *ratePublisher) stop(t *testing.T) uint64 {
	t.Helper()
	r.cancel()
	<-r.done
	if r.err != nil {
		t.Fatalf("publish: %v", r.err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.p.Flush(ctx); err != nil {
		t.Fatalf("flush after restart: %v", err)
	}
	return r.sent.Load()
}

// RestartCase is one kill-and-restart run of driver D on broker B: a
// publisher publishes sequence numbers at about 200 msg/s into one
// subscriber while the broker is killed (SIGKILL) and restarted;
// afterwards it counts what arrived.
type RestartCase struct {
	D       driver.Driver
	B       Restartable
	Factors scenario.Factors
	// Lossless: durable + persistent, every confirmed send must arrive.
	Lossless bool
}

// TestPrefix is a fresh case prefix.
func TestPrefix() string {
	var b [4]byte
	rand.Read(b[:])
	return "pslab-rs-" + hex.EncodeToString(b[:])
}

// Run runs the case.
func (rc RestartCase) Run(t *testing.T) {
	ctx := context.Background()
	cs := driver.CaseSpec{Prefix: TestPrefix(), Factors: rc.Factors}
	if err := rc.D.Prepare(ctx, cs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rc.D.Purge(context.Background(), cs.Prefix); err != nil {
			t.Errorf("purge after restart: %v", err)
		}
	})
	sink := NewSeqSink()
	sub, err := rc.D.Subscriber(ctx, driver.SubSpec{Case: cs, DurableName: "d1", ClientID: cs.Prefix + "-c1"}, sink.Handle)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := rc.D.Publisher(ctx, driver.PubSpec{Case: cs, Window: 40})
	if err != nil {
		t.Fatal(err)
	}
	rp := startPublishing(pub)
	WaitFor(t, 30*time.Second, "100 messages before the kill", func() bool { return sink.Count(0) >= 100 })

	pid0 := rc.B.PID()
	killed := time.Now()
	if err := rc.B.Kill(); err != nil {
		t.Fatal(err)
	}
	atKill := rp.sent.Load()
	time.Sleep(time.Second)
	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := rc.B.Restart(rctx); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	if pid1 := rc.B.PID(); pid1 == pid0 || pid1 <= 0 {
		t.Errorf("PID %d after restart, was %d", pid1, pid0)
	}
	atRestart := rp.sent.Load()
	WaitFor(t, 60*time.Second, "100 messages published after the restart to arrive", func() bool {
		return sink.Count(atRestart) >= 100
	})
	sent := rp.stop(t)
	ps := pub.(driver.ConnReporter).ConnStats()
	if rc.Lossless {
		WaitFor(t, 30*time.Second, "every confirmed send", func() bool {
			return int64(len(sink.Missing(sent))) <= ps.InDoubt
		})
	} else {
		WaitFor(t, 30*time.Second, "the last send", func() bool { return sink.Count(sent-1) == 1 })
	}
	ss := sub.(driver.ConnReporter).ConnStats()
	missing := sink.Missing(sent)
	t.Logf("killed after %d sends; broker down %.2f s; %d sends when restarted; %d sent in all, %d received (%d deliveries), %d missing, in doubt %d, resent %d",
		atKill, restarted.Sub(killed).Seconds(), atRestart, sent, sink.Count(0), sink.Total(), len(missing), ps.InDoubt, ps.Resent)
	checkOutages(t, "publisher", ps, killed)
	checkOutages(t, "subscriber", ss, killed)
	if rc.Lossless && int64(len(missing)) > ps.InDoubt {
		t.Errorf("durable+persistent lost %d confirmed sends (in doubt only %d): %v", len(missing), ps.InDoubt, head(missing))
	}
	if err := pub.Close(); err != nil {
		t.Errorf("publisher close: %v", err)
	}
	if err := sub.Unsubscribe(); err != nil {
		t.Errorf("unsubscribe: %v", err)
	}
}

func head(s []uint64) []uint64 { return s[:min(len(s), 20)] }

// checkOutages wants at least one outage, noticed after the kill, and all
// of them restored.
func checkOutages(t *testing.T, who string, cs driver.ConnStats, killed time.Time) {
	t.Helper()
	if len(cs.Outages) == 0 {
		t.Errorf("%s recorded no outage", who)
		return
	}
	for i, o := range cs.Outages {
		if o.Restored.IsZero() {
			t.Errorf("%s outage %d not restored", who, i)
			continue
		}
		if o.Lost.Before(killed) || o.Restored.Before(o.Lost) {
			t.Errorf("%s outage %d: lost %v, restored %v, kill at %v", who, i, o.Lost, o.Restored, killed)
		}
		t.Logf("%s outage %d: noticed %.0f ms after the kill, usable again after %.0f ms",
			who, i, o.Lost.Sub(killed).Seconds()*1000, o.Restored.Sub(o.Lost).Seconds()*1000)
	}
}

// CloseDuringOutage kills the broker with a publisher and a subscriber
// connected and checks that closing them returns within a bound, then
// restarts the broker.
func CloseDuringOutage(t *testing.T, d driver.Driver, b Restartable, f scenario.Factors) {
	ctx := context.Background()
	cs := driver.CaseSpec{Prefix: TestPrefix(), Factors: f}
	if err := d.Prepare(ctx, cs); err != nil {
		t.Fatal(err)
	}
	sub, err := d.Subscriber(ctx, driver.SubSpec{Case: cs, DurableName: "d1", ClientID: cs.Prefix + "-c1"}, func(driver.Delivery) {})
	if err != nil {
		t.Fatal(err)
	}
	sub2, err := d.Subscriber(ctx, driver.SubSpec{Case: cs, ID: 1, DurableName: "d2", ClientID: cs.Prefix + "-c2"}, func(driver.Delivery) {})
	if err != nil {
		t.Fatal(err)
	}
	pub, err := d.Publisher(ctx, driver.PubSpec{Case: cs, Window: 10})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Kill(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		if err := b.Restart(rctx); err != nil {
			t.Fatal(err)
		}
		if err := d.Purge(ctx, cs.Prefix); err != nil {
			t.Errorf("purge after restart: %v", err)
		}
	}()
	// A Publish while the broker is down blocks until its context ends
	// (once the client has noticed the loss).
	time.Sleep(500 * time.Millisecond)
	pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	err = pub.Publish(pctx, driver.Message{Body: make([]byte, 100), Sel: -1})
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Publish while the broker is down: %v, want context.DeadlineExceeded", err)
	}
	const bound = 10 * time.Second
	for _, c := range []struct {
		what string
		fn   func() error
	}{{"publisher Close", pub.Close}, {"subscriber Unsubscribe", sub.Unsubscribe}, {"subscriber Close", sub2.Close}} {
		start := time.Now()
		err := c.fn()
		took := time.Since(start)
		t.Logf("%s during the outage: %v after %.0f ms", c.what, err, took.Seconds()*1000)
		if took > bound {
			t.Errorf("%s took %s during the outage, want < %s", c.what, took, bound)
		}
	}
}

// Factors are the factors of a one-to-one case of 100-byte bodies with
// subscription sub and delivery del.
func Factors(sub scenario.Subscription, del scenario.Delivery) scenario.Factors {
	return scenario.Factors{Publishers: 1, Subscribers: 1, Topics: 1, Model: scenario.OneToOne,
		Subscription: sub, Delivery: del, Ack: scenario.AckAuto, Body: scenario.BodyBytes, Size: 100}
}
