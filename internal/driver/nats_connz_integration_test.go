package driver_test

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// stallDialer dials on the host network and can stop the reading of the
// connections it made (stallFrom): a subscriber that stops taking what
// the server sends, as one behind a slow link does, so that the server
// queues what it owes in that connection's output buffer.
type stallDialer struct {
	mu      sync.Mutex
	conns   []*stallConn
	release chan struct{}
}

type stallConn struct {
	net.Conn
	stalled atomic.Bool
	release <-chan struct{}
}

func (c *stallConn) Read(p []byte) (int, error) {
	if c.stalled.Load() {
		<-c.release
	}
	return c.Conn.Read(p)
}

func (d *stallDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	sc := &stallConn{Conn: c, release: d.release}
	d.conns = append(d.conns, sc)
	return sc, nil
}

func (d *stallDialer) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.conns)
}

// stallFrom stops reading on the connections made from the i-th on.
func (d *stallDialer) stallFrom(i int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.conns[i:] {
		c.stalled.Store(true)
	}
}

// TestCoreHeldCountsServerOutputBuffers: two core NATS cases, each with a
// subscriber that stopped reading, are sent 10 MB and 25 MB of 5 KB
// messages. The server queues what the sockets cannot take in each
// subscriber's output buffer; Held counts those messages as the case's
// backlog (not lost), each case only its own: never more than was sent to
// it, and more than the kernel's socket buffers (at most 4 MiB + 128 KiB
// here, about 820 messages; half of what was sent) could have taken.
func TestCoreHeldCountsServerOutputBuffers(t *testing.T) {
	_, ep := startNATSChild(t)
	require.NotEmpty(t, ep.MonitorURL, "the child nats-server has a monitoring endpoint")
	dialer := &stallDialer{release: make(chan struct{})}
	ep.Dialer = dialer
	d := newNATSDriver(t, ep)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	const size = 5120
	f := natsFactors(scenario.NonDurable, scenario.NonPersistent)
	f.Size = size
	cases := []struct {
		spec driver.CaseSpec
		sent int
	}{
		{driver.CaseSpec{Prefix: testPrefix(), Factors: f}, 2000},
		{driver.CaseSpec{Prefix: testPrefix(), Factors: f}, 5000},
	}
	mark := dialer.count()
	for _, c := range cases {
		s, err := d.Subscriber(ctx, driver.SubSpec{Case: c.spec}, func(driver.Delivery) {})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
	}
	dialer.stallFrom(mark)
	t.Cleanup(func() { close(dialer.release) }) // before the subscribers close (cleanups run last first)
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
	// deadline (10 s): ask at once.
	for i, c := range cases {
		h, err := d.Held(ctx, c.spec)
		require.NoError(t, err)
		t.Logf("case %d: sent %d, held %d (%s)", i, c.sent, h.Backlog, h.Source)
		assert.LessOrEqual(t, h.Backlog, int64(c.sent), "case %d: never more than was sent to it (no other case's messages)", i)
		assert.Greater(t, h.Backlog, int64(c.sent/2), "case %d: more than the socket buffers could take is held", i)
	}
}
