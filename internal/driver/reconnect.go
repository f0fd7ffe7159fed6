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

// Reconnect back-off of the drivers' clients: the first retry after
// reconnectMin, doubling up to reconnectMax, for as long as the client is
// not closed.
const (
	reconnectMin = 100 * time.Millisecond
	reconnectMax = time.Second
)

// closeBound bounds how long Close or Unsubscribe waits on a connection
// that is down (the broker closing after DISCONNECT, a consumer deletion).
const closeBound = 3 * time.Second

// connLog records what one client connection went through. Safe for
// concurrent use.
type connLog struct {
	mu      sync.Mutex
	outages []Outage
	open    bool // the last outage has not been restored yet
	inDoubt int64
	resent  int64
}

// lost opens an outage at t, for cause, unless one is open.
func (l *connLog) lost(t time.Time, cause error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.open {
		l.outages = append(l.outages, Outage{Lost: t, Cause: outageCause(cause)})
		l.open = true
	}
}

// restored closes the open outage at t, if any.
func (l *connLog) restored(t time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open {
		l.outages[len(l.outages)-1].Restored = t
		l.open = false
	}
}

// down tells whether an outage is open.
func (l *connLog) down() bool {
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

func (l *connLog) addInDoubt(n int64) {
	if n <= 0 {
		return
	}
	l.mu.Lock()
	l.inDoubt += n
	l.mu.Unlock()
}

// stats returns a copy.
func (l *connLog) stats() ConnStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return ConnStats{Outages: append([]Outage(nil), l.outages...), InDoubt: l.inDoubt, Resent: l.resent}
}

// backoff sleeps before reconnect attempt n (0-based): reconnectMin
// doubling up to reconnectMax. It returns false when stop or ctx ended
// first.
func backoff(ctx context.Context, stop <-chan struct{}, n int) bool {
	d := reconnectMin << min(n, 4)
	if d > reconnectMax {
		d = reconnectMax
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
