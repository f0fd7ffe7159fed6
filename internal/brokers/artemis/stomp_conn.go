package artemis

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-stomp/stomp/v3/frame"

	"pslab/internal/driver"
)

// This file holds pslab's STOMP 1.2 connection. Frames are parsed and
// written with go-stomp's frame package; the connection state machine is
// ours because go-stomp's Conn cannot do two things pslab needs:
//   - pipelined receipts: Conn.Send with a receipt holds the connection lock
//     until the RECEIPT arrives, so a publisher could only stop and wait;
//   - confirmed subscriptions: a receipt on SUBSCRIBE closes the
//     subscription's channel in Conn, so a SUBSCRIBE cannot be confirmed
//     before publishing starts (durable cases need that).

// errNotSent marks a write that put nothing on the connection (it had
// already failed or been closed).
var errNotSent = errors.New("not sent")

// ErrLoginRefused means the broker rejected the user name or password.
var ErrLoginRefused = errors.New("login refused by the broker")

// stompHeartBeat is the client-to-server heart-beat we promise, by
// default. Artemis sets the connection TTL to twice this; a heart-beat
// goroutine keeps idle connections (a subscriber waiting for messages)
// alive.
const stompHeartBeat = 10 * time.Second

// heartBeatFor is the heart-beat a client of ep promises: half its
// StallTolerance, so that Artemis' connection TTL is the stall tolerance,
// or stompHeartBeat.
func heartBeatFor(ep driver.Endpoint) time.Duration {
	if ep.StallTolerance > 0 {
		return ep.StallTolerance / 2
	}
	return stompHeartBeat
}

// connectionTTL is how long Artemis keeps a client of ep that sends
// nothing: twice its heart-beat (Artemis' heartBeatToConnectionTtlModifier,
// 2 by default).
func connectionTTL(ep driver.Endpoint) time.Duration { return 2 * heartBeatFor(ep) }

// stompError is an ERROR frame from the broker.
type stompError struct {
	msg, body string
}

func (e *stompError) Error() string {
	s := "broker sent ERROR: " + e.msg
	if b := strings.TrimSpace(e.body); b != "" && b != e.msg {
		s += ": " + firstLine(b)
	}
	return s
}

// stompConn is one STOMP connection. Writes are serialized by wmu; one
// reader goroutine dispatches MESSAGE frames to onMsg and RECEIPT frames to
// registered callbacks.
type stompConn struct {
	addr   string
	nc     net.Conn
	tcp    net.Conn // the TCP connection under nc (nc itself without TLS)
	server string   // CONNECTED server header, e.g. "ActiveMQ-Artemis/2.44.0 ..."

	wmu    sync.Mutex
	bw     *bufio.Writer // SEND and ACK frames, written out by flusher
	fw     *frame.Writer // control frames, straight to the socket (bw first)
	kick   chan struct{} // bw has frames to write out (flusher)
	wrote  atomic.Bool   // something was written since the last heart-beat tick
	hb     time.Duration // the heart-beat promised in CONNECT
	closed bool          // guarded by wmu: DISCONNECT was sent or socket closed

	mu       sync.Mutex
	receipts map[string]func(error)
	err      error
	done     chan struct{}
	readDone chan struct{}      // closed when the reader goroutine returns
	onMsg    func(*frame.Frame) // set before the first SUBSCRIBE; called by the reader
}

// stompAddr turns an Endpoint URL (stomp://host:port) into host:port.
func stompAddr(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("bad STOMP endpoint URL %q: %v", raw, err)
	}
	if u.Scheme != "stomp" || u.Host == "" {
		return "", fmt.Errorf("bad STOMP endpoint URL %q: want stomp://host:port", raw)
	}
	if u.Port() == "" {
		return net.JoinHostPort(u.Hostname(), "61613"), nil
	}
	return u.Host, nil
}

