package driver_test

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

func TestMain(m *testing.M) { broker.RunTests(m) }

// Broker restart tests: a publisher publishes sequence numbers at about
// 200 msg/s into one subscriber while the broker is killed (SIGKILL) and
// restarted; afterwards the test counts what arrived.

// restartable is a broker the tests can kill and restart.
type restartable interface {
	broker.Restartable
	PID() int
}

// seqSink records the sequence numbers a subscriber received.
type seqSink struct {
	mu    sync.Mutex
	seen  map[uint64]int
	total int
}

func newSeqSink() *seqSink { return &seqSink{seen: map[uint64]int{}} }

func (s *seqSink) handle(d driver.Delivery) {
	if len(d.Body) < 8 {
		return
	}
	seq := binary.BigEndian.Uint64(d.Body)
	s.mu.Lock()
	s.seen[seq]++
	s.total++
	s.mu.Unlock()
}

// count returns how many distinct sequence numbers above from arrived.
func (s *seqSink) count(from uint64) int {
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

// missing lists the numbers 1..upTo that never arrived.
func (s *seqSink) missing(upTo uint64) []uint64 {
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

// waitFor polls cond every 20 ms up to limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
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

// restartCase is one kill-and-restart run.
type restartCase struct {
	d       driver.Driver
	b       restartable
	factors scenario.Factors
	// lossless: durable + persistent, every confirmed send must arrive.
	lossless bool
}

func testPrefix() string {
	var b [4]byte
	rand.Read(b[:])
	return "pslab-rs-" + hex.EncodeToString(b[:])
}

func (rc restartCase) run(t *testing.T) {
	ctx := context.Background()
	cs := driver.CaseSpec{Prefix: testPrefix(), Factors: rc.factors}
	if err := rc.d.Prepare(ctx, cs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rc.d.Purge(context.Background(), cs.Prefix); err != nil {
			t.Errorf("purge after restart: %v", err)
		}
	})
	sink := newSeqSink()
	sub, err := rc.d.Subscriber(ctx, driver.SubSpec{Case: cs, DurableName: "d1", ClientID: cs.Prefix + "-c1"}, sink.handle)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := rc.d.Publisher(ctx, driver.PubSpec{Case: cs, Window: 40})
	if err != nil {
		t.Fatal(err)
	}
	rp := startPublishing(pub)
	waitFor(t, 30*time.Second, "100 messages before the kill", func() bool { return sink.count(0) >= 100 })

	pid0 := rc.b.PID()
	killed := time.Now()
	if err := rc.b.Kill(); err != nil {
		t.Fatal(err)
	}
	atKill := rp.sent.Load()
	time.Sleep(time.Second)
	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := rc.b.Restart(rctx); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	if pid1 := rc.b.PID(); pid1 == pid0 || pid1 <= 0 {
		t.Errorf("PID %d after restart, was %d", pid1, pid0)
	}
	atRestart := rp.sent.Load()
	waitFor(t, 60*time.Second, "100 messages published after the restart to arrive", func() bool {
		return sink.count(atRestart) >= 100
	})
	sent := rp.stop(t)
	ps := pub.(driver.ConnReporter).ConnStats()
	if rc.lossless {
		waitFor(t, 30*time.Second, "every confirmed send", func() bool {
			return int64(len(sink.missing(sent))) <= ps.InDoubt
		})
	} else {
		waitFor(t, 30*time.Second, "the last send", func() bool { return sink.count(sent-1) == 1 })
	}
	ss := sub.(driver.ConnReporter).ConnStats()
	missing := sink.missing(sent)
	t.Logf("killed after %d sends; broker down %.2f s; %d sends when restarted; %d sent in all, %d received (%d deliveries), %d missing, in doubt %d, resent %d",
		atKill, restarted.Sub(killed).Seconds(), atRestart, sent, sink.count(0), sink.total, len(missing), ps.InDoubt, ps.Resent)
	checkOutages(t, "publisher", ps, killed)
	checkOutages(t, "subscriber", ss, killed)
	if rc.lossless && int64(len(missing)) > ps.InDoubt {
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

// closeDuringOutage kills the broker with a publisher and a subscriber
// connected and checks that closing them returns within a bound, then
// restarts the broker.
func closeDuringOutage(t *testing.T, d driver.Driver, b restartable, f scenario.Factors) {
	ctx := context.Background()
	cs := driver.CaseSpec{Prefix: testPrefix(), Factors: f}
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
