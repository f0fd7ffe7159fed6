package driver

import (
	"context"
	"sync"
	"time"
)

// LinkConn is one connection of a protocol's own client (STOMP's, MQTT's)
// that a Link keeps up.
type LinkConn interface {
	comparable
	// Done is closed once the connection has failed or was closed.
	Done() <-chan struct{}
	// Failure is why the connection ended; nil while it is healthy.
	Failure() error
	// Abort drops the connection at once (no farewell to the broker); no
	// handler runs on it afterwards.
	Abort()
	// CloseBy ends the connection gracefully by the deadline.
	CloseBy(deadline time.Time) error
}

// Link keeps one client's connection up, for a protocol client that has
// no reconnect of its own: when the connection fails (the broker was
// killed, the link dropped it, a keep-alive found it dead) the link's
// goroutine drops it, records an outage in Log and dials again with
// Backoff until a connection is up or the client is closed. Dial sets a
// new connection up (a subscriber's SUBSCRIBE, a publisher's resends)
// before it becomes current; clients wait for it in Conn.
type Link[C LinkConn] struct {
	// Log is what the client's connection went through.
	Log ConnTracker

	dial        func(context.Context) (C, error)
	dialTimeout time.Duration
	closed      error

	mu   sync.Mutex
	cur  C             // the zero C while down
	up   chan struct{} // closed when cur is set
	stop chan struct{} // closed by Close, StopWatching or Abort
	done chan struct{} // closed when the watch goroutine has returned
}

// NewLink dials the first connection (its errors are returned, not
// retried: a case that cannot connect at all fails) and starts watching
// it. dial opens and sets up one connection; each redial has dialTimeout.
// closed is the error of a client waiting for a connection when the
// client is closed.
func NewLink[C LinkConn](ctx context.Context, dial func(context.Context) (C, error), dialTimeout time.Duration, closed error) (*Link[C], error) {
	l := &Link[C]{dial: dial, dialTimeout: dialTimeout, closed: closed,
		up: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	c, err := dial(ctx)
	if err != nil {
		return nil, err
	}
	l.Log.Connected(SessionAnswer(c))
	l.cur = c
	close(l.up)
	go l.watch(c)
	return l, nil
}

// watch waits for c to fail, then dials until a connection is up again or
// the link is stopped.
func (l *Link[C]) watch(c C) {
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
	var zero C
	for {
		select {
		case <-c.Done():
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
		l.Log.Lost(time.Now(), c.Failure())
		l.cur, l.up = zero, make(chan struct{})
		l.mu.Unlock()
		c.Abort() // no handler runs and no confirmation arrives on c any more
		for n := 0; ; n++ {
			if !Backoff(ctx, l.stop, n) {
				return
			}
			dctx, dcancel := context.WithTimeout(ctx, l.dialTimeout)
			nc, err := l.dial(dctx)
			dcancel()
			if err != nil {
				continue
			}
			l.mu.Lock()
			// The connection is up (its reader may already have delivered
			// on it), so the outage ends here even if the link is being
			// stopped at the same moment.
			l.Log.RestoredSession(time.Now(), SessionAnswer(nc))
			select {
			case <-l.stop:
				l.mu.Unlock()
				nc.Abort()
				return
			default:
			}
			l.cur, c = nc, nc
			close(l.up)
			l.mu.Unlock()
			break
		}
	}
}

// Conn returns the current connection, waiting while the link is down.
func (l *Link[C]) Conn(ctx context.Context) (C, error) {
	var zero C
	for {
		l.mu.Lock()
		c, up, stop := l.cur, l.up, l.stop
		l.mu.Unlock()
		if c != zero && c.Failure() == nil {
			return c, nil
		}
		if c != zero { // failed; the watcher has not noticed yet
			select {
			case <-l.done:
				return zero, l.closed
			case <-ctx.Done():
				return zero, ctx.Err()
			case <-time.After(5 * time.Millisecond):
			}
			continue
		}
		select {
		case <-up:
		case <-stop:
			return zero, l.closed
		case <-ctx.Done():
			return zero, ctx.Err()
		}
	}
}

// Current is the current connection without waiting; the zero C while
// down.
func (l *Link[C]) Current() C {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cur
}

// StopWatching ends reconnecting and returns the current connection (the
// zero C while down), after the watcher has stopped (bounded by
// CloseBound for a dial in progress). It reports false when the link was
// stopped before.
func (l *Link[C]) StopWatching() (C, bool) {
	l.mu.Lock()
	select {
	case <-l.stop:
		l.mu.Unlock()
		var zero C
		return zero, false
	default:
	}
	close(l.stop)
	c := l.cur
	l.mu.Unlock()
	select {
	case <-l.done:
	case <-time.After(CloseBound):
	}
	return c, true
}

// Close stops reconnecting and closes the current connection gracefully
// (CloseBy) within wait. farewell, if not nil, runs first on that
// connection (a subscriber's UNSUBSCRIBE) with a context ending at the
// same bound; when it fails the connection is dropped instead. While the
// link is down Close returns at once (bounded by CloseBound for a dial in
// progress).
func (l *Link[C]) Close(wait time.Duration, farewell func(context.Context, C) error) error {
	deadline := time.Now().Add(wait)
	c, ok := l.StopWatching()
	var zero C
	if !ok || c == zero {
		return nil
	}
	if c.Failure() != nil { // lost just now: nothing to disconnect
		c.Abort()
		return nil
	}
	if farewell != nil {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		err := farewell(ctx, c)
		cancel()
		if err != nil {
			c.Abort()
			return err
		}
	}
	return c.CloseBy(deadline)
}

// Abort drops the current connection (no farewell: a durable
// subscription or persistent session stays, as after a crash) and stops
// reconnecting.
func (l *Link[C]) Abort() {
	l.mu.Lock()
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	c := l.cur
	l.mu.Unlock()
	var zero C
	if c != zero {
		c.Abort()
	}
}