// dialSTOMP connects and logs in. clientID may be empty. onMsg, if not nil,
// receives every MESSAGE frame on the reader goroutine. tc, when not nil,
// makes the connection TLS (to the endpoint's TLS acceptor) and times the
// handshake.
func dialSTOMP(ctx context.Context, ep driver.Endpoint, clientID string, onMsg func(*frame.Frame), tc *driver.TLSClient) (*stompConn, error) {
	raw := ep.URL
	if tc != nil {
		raw = cmp.Or(ep.TLSURL, ep.URL)
	}
	addr, err := stompAddr(raw)
	if err != nil {
		return nil, err
	}
	var d driver.Dialer = ep.Dialer
	if d == nil {
		d = &net.Dialer{Timeout: 10 * time.Second}
	}
	tcp, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("STOMP connect to %s: %w", addr, err)
	}
	nc := tcp
	if tc != nil {
		host, _, _ := net.SplitHostPort(addr)
		if nc, err = tc.Handshake(ctx, tcp, host); err != nil {
			return nil, fmt.Errorf("STOMP connect to %s: %w", addr, err)
		}
	}
	c := &stompConn{
		addr:     addr,
		nc:       nc,
		tcp:      tcp,
		bw:       bufio.NewWriterSize(nc, 64<<10),
		receipts: map[string]func(error){},
		done:     make(chan struct{}),
		readDone: make(chan struct{}),
		onMsg:    onMsg,
		hb:       heartBeatFor(ep),
		kick:     make(chan struct{}, 1),
	}
	c.fw = frame.NewWriter(nc)
	r := frame.NewReaderSize(nc, 64<<10)
	if err := c.login(ctx, r, ep, clientID); err != nil {
		nc.Close()
		return nil, err
	}
	go c.readLoop(r)
	go c.heartBeat()
	go c.flusher()
	return c, nil
}

func (c *stompConn) login(ctx context.Context, r *frame.Reader, ep driver.Endpoint, clientID string) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(30 * time.Second)
	}
	c.nc.SetDeadline(deadline)
	defer c.nc.SetDeadline(time.Time{})

	host, _, _ := net.SplitHostPort(c.addr)
	f := frame.New(frame.CONNECT,
		frame.AcceptVersion, "1.2",
		frame.Host, host,
		frame.HeartBeat, strconv.FormatInt(c.hb.Milliseconds(), 10)+",0")
	if ep.User != "" {
		f.Header.Add(frame.Login, ep.User)
		f.Header.Add(frame.Passcode, ep.Password)
	}
	if clientID != "" {
		f.Header.Add("client-id", clientID)
	}
	if err := c.fw.Write(f); err != nil {
		return fmt.Errorf("STOMP connect to %s: %w", c.addr, err)
	}
	var resp *frame.Frame
	for resp == nil {
		var err error
		if resp, err = r.Read(); err != nil {
			return fmt.Errorf("STOMP connect to %s: no CONNECTED frame: %w", c.addr, err)
		}
	}
	switch resp.Command {
	case frame.CONNECTED:
	case frame.ERROR:
		e := &stompError{msg: resp.Header.Get(frame.Message), body: string(resp.Body)}
		if isSecurityError(e) {
			return fmt.Errorf("STOMP login to %s as user %q: %w (%s)", c.addr, ep.User, ErrLoginRefused, e.msg)
		}
		return fmt.Errorf("STOMP connect to %s: %w", c.addr, e)
	default:
		return fmt.Errorf("STOMP connect to %s: unexpected %s frame", c.addr, resp.Command)
	}
	if v := resp.Header.Get(frame.Version); v != "1.2" {
		return fmt.Errorf("STOMP connect to %s: broker speaks STOMP %q, pslab needs 1.2", c.addr, v)
	}
	c.server = resp.Header.Get(frame.Server)
	return nil
}

func isSecurityError(e *stompError) bool {
	s := strings.ToLower(e.msg + " " + e.body)
	return strings.Contains(s, "security") || strings.Contains(s, "password") ||
		strings.Contains(s, "authenticat")
}

func (c *stompConn) readLoop(r *frame.Reader) {
	defer close(c.readDone)
	defer c.nc.Close()
	for {
		f, err := r.Read()
		if err != nil {
			c.fail(fmt.Errorf("STOMP connection to %s: %w", c.addr, err))
			return
		}
		if f == nil {
			continue // heart-beat or the EOL Artemis puts after each frame
		}
		switch f.Command {
		case frame.MESSAGE:
			if c.onMsg != nil {
				c.onMsg(f)
			}
		case frame.RECEIPT:
			id := f.Header.Get(frame.ReceiptId)
			c.mu.Lock()
			cb := c.receipts[id]
			delete(c.receipts, id)
			c.mu.Unlock()
			if cb != nil {
				cb(nil)
			}
		case frame.ERROR:
			c.brokerError(r, &stompError{msg: f.Header.Get(frame.Message), body: string(f.Body)})
			return
		}
	}
}

// fail records the first error, wakes every receipt waiter and closes the
// socket.
func (c *stompConn) fail(err error) {
	if c.failKeepOpen(err) {
		c.nc.Close()
	}
}

