package mqtt

import (
	"context"
	"errors"
	"net"
	"regexp"
	"strings"
	"sync"
	"time"

	"pslab/internal/driver"
)

// Reconnect back-off of the clients: the first retry after reconnectMin,
// doubling up to reconnectMax, for as long as the client is not closed
// (the same as the NATS and STOMP clients', docs/faults.md).
const (
	reconnectMin = 100 * time.Millisecond
	reconnectMax = time.Second
)

// closeBound bounds how long Close waits for a connection that is down.
const closeBound = 3 * time.Second

// tracker records what one client connection went through (outages,
// sends in doubt, sends repeated after a reconnect). Safe for concurrent
// use.
type tracker struct {
	mu      sync.Mutex
	outages []driver.Outage
	open    bool
	inDoubt int64
	resent  int64
}

// lost opens an outage at t for cause, unless one is open.
func (l *tracker) lost(t time.Time, cause error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.open {
		l.outages = append(l.outages, driver.Outage{Lost: t, Cause: outageCause(cause)})
		l.open = true
	}
}

// restored closes the open outage at t, if any.
func (l *tracker) restored(t time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open {
		l.outages[len(l.outages)-1].Restored = t
		l.open = false
	}
}

func (l *tracker) addInDoubt(n int64) {
	if n > 0 {
		l.mu.Lock()
		l.inDoubt += n
		l.mu.Unlock()
	}
}

func (l *tracker) addResent(n int64) {
	if n > 0 {
		l.mu.Lock()
		l.resent += n
		l.mu.Unlock()
	}
}

func (l *tracker) stats() driver.ConnStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return driver.ConnStats{Outages: append([]driver.Outage(nil), l.outages...), InDoubt: l.inDoubt, Resent: l.resent}
}

// outageCause names why a connection was lost without its addresses, so
// that the causes of a case's connections count together.
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

var hostPort = regexp.MustCompile(`\b\d{1,3}(\.\d{1,3}){3}:\d+\b`)

// backoff sleeps before reconnect attempt n (0-based); false when stop or
// ctx ended first.
func backoff(ctx context.Context, stop <-chan struct{}, n int) bool {
	d := min(reconnectMin<<min(n, 4), reconnectMax)
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
