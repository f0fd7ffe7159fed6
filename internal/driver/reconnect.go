package driver

import (
	"context"
	"errors"
	"net"
	"regexp"
	"strings"
	"sync"
	"time"
)

// This file is the connection bookkeeping every protocol's clients share:
// a protocol package (internal/brokers/NAME) keeps a ConnTracker per
// client connection, reconnects with Backoff and reports ConnStats.

// Reconnect back-off of the drivers' clients: the first retry after
// ReconnectMin, doubling up to ReconnectMax, for as long as the client is
// not closed.
const (
	ReconnectMin = 100 * time.Millisecond
	ReconnectMax = time.Second
)

// CloseBound bounds how long Close or Unsubscribe waits on a connection
// that is down (the broker closing after DISCONNECT, a consumer deletion).
const CloseBound = 3 * time.Second

// ConnTracker records what one client connection went through: its
// outages and its sends in doubt. The zero value is ready; safe for
// concurrent use.
type ConnTracker struct {
	mu      sync.Mutex
	outages []Outage
	open    bool // the last outage has not been restored yet
	inDoubt int64
	resent  int64
	first   *bool // the broker's answer about the session on the first connection
}

// Lost opens an outage at t, for cause, unless one is open.
func (l *ConnTracker) Lost(t time.Time, cause error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.open {
		l.outages = append(l.outages, Outage{Lost: t, Cause: outageCause(cause)})
		l.open = true
	}
}

// Restored closes the open outage at t, if any.
func (l *ConnTracker) Restored(t time.Time) {
	l.RestoredSession(t, nil)
}

// RestoredSession closes the open outage at t, if any, with the broker's
// answer about the client's session on the new connection (Outage.Session;
// nil: the protocol gives none, or the client asked to keep none).
func (l *ConnTracker) RestoredSession(t time.Time, session *bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open {
		o := &l.outages[len(l.outages)-1]
		o.Restored, o.Session = t, session
		l.open = false
	}
}

// Connected records the broker's answer about the client's session on
// its first connection (ConnStats.FirstSession; nil: none).
func (l *ConnTracker) Connected(session *bool) {
	l.mu.Lock()
	l.first = session
	l.mu.Unlock()
}

// Down tells whether an outage is open.
func (l *ConnTracker) Down() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// outageCause names why a connection was lost without its addresses (a
// socket error names both ends), so that the causes of a case's many
// connections can be counted together: "write: i/o timeout", "EOF"; an
// address with its port in any other text is replaced by <addr>.
func outageCause(err error) string {
	if err == nil {
		return ""
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		msg := op.Err.Error()
		if strings.HasPrefix(msg, op.Op+":") {
			return msg
		}
		return op.Op + ": " + msg
	}
	return hostPort.ReplaceAllString(err.Error(), "<addr>")
}

// hostPort matches an IPv4 address with a port, as brokers name a
// client in their error texts ("Did not receive data from
// 10.77.1.2:33482 within ...").
var hostPort = regexp.MustCompile(`\b\d{1,3}(\.\d{1,3}){3}:\d+\b`)

// AddInDoubt counts n sends whose confirmation will not come (the
// connection was lost, or the broker answered with an error).
func (l *ConnTracker) AddInDoubt(n int64) {
	if n <= 0 {
		return
	}
	l.mu.Lock()
	l.inDoubt += n
	l.mu.Unlock()
}

// AddResent counts n sends the client sent again on a new connection
// (MQTT's session resumption resends what was not acknowledged).
func (l *ConnTracker) AddResent(n int64) {
	if n <= 0 {
		return
	}
	l.mu.Lock()
	l.resent += n
	l.mu.Unlock()
}

// Stats returns a copy of what the connection went through.
func (l *ConnTracker) Stats() ConnStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return ConnStats{Outages: append([]Outage(nil), l.outages...), InDoubt: l.inDoubt, Resent: l.resent, FirstSession: l.first}
}

// Backoff sleeps before reconnect attempt n (0-based): ReconnectMin
// doubling up to ReconnectMax. It returns false when stop or ctx ended
// first.
func Backoff(ctx context.Context, stop <-chan struct{}, n int) bool {
	d := ReconnectMin << min(n, 4)
	if d > ReconnectMax {
		d = ReconnectMax
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-stop:
		return false
	case <-ctx.Done():
		return false
	}
}