// failKeepOpen is fail without closing the socket. It reports whether err
// was the first error.
func (c *stompConn) failKeepOpen(err error) bool {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return false
	}
	c.err = err
	cbs := c.receipts
	c.receipts = map[string]func(error){}
	close(c.done)
	c.mu.Unlock()
	for _, cb := range cbs {
		cb(err)
	}
	return true
}

// failure returns the connection's error, nil while it is healthy.
func (c *stompConn) Failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *stompConn) heartBeat() {
	t := time.NewTicker(c.hb / 2)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
			if c.wrote.Swap(false) {
				continue
			}
			c.wmu.Lock()
			if !c.closed {
				if err := c.flushLocked(); err != nil {
					c.wmu.Unlock()
					return
				}
				if err := c.fw.Write(nil); err != nil {
					c.wmu.Unlock()
					c.fail(err)
					return
				}
			}
			c.wmu.Unlock()
		}
	}
}

// flusher writes out the frames writeRaw buffered, whenever it is kicked
// and gets to run: a publisher's or subscriber's frames written in one go
// (an open-loop batch, a burst of ACKs) leave in one write, as nats.go's
// flusher does, instead of a system call each (which cost the client
// more than the message itself at moderate rates; results/client-cost).
func (c *stompConn) flusher() {
	for {
		select {
		case <-c.done:
			return
		case <-c.kick:
		}
		c.wmu.Lock()
		if !c.closed {
			_ = c.flushLocked()
		}
		c.wmu.Unlock()
	}
}

// flushLocked writes out what bw holds; a write error fails the
// connection. Called with wmu held.
func (c *stompConn) flushLocked() error {
	if c.bw.Buffered() == 0 {
		return nil
	}
	if err := c.bw.Flush(); err != nil {
		go c.fail(err)
		return err
	}
	return nil
}

// expect registers cb for the RECEIPT with this id. cb runs on the reader
// goroutine (or with the connection error).
func (c *stompConn) expect(id string, cb func(error)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	c.receipts[id] = cb
	return nil
}

// writeFrame writes a control frame (escaped headers, go-stomp writer),
// after the frames writeRaw buffered: a receipt confirms what was sent
// before it.
func (c *stompConn) writeFrame(f *frame.Frame) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closed {
		return errors.New("STOMP connection closed")
	}
	if err := c.Failure(); err != nil {
		return err
	}
	c.wrote.Store(true)
	if err := c.flushLocked(); err != nil {
		return err
	}
	if err := c.fw.Write(f); err != nil {
		go c.fail(err)
		return err
	}
	return nil
}

// writeRaw buffers bytes that already form whole frames (the hot paths:
// SEND and ACK, whose header values pslab builds and never need escaping)
// and has the flusher write them out; a full buffer is written at once.
// An error wrapping errNotSent means nothing was written. A write error
// later fails the connection (the sends then count in doubt, as ones
// written in part do).
func (c *stompConn) writeRaw(parts ...[]byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closed {
		return fmt.Errorf("STOMP connection closed: %w", errNotSent)
	}
	if err := c.Failure(); err != nil {
		return fmt.Errorf("%w: %w", err, errNotSent)
	}
	c.wrote.Store(true)
	for _, p := range parts {
		if _, err := c.bw.Write(p); err != nil {
			if e := c.Failure(); e != nil {
				return e
			}
			go c.fail(err)
			return err
		}
	}
	select {
	case c.kick <- struct{}{}:
	default:
	}
	return nil
}

// request writes f with a receipt header and waits for the RECEIPT.
func (c *stompConn) request(ctx context.Context, f *frame.Frame, id string) error {
	ch := make(chan error, 1)
	if err := c.expect(id, func(err error) { ch <- err }); err != nil {
		return err
	}
	f.Header.Set(frame.Receipt, id)
	if err := c.writeFrame(f); err != nil {
		return err
	}
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return fmt.Errorf("waiting for %s receipt from %s: %w", f.Command, c.addr, ctx.Err())
	}
}

// CheckSTOMP logs in to the STOMP broker at ep and disconnects. It returns
// the broker's server header (e.g. "ActiveMQ-Artemis/2.44.0 ..."). A wrong
// user or password gives an error wrapping ErrLoginRefused.
func CheckSTOMP(ctx context.Context, ep driver.Endpoint) (string, error) {
	c, err := dialSTOMP(ctx, ep, "", nil, nil)
	if err != nil {
		return "", err
	}
	return c.server, c.close(5 * time.Second)
}

// Done is closed once the connection has failed or was closed
// (driver.LinkConn).
func (c *stompConn) Done() <-chan struct{} { return c.done }
