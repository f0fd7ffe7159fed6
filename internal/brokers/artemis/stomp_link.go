package artemis

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/go-stomp/stomp/v3/frame"

	"pslab/internal/driver"
)

// stompLink keeps one client's STOMP connection up (driver.Link). go-stomp
// has no reconnect, and neither has stompConn: when the connection fails
// (the broker was killed, the link dropped it), the link's goroutine
// closes it, records an outage and dials again with a back-off
// (driver.ReconnectMin doubling to driver.ReconnectMax) until it succeeds
// or the client is closed. A new connection becomes current only after
// setup (a subscriber's SUBSCRIBE) is confirmed; clients wait for it in
// Conn.
type stompLink = driver.Link[*stompConn]

// errLinkClosed is returned to a client waiting for its connection when
// the client is closed.
var errLinkClosed = errors.New("STOMP client closed")

// newStompLink dials the first connection (errors are returned, not
// retried: a case that cannot connect at all fails) and starts watching
// it. onMsg receives the MESSAGE frames of every connection, with the
// connection that delivered them (ACKs must go back on it); setup runs on
// each new connection before it becomes current. tc, when not nil, makes
// every connection TLS and times its handshakes.
func newStompLink(ctx context.Context, ep driver.Endpoint, tc *driver.TLSClient, clientID string,
	onMsg func(*stompConn, *frame.Frame), setup func(context.Context, *stompConn) error) (*stompLink, error) {
	dial := func(ctx context.Context) (*stompConn, error) {
		var self atomic.Pointer[stompConn]
		var onFrame func(*frame.Frame)
		if onMsg != nil {
			onFrame = func(f *frame.Frame) { onMsg(self.Load(), f) }
		}
		c, err := dialSTOMP(ctx, ep, clientID, onFrame, tc)
		if err != nil {
			return nil, err
		}
		self.Store(c)
		if setup != nil {
			if err := setup(ctx, c); err != nil {
				c.Abort()
				return nil, err
			}
		}
		return c, nil
	}
	return driver.NewLink(ctx, dial, 10*time.Second, errLinkClosed)
}
