package drivertest

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
)

// StallDialer dials on the host network and can stop the reading of the
// connections it made (StallFrom): a subscriber that stops taking what
// the server sends, as one behind a slow link does, so that the server
// queues what it owes in that connection's output buffer.
type StallDialer struct {
	mu      sync.Mutex
	conns   []*stallConn
	release chan struct{}
}

type stallConn struct {
	net.Conn
	stalled atomic.Bool // reads wait for release
	release <-chan struct{}

	wmu      sync.Mutex
	wstalled bool   // writes are held back (as in a socket behind a stalled link)
	held     []byte // what they wrote meanwhile
}

func (c *stallConn) Read(p []byte) (int, error) {
	if c.stalled.Load() {
		<-c.release
	}
	return c.Conn.Read(p)
}

func (c *stallConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.wstalled {
		c.held = append(c.held, p...)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// resumeWrites sends what was held back, then lets writes through.
func (c *stallConn) resumeWrites() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if !c.wstalled {
		return nil
	}
	c.wstalled = false
	_, err := c.Conn.Write(c.held)
	c.held = nil
	return err
}

// DialContext implements driver.Dialer.
func (d *StallDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
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

// Count is how many connections it made.
func (d *StallDialer) Count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.conns)
}

// StallFrom stops reading on the connections made from the i-th on.
func (d *StallDialer) StallFrom(i int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.conns[i:] {
		c.stalled.Store(true)
	}
}

// StallWritesFrom holds back what the connections made from the i-th on
// write, until ResumeWrites.
func (d *StallDialer) StallWritesFrom(i int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.conns[i:] {
		c.wmu.Lock()
		c.wstalled = true
		c.wmu.Unlock()
	}
}

// ResumeWrites sends what every connection held back, then lets writes
// through.
func (d *StallDialer) ResumeWrites() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.conns {
		if err := c.resumeWrites(); err != nil {
			return err
		}
	}
	return nil
}

// NewStallDialer is a dialer whose connections read and write until
// stalled.
func NewStallDialer() *StallDialer { return &StallDialer{release: make(chan struct{})} }

// Release lets the stalled reads go on (once).
func (d *StallDialer) Release() { close(d.release) }
