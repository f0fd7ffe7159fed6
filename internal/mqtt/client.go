package mqtt

import (
	"context"
	"errors"
	"sync"
	"time"

	"pslab/internal/driver"
)

// client keeps one MQTT client's connection up, under one client
// identifier: when the connection fails (the broker was killed, the link
// dropped it, the keep-alive found it dead) the client records an outage
// and dials again with a back-off, with the same CONNECT: a persistent
// session (clean session off, clean start off with an expiry) is resumed
// by the broker, and setup runs on the new connection before it becomes
// current (a subscriber subscribes again when the broker kept no session;
// a publisher sends again what the old connection had not confirmed).
type client struct {
	d      *Driver
	opts   connectOpts
	onPkt  func(*conn, packet) error
	onPing func(uint64)
	setup  func(context.Context, *conn) error
	log    driver.ConnTracker

	mu   sync.Mutex
	cur  *conn         // nil while down
	up   chan struct{} // closed when cur is set
	stop chan struct{} // closed by close or abort
	done chan struct{} // closed when the watch goroutine has returned
}

// errClientClosed is returned to a caller waiting for the connection of a
// client that is being closed.
var errClientClosed = errors.New("MQTT client closed")

// newClient dials the first connection (its errors are returned, not
// retried: a case that cannot connect fails) and starts watching it.
func newClient(ctx context.Context, d *Driver, o connectOpts, onPkt func(*conn, packet) error,
	onPing func(uint64), setup func(context.Context, *conn) error) (*client, error) {
	cl := &client{d: d, opts: o, onPkt: onPkt, onPing: onPing, setup: setup,
		up: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	c, err := cl.dial(ctx)
	if err != nil {
		return nil, err
	}
	cl.cur = c
	close(cl.up)
	go cl.watch(c)
	return cl, nil
}

func (cl *client) dial(ctx context.Context) (*conn, error) {
	c, err := dial(ctx, cl.d.ep, cl.d.addr, cl.opts, cl.onPkt, cl.onPing)
	if err != nil {
		return nil, err
	}
	if cl.setup != nil {
		if err := cl.setup(ctx, c); err != nil {
			c.abort()
			return nil, err
		}
	}
	return c, nil
}

// watch waits for c to fail, then dials until a connection is up again
// or the client is closed.
func (cl *client) watch(c *conn) {
	defer close(cl.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-cl.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		select {
		case <-c.done:
		case <-cl.stop:
			return
		}
		cl.mu.Lock()
		select {
		case <-cl.stop: // closed: the failure is the close
			cl.mu.Unlock()
			return
		default:
		}
		cl.log.Lost(time.Now(), c.failure())
		cl.cur, cl.up = nil, make(chan struct{})
		cl.mu.Unlock()
		c.abort()
		for n := 0; ; n++ {
			if !driver.Backoff(ctx, cl.stop, n) {
				return
			}
			dctx, dcancel := context.WithTimeout(ctx, 10*time.Second+cl.opts.stall)
			nc, err := cl.dial(dctx)
			dcancel()
			if err != nil {
				continue
			}
			cl.mu.Lock()
			select {
			case <-cl.stop:
				cl.mu.Unlock()
				nc.abort()
				return
			default:
			}
			cl.cur, c = nc, nc
			close(cl.up)
			cl.log.Restored(time.Now())
			cl.mu.Unlock()
			break
		}
	}
}

// conn returns the current connection, waiting while the client is down.
func (cl *client) conn(ctx context.Context) (*conn, error) {
	for {
		cl.mu.Lock()
		c, up, stop := cl.cur, cl.up, cl.stop
		cl.mu.Unlock()
		if c != nil && c.failure() == nil {
			return c, nil
		}
		if c != nil { // failed; the watcher has not noticed yet
			select {
			case <-cl.done:
				return nil, errClientClosed
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(5 * time.Millisecond):
			}
			continue
		}
		select {
		case <-up:
		case <-stop:
			return nil, errClientClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// current is the current connection without waiting; nil while down.
func (cl *client) current() *conn {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.cur
}

// stopWatching ends reconnecting and returns the current connection (nil
// while down), after the watcher has stopped (bounded by driver.CloseBound for a
// dial in progress). It reports false when the client was stopped
// before.
func (cl *client) stopWatching() (*conn, bool) {
	cl.mu.Lock()
	select {
	case <-cl.stop:
		cl.mu.Unlock()
		return nil, false
	default:
	}
	close(cl.stop)
	c := cl.cur
	cl.mu.Unlock()
	select {
	case <-cl.done:
	case <-time.After(driver.CloseBound):
	}
	return c, true
}

// close stops reconnecting and closes the current connection gracefully
// within wait; farewell, if not nil, runs on it first (an UNSUBSCRIBE)
// and when it fails the connection is dropped instead.
func (cl *client) close(wait time.Duration, farewell func(context.Context, *conn) error) error {
	deadline := time.Now().Add(wait)
	c, ok := cl.stopWatching()
	if !ok || c == nil {
		return nil
	}
	if c.failure() != nil {
		c.abort()
		return nil
	}
	if farewell != nil {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		err := farewell(ctx, c)
		cancel()
		if err != nil {
			c.abort()
			return err
		}
	}
	return c.close(deadline)
}

// abort drops the current connection (no DISCONNECT: a persistent session
// stays, as after a crash) and stops reconnecting.
func (cl *client) abort() {
	cl.mu.Lock()
	select {
	case <-cl.stop:
	default:
		close(cl.stop)
	}
	c := cl.cur
	cl.mu.Unlock()
	if c != nil {
		c.abort()
	}
}
