package artemis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-stomp/stomp/v3/frame"

	"pslab/internal/driver"
)

// How a STOMP connection ends. Artemis 2.44 can deadlock one connection
// (and, through a management operation waiting on it, the whole broker)
// when a frame that makes it tear the connection down is sent while the
// same connection is failing (ARTEMIS-5874, fixed in 2.51). The frames
// that make it tear down are the RECEIPT of a DISCONNECT and every ERROR
// of a STOMP 1.2 connection: StompProtocolManager.send holds the
// connection's monitor, writes the frame, and then StompConnection.destroy
// waits for the connection's failLock. A failing connection
// (StompConnection.fail: the client closed or reset its socket, or the TTL
// expired) holds failLock and waits for the monitor to send its own ERROR.
//
// So pslab never asks for a DISCONNECT receipt, and never closes its socket
// first after a graceful DISCONNECT: it sends DISCONNECT without a receipt
// (Artemis then destroys the connection at once, holding no monitor, and
// closes the socket) and waits for the broker's end of the stream. When the
// socket goes, the connection is already destroyed and fail returns
// without sending anything. Subscribers UNSUBSCRIBE first (its RECEIPT does
// not tear anything down): their consumer is closed, and a non-durable
// subscription's temporary queue deleted, in frame order before the
// connection ends, so a purge right after Close finds no consumer left.
// The purge itself never removes consumers (stomp_admin.go): Artemis'
// ERROR "consumer ... disconnected by server" is the other frame above.

// close ends the connection gracefully: DISCONNECT without a receipt,
// then up to wait for the broker to close the socket (which it does after
// every frame before the DISCONNECT is processed), then the socket is
// closed. It returns the connection's earlier failure, if any.
func (c *stompConn) close(wait time.Duration) error {
	return c.CloseBy(time.Now().Add(wait))
}

// CloseBy is close with an absolute deadline (driver.LinkConn).
func (c *stompConn) CloseBy(deadline time.Time) error {
	prior := c.Failure()
	if prior == nil {
		prior = c.disconnect(deadline)
	}
	c.mu.Lock()
	if c.err == nil {
		c.err = errors.New("STOMP connection closed")
		close(c.done)
	}
	c.mu.Unlock()
	c.nc.Close()
	c.waitReader()
	return prior
}

// disconnect writes DISCONNECT (nothing is written after it, heart-beats
// included) and waits until deadline for the broker to end the stream.
func (c *stompConn) disconnect(deadline time.Time) error {
	err := c.writeFrame(frame.New(frame.DISCONNECT))
	c.wmu.Lock()
	c.closed = true
	c.wmu.Unlock()
	if err != nil {
		return fmt.Errorf("STOMP disconnect from %s: %w", c.addr, err)
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-c.readDone:
	case <-t.C:
		return fmt.Errorf("STOMP disconnect from %s: the broker did not close the connection within the close bound", c.addr)
	}
	var se *stompError
	if err := c.Failure(); errors.As(err, &se) {
		return fmt.Errorf("STOMP disconnect from %s: %w", c.addr, err)
	}
	return nil // the end of the stream (or a reset after it) is the expected answer
}

// unsubscribe ends subscription id on c (with extra UNSUBSCRIBE headers,
// e.g. the durable name) and waits for the broker's RECEIPT, which it sends
// once the consumer is closed.
func (c *stompConn) unsubscribe(ctx context.Context, id string, headers ...string) error {
	f := frame.New(frame.UNSUBSCRIBE, append([]string{frame.Id, id}, headers...)...)
	return c.request(ctx, f, "unsubscribed-"+id)
}

// waitReader waits (boundedly) until no handler runs any more, so that no
// delivery happens after Close returns.
func (c *stompConn) waitReader() {
	select {
	case <-c.readDone:
	case <-time.After(10 * time.Second):
	}
}

// Abort closes the socket without DISCONNECT, like a crashed client. After
// a broker's ERROR it first lets the broker close the connection (bounded
// by errorCloseWait, see brokerError).
func (c *stompConn) Abort() {
	var se *stompError
	if errors.As(c.Failure(), &se) {
		c.waitReader()
	}
	driver.ResetOnClose(c.tcp)
	c.wmu.Lock()
	c.closed = true
	c.wmu.Unlock()
	c.fail(errors.New("STOMP connection aborted"))
	c.waitReader()
}

// errorCloseWait (a variable for the tests) bounds how long a client waits, after a broker's ERROR,
// for the broker to close the connection before closing it itself.
var errorCloseWait = 5 * time.Second

// brokerError records an ERROR frame as the connection's failure without
// closing the socket: STOMP 1.2 has the broker close the connection after
// an ERROR, and on Artemis 2.44 a client that closes first can deadlock it
// (see above). The reader goes on reading, and discards, until the broker
// has closed the stream or errorCloseWait has passed.
func (c *stompConn) brokerError(r *frame.Reader, e *stompError) {
	c.failKeepOpen(e)
	c.nc.SetReadDeadline(time.Now().Add(errorCloseWait))
	for {
		if _, err := r.Read(); err != nil {
			return
		}
	}
}
