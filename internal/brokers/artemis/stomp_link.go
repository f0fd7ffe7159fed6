package artemis

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-stomp/stomp/v3/frame"

	"pslab/internal/driver"
)

// stompLink keeps one client's STOMP connection up. go-stomp has no
// reconnect, and neither has stompConn: when the connection fails (the
// broker was killed, the link dropped it), the link's goroutine closes it,
// records an outage and dials again with a back-off (reconnectMin doubling
// to reconnectMax) until it succeeds or the client is closed. A new
// connection becomes current only after setup (a subscriber's SUBSCRIBE)
// is confirmed; clients wait for it in conn.
type stompLink struct {
	ep       driver.Endpoint
	clientID string
	// onMsg receives the MESSAGE frames of every connection, with the
	// connection that delivered them (ACKs must go back on it).
	onMsg func(*stompConn, *frame.Frame)
	// setup runs on each new connection before it becomes current.
	setup func(context.Context, *stompConn) error
	log   driver.ConnTracker

	mu   sync.Mutex
	cur  *stompConn    // nil while down
	up   chan struct{} // closed when cur is set
	stop chan struct{} // closed by close
	done chan struct{} // closed when the watch goroutine has returned
}

// errLinkClosed is returned to a client waiting for its connection when
// the client is closed.
var errLinkClosed = errors.New("STOMP client closed")

// newStompLink dials the first connection (errors are returned, not
// retried: a case that cannot connect at all fails) and starts watching it.
func newStompLink(ctx context.Context, ep driver.Endpoint, clientID string,
	onMsg func(*stompConn, *frame.Frame), setup func(context.Context, *stompConn) error) (*stompLink, error) {
	l := &stompLink{ep: ep, clientID: clientID, onMsg: onMsg, setup: setup,
		up: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	c, err := l.dial(ctx)
	if err != nil {
		return nil, err
	}
	l.cur = c
	close(l.up)
	go l.watch(c)
	return l, nil
}

// dial opens and sets up one connection.
func (l *stompLink) dial(ctx context.Context) (*stompConn, error) {
	var self atomic.Pointer[stompConn]
	var onMsg func(*frame.Frame)
	if l.onMsg != nil {
		onMsg = func(f *frame.Frame) { l.onMsg(self.Load(), f) }
	}
	c, err := dialSTOMP(ctx, l.ep, l.clientID, onMsg)
	if err != nil {
		return nil, err
	}
	self.Store(c)
	if l.setup != nil {
		if err := l.setup(ctx, c); err != nil {
			c.abort()
			return nil, err
		}
	}
	return c, nil
}

// watch waits for c to fail, then redials until a connection is up again
// or the link is closed.
func (l *stompLink) watch(c *stompConn) {
	defer close(l.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-l.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		select {
		case <-c.done:
		case <-l.stop:
			return
		}
		l.mu.Lock()
		select {
		case <-l.stop: // closed: the failure is the close
			l.mu.Unlock()
			return
		default:
		}
		l.log.Lost(time.Now(), c.failure())
		l.cur, l.up = nil, make(chan struct{})
		l.mu.Unlock()
		c.abort() // no handler runs and no receipt arrives on c any more
		for n := 0; ; n++ {
			if !driver.Backoff(ctx, l.stop, n) {
				return
			}
			dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
			nc, err := l.dial(dctx)
			dcancel()
			if err != nil {
				continue
			}
			l.mu.Lock()
			select {
			case <-l.stop:
				l.mu.Unlock()
				nc.abort()
				return
			default:
			}
			l.cur, c = nc, nc
			close(l.up)
			l.log.Restored(time.Now())
			l.mu.Unlock()
			break
		}
	}
}

// conn returns the current connection, waiting while the link is down.
func (l *stompLink) conn(ctx context.Context) (*stompConn, error) {
	for {
		l.mu.Lock()
		c, up, stop := l.cur, l.up, l.stop
		l.mu.Unlock()
		if c != nil && c.failure() == nil {
			return c, nil
		}
		if c != nil { // failed, the watcher has not noticed yet
			select {
			case <-l.done:
				return nil, errLinkClosed
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(5 * time.Millisecond):
			}
			continue
		}
		select {
		case <-up:
		case <-stop:
			return nil, errLinkClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// current returns the current connection without waiting, nil while down.
func (l *stompLink) current() *stompConn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cur
}

// close stops reconnecting and closes the current connection gracefully
// (stompConn.close), within wait. farewell, if not nil, runs first on that
// connection (a subscriber's UNSUBSCRIBE), with a context ending at the
// same bound; when it fails the connection is dropped instead. While the
// link is down close returns at once (bounded by closeBound for a dial in
// progress).
func (l *stompLink) close(wait time.Duration, farewell func(context.Context, *stompConn) error) error {
	deadline := time.Now().Add(wait)
	l.mu.Lock()
	select {
	case <-l.stop:
		l.mu.Unlock()
		return nil
	default:
	}
	close(l.stop)
	c := l.cur
	l.mu.Unlock()
	select {
	case <-l.done:
	case <-time.After(driver.CloseBound):
	}
	if c == nil {
		return nil
	}
	if c.failure() != nil { // lost just now: nothing to disconnect
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
	return c.closeBy(deadline)
}

// abort drops the current connection without DISCONNECT and stops
// reconnecting, like a crashed client.
func (l *stompLink) abort() {
	l.mu.Lock()
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	c := l.cur
	l.mu.Unlock()
	if c != nil {
		c.abort()
	}
}
