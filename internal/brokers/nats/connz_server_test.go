package nats_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/driver"
	"pslab/internal/driver/drivertest"
	"pslab/internal/scenario"
	"pslab/internal/testbroker"
)

// TestCoreHeldCountsServerOutputBuffers: two core NATS cases, each with a
// subscriber that stopped reading, are sent 10 MB and 25 MB of 5 KB
// messages. The server queues what the sockets cannot take in each
// subscriber's output buffer, and the kernels hold the rest in their
// socket buffers; Held counts both as the case's backlog (not lost), each
// case only its own: what the server queued for it less what its client
// parsed (a read already under way when the stall began delivers a few),
// so held and delivered add up to what was sent.
func TestCoreHeldCountsServerOutputBuffers(t *testing.T) {
	ep := testbroker.NATS(t)
	require.NotEmpty(t, ep.MonitorURL, "the child nats-server has a monitoring endpoint")
	dialer := drivertest.NewStallDialer()
	ep.Dialer = dialer
	d := testbroker.OpenNATS(t, ep)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	const size = 5120
	f := drivertest.Factors(scenario.NonDurable, scenario.NonPersistent)
	f.Size = size
	cases := []struct {
		spec driver.CaseSpec
		sent int
	}{
		{driver.CaseSpec{Prefix: drivertest.TestPrefix(), Factors: f}, 2000},
		{driver.CaseSpec{Prefix: drivertest.TestPrefix(), Factors: f}, 5000},
	}
	mark := dialer.Count()
	delivered := make([]atomic.Int64, len(cases))
	for i, c := range cases {
		s, err := d.Subscriber(ctx, driver.SubSpec{Case: c.spec}, func(driver.Delivery) { delivered[i].Add(1) })
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
	}
	dialer.StallFrom(mark)
	t.Cleanup(func() { dialer.Release() }) // before the subscribers close (cleanups run last first)
	body := make([]byte, size)
	for _, c := range cases {
		p, err := d.Publisher(ctx, driver.PubSpec{Case: c.spec, Window: c.sent})
		require.NoError(t, err)
		for range c.sent {
			require.NoError(t, p.Publish(ctx, driver.Message{Body: body, Sel: -1}))
		}
		require.NoError(t, p.Flush(ctx), "the server has taken every send")
		require.NoError(t, p.Close())
	}
	// The server closes a connection it cannot write to for its write
	// deadline (nats.WriteDeadline): ask at once.
	for i, c := range cases {
		var h driver.Held
		var got int64
		// A message parsed just now reaches the handler a moment later.
		settled := func() bool {
			var err error
			h, err = d.Held(ctx, c.spec)
			require.NoError(t, err)
			got = delivered[i].Load()
			return h.Backlog+got == int64(c.sent)
		}
		for range 50 {
			if settled() {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("case %d: sent %d, delivered %d, held %d, %d of them beyond the server's output buffer (%s)", i, c.sent, got, h.Backlog, h.InSockets, h.Source)
		assert.Equal(t, int64(c.sent), h.Backlog+got, "case %d: every message sent to it is delivered or held, and no other case's", i)
		// What has left the output buffer is a lower bound: while the
		// server's write to a stalled socket blocks, connz's pending_bytes
		// still counts all of it (a fresh-clone CI run read 440 for one
		// case and 0 for the other). Its arithmetic is tested on fixed
		// connz numbers in connz_test.go.
		assert.GreaterOrEqual(t, h.InSockets, int64(0), "case %d", i)
		assert.LessOrEqual(t, h.InSockets, h.Backlog, "case %d: beyond the output buffer is part of what is held", i)
	}
}

// TestCoreHeldCountsConnectionsTheServerClosed: a subscriber that reads
// nothing (behind a stalled link) is closed by the server once its output
// buffer passes max_pending (64 MiB), and its client does not notice while
// its reads are stalled. The server lists it as closed while it still
// tears it down (up to its write deadline). Held finds it (connz
// state=closed): nothing of it counts as on its way, its counts are in
// Queued and Parsed, and the reason is kept.
func TestCoreHeldCountsConnectionsTheServerClosed(t *testing.T) {
	testbroker.SkipShort(t, "200 MiB through nats-server: half a minute under the race detector")
	ep := testbroker.NATS(t)
	dialer := drivertest.NewStallDialer()
	ep.Dialer = dialer
	d := testbroker.OpenNATS(t, ep)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const size, sent = 5120, 40000 // 200 MiB: past max_pending and what the socket buffers hold
	f := drivertest.Factors(scenario.NonDurable, scenario.NonPersistent)
	f.Size = size
	cs := driver.CaseSpec{Prefix: drivertest.TestPrefix(), Factors: f}
	mark := dialer.Count()
	var delivered atomic.Int64
	s, err := d.Subscriber(ctx, driver.SubSpec{Case: cs}, func(driver.Delivery) { delivered.Add(1) })
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	dialer.StallFrom(mark)
	t.Cleanup(func() { dialer.Release() }) // before the subscriber closes
	p, err := d.Publisher(ctx, driver.PubSpec{Case: cs, Window: sent})
	require.NoError(t, err)
	body := make([]byte, size)
	for range sent {
		require.NoError(t, p.Publish(ctx, driver.Message{Body: body, Sel: -1}))
	}
	require.NoError(t, p.Flush(ctx), "the server has taken every send")
	require.NoError(t, p.Close())
	var h driver.Held
	for range 100 {
		h, err = d.Held(ctx, cs)
		require.NoError(t, err)
		if h.ClosedByServer > 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("sent %d, delivered %d, held %+v", sent, delivered.Load(), h)
	require.Equal(t, 1, h.ClosedByServer, "the server closed the subscriber's connection")
	require.Len(t, h.ClosedReasons, 1)
	for reason := range h.ClosedReasons {
		assert.Contains(t, reason, "Slow Consumer")
	}
	assert.Zero(t, h.Backlog, "nothing of a closed connection is on its way")
	assert.Positive(t, h.Queued, "the server had queued for it")
	assert.GreaterOrEqual(t, h.Queued, h.Parsed)
}

// TestPublisherUnreceivedCountsSendsNotAtTheServer: a publisher whose
// writes stop (a socket behind a stalled link) says that the server has
// received none of its sends, by the server's own count on its
// connection; once the writes go on and the publisher has flushed, none
// is missing. Core NATS and JetStream.
func TestPublisherUnreceivedCountsSendsNotAtTheServer(t *testing.T) {
	ep := testbroker.NATS(t)
	for _, del := range []scenario.Delivery{scenario.NonPersistent, scenario.Persistent} {
		t.Run(string(del), func(t *testing.T) {
			dialer := drivertest.NewStallDialer()
			ep := ep
			ep.Dialer = dialer
			d := testbroker.OpenNATS(t, ep)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cs := driver.CaseSpec{Prefix: drivertest.TestPrefix(), Factors: drivertest.Factors(scenario.NonDurable, del)}
			require.NoError(t, d.Prepare(ctx, cs))
			mark := dialer.Count()
			p, err := d.Publisher(ctx, driver.PubSpec{Case: cs, Window: 1000})
			require.NoError(t, err)
			defer p.Close()
			dialer.StallWritesFrom(mark)
			const sent = 300
			for range sent {
				require.NoError(t, p.Publish(ctx, driver.Message{Body: make([]byte, 100), Sel: -1}))
			}
			ur, ok := p.(driver.UnreceivedReporter)
			require.True(t, ok, "a NATS publisher says what the server has not received")
			n, err := ur.Unreceived(ctx)
			require.NoError(t, err)
			assert.Equal(t, int64(sent), n, "nothing reached the server")
			require.NoError(t, dialer.ResumeWrites())
			require.NoError(t, p.Flush(ctx))
			// nats-server answers the flush's PING while parsing the buffer
			// that holds it, and adds the buffer's messages to the
			// connection's in_msgs (what connz reports) only after the
			// whole buffer: a reading right after the PONG may miss the
			// last buffer's (a busy machine saw 38 of 300). It catches up.
			assert.Eventually(t, func() bool {
				n, err = ur.Unreceived(ctx)
				return err == nil && n == 0
			}, 20*time.Second, 20*time.Millisecond, "after the flush the server has every send (last reading %d, %v)", n, err)
		})
	}
}

// TestJetStreamSubscriberPullsItsWindow: a JetStream subscriber whose
// handler is stuck on its first message (nothing acknowledged, its client
// buffer full) is handed at most its delivery window by the server, the
// rest waiting in the stream; without a window, the driver's default
// batch (here all 200).
func TestJetStreamSubscriberPullsItsWindow(t *testing.T) {
	ep := testbroker.NATS(t)
	d := testbroker.OpenNATS(t, ep)
	for _, tc := range []struct {
		window, want int
	}{{5, 5}, {0, 200}} {
		t.Run(strconv.Itoa(tc.window), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cs := driver.CaseSpec{Prefix: drivertest.TestPrefix(), Factors: drivertest.Factors(scenario.Durable, scenario.Persistent)}
			require.NoError(t, d.Prepare(ctx, cs))
			stuck := make(chan struct{})
			s, err := d.Subscriber(ctx, driver.SubSpec{Case: cs, DurableName: "w", Window: tc.window}, func(driver.Delivery) { <-stuck })
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			t.Cleanup(func() { close(stuck) }) // before the subscriber closes
			p, err := d.Publisher(ctx, driver.PubSpec{Case: cs, Window: 1000})
			require.NoError(t, err)
			defer p.Close()
			for range 200 {
				require.NoError(t, p.Publish(ctx, driver.Message{Body: make([]byte, 100), Sel: -1}))
			}
			require.NoError(t, p.Flush(ctx))
			var h driver.Held
			for range 50 {
				h, err = d.Held(ctx, cs)
				require.NoError(t, err)
				if h.Delivering >= int64(tc.want) {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			assert.Equal(t, int64(tc.want), h.Delivering, "handed to the subscriber, not acknowledged")
			assert.Equal(t, int64(200), h.Backlog, "nothing acknowledged: the stream holds all of it for the subscriber")
			time.Sleep(500 * time.Millisecond) // and no further pull follows
			h, err = d.Held(ctx, cs)
			require.NoError(t, err)
			assert.Equal(t, int64(tc.want), h.Delivering, "still the window, half a second later")
		})
	}
}
