package mqtt

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"pslab/internal/driver"
)

// conn is one MQTT connection: the client's own state machine over the
// codec of codec.go. Writers append whole packets to an output buffer; a
// writer goroutine swaps the buffer out and writes it to the socket, so a
// publisher at saturation hands the kernel tens of packets per system
// call, and a subscriber's acknowledgements go out together once its
// reader has drained what arrived. A reader goroutine dispatches every
// packet; a keep-alive goroutine sends PINGREQ when nothing else was sent
// and drops a connection that read nothing for the stall tolerance while
// a PINGREQ was unanswered.
type conn struct {
	v              Version
	nc             net.Conn
	addr           string
	sessionPresent bool   // CONNACK: the broker resumed the client's session
	keepSession    bool   // CONNECT asked the broker to keep the session (clean session/start off)
	serverRecvMax  uint16 // MQTT 5 CONNACK Receive Maximum; 0: not given

	wmu       sync.Mutex
	dataReady *sync.Cond // the writer waits on it for output
	room      *sync.Cond // appenders wait on it while out is full
	out       []byte
	spare     []byte
	wstop     bool     // nothing more is accepted (failed, or DISCONNECT queued)
	bye       bool     // DISCONNECT was queued
	pings     []uint64 // marks of the PINGREQs in flight, oldest first
	wrote     atomic.Bool

	mu        sync.Mutex
	err       error
	done      chan struct{}
	readDone  chan struct{}
	writeDone chan struct{}
	werr      error                  // the writer's own error (set before writeDone closes)
	waiters   map[uint16]chan []byte // SUBACK/UNSUBACK by packet identifier

	onPacket   func(*conn, packet) error // every packet but PINGRESP, SUBACK, UNSUBACK, DISCONNECT
	onPingresp func(mark uint64)
	lastRead   atomic.Int64 // unix ns of the last packet read
	pingSince  atomic.Int64 // unix ns of the oldest unanswered PINGREQ; 0: none
	stall      time.Duration
}

// maxPending bounds the output buffer: an appender waits beyond it (the
// socket is backpressure for the publisher, as in nats.go).
const maxPending = 256 << 10

// errClosed is returned by writes on a connection that is closing or has
// failed: nothing of the packet was queued.
var errClosed = errors.New("MQTT connection closed")

// ErrLoginRefused means the broker refused the user name or password.
var ErrLoginRefused = errors.New("login refused by the broker")

// connectOpts is what CONNECT says.
type connectOpts struct {
	v             Version
	clientID      string
	clean         bool   // clean session (3.1.1), clean start (5)
	sessionExpiry uint32 // MQTT 5: seconds the session outlives the connection
	keepAlive     time.Duration
	stall         time.Duration // no answer for this long: the connection is dead
	receiveMax    uint16        // MQTT 5: deliveries in flight the client takes
}

// dial connects to addr through ep's dialer, logs in with CONNECT and
// waits for CONNACK. onPacket and onPingresp must be set before the first
// packet can arrive, so they are given here.
func dial(ctx context.Context, ep driver.Endpoint, addr string, o connectOpts,
	onPacket func(*conn, packet) error, onPingresp func(uint64)) (*conn, error) {
	var d driver.Dialer = ep.Dialer
	if d == nil {
		d = &net.Dialer{Timeout: 10 * time.Second}
	}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("MQTT connect to %s: %w", addr, err)
	}
	c := &conn{v: o.v, nc: nc, addr: addr, done: make(chan struct{}), readDone: make(chan struct{}),
		writeDone: make(chan struct{}), waiters: map[uint16]chan []byte{},
		onPacket: onPacket, onPingresp: onPingresp, stall: o.stall, keepSession: !o.clean}
	c.dataReady, c.room = sync.NewCond(&c.wmu), sync.NewCond(&c.wmu)
	pr := &packetReader{br: bufio.NewReaderSize(nc, 64<<10)}
	if err := c.login(ctx, pr, ep, o); err != nil {
		nc.Close()
		return nil, err
	}
	c.lastRead.Store(time.Now().UnixNano())
	go c.readLoop(pr)
	go c.writeLoop()
	go c.keepAlive(o.keepAlive)
	return c, nil
}

func (c *conn) login(ctx context.Context, pr *packetReader, ep driver.Endpoint, o connectOpts) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(30 * time.Second)
	}
	c.nc.SetDeadline(deadline)
	defer c.nc.SetDeadline(time.Time{})
	ka := uint16(min(o.keepAlive/time.Second, 65535))
	pkt, err := connectPacket(o.v, o.clientID, ep.User, ep.Password, o.clean, ka, o.sessionExpiry, o.receiveMax)
	if err != nil {
		return fmt.Errorf("MQTT connect to %s: %w", c.addr, err)
	}
	if _, err := c.nc.Write(pkt); err != nil {
		return fmt.Errorf("MQTT connect to %s: %w", c.addr, err)
	}
	p, err := pr.next()
	if err != nil {
		return fmt.Errorf("MQTT connect to %s: no CONNACK: %w", c.addr, err)
	}
	if p.typ != pktConnack {
		return fmt.Errorf("MQTT connect to %s: %s instead of CONNACK", c.addr, pktNames[p.typ])
	}
	ca, err := decodeConnack(o.v, p.body)
	if err != nil {
		return fmt.Errorf("MQTT connect to %s: %w", c.addr, err)
	}
	switch {
	case ca.code == 0:
	case refusedLogin(ca.code):
		return fmt.Errorf("MQTT login to %s as user %q: %w (%s)", c.addr, ep.User, ErrLoginRefused, ca.reason)
	default:
		return fmt.Errorf("MQTT connect to %s as client %q: refused: %s (code %d)", c.addr, o.clientID, ca.reason, ca.code)
	}
	c.sessionPresent, c.serverRecvMax = ca.sessionPresent, ca.receiveMax
	return nil
}

func (c *conn) readLoop(pr *packetReader) {
	defer close(c.readDone)
	for {
		p, err := pr.next()
		if err != nil {
			c.fail(fmt.Errorf("MQTT connection to %s: %w", c.addr, err))
			return
		}
		c.lastRead.Store(time.Now().UnixNano())
		c.dispatch(p)
		if c.Failure() != nil {
			return
		}
		// What the handlers queued (acknowledgements) goes out once
		// everything read so far is handled, together.
		if pr.br.Buffered() == 0 {
			c.kick()
		}
	}
}

// dispatch handles one packet on the reader goroutine.
func (c *conn) dispatch(p packet) {
	{
		switch p.typ {
		case pktPingresp:
			c.pingSince.Store(0)
			c.wmu.Lock()
			var mark uint64
			if len(c.pings) > 0 {
				mark = c.pings[0]
				c.pings = c.pings[1:]
			}
			if len(c.pings) > 0 {
				c.pingSince.Store(time.Now().UnixNano())
			}
			c.wmu.Unlock()
			if c.onPingresp != nil {
				c.onPingresp(mark)
			}
		case pktSuback, pktUnsuback:
			if len(p.body) < 2 {
				c.fail(fmt.Errorf("%w: %s", errMalformed, pktNames[p.typ]))
				return
			}
			id := binary.BigEndian.Uint16(p.body)
			c.mu.Lock()
			ch := c.waiters[id]
			delete(c.waiters, id)
			c.mu.Unlock()
			if ch != nil {
				ch <- append([]byte(nil), p.body...)
			}
		case pktDisconnect:
			c.fail(errors.New(decodeDisconnect(c.v, p.body)))
		default:
			if err := c.onPacket(c, p); err != nil {
				c.fail(err)
			}
		}
	}
}

// kick wakes the writer for what was queued without waking it.
func (c *conn) kick() {
	c.wmu.Lock()
	if len(c.out) > 0 {
		c.dataReady.Signal()
	}
	c.wmu.Unlock()
}

func (c *conn) writeLoop() {
	defer close(c.writeDone)
	for {
		c.wmu.Lock()
		for len(c.out) == 0 && !c.wstop {
			c.dataReady.Wait()
		}
		if len(c.out) == 0 || c.Failure() != nil {
			c.wmu.Unlock()
			return
		}
		buf := c.out
		c.out, c.spare = c.spare[:0], nil
		c.room.Broadcast()
		c.wmu.Unlock()
		_, err := c.nc.Write(buf)
		c.wmu.Lock()
		c.spare = buf[:0]
		c.wmu.Unlock()
		if err != nil {
			c.werr = fmt.Errorf("MQTT connection to %s: %w", c.addr, err)
			c.fail(c.werr)
			return
		}
	}
}

// write queues whole packets (their parts in order) and wakes the
// writer, waiting while the output buffer is full. errClosed (wrapped)
// means nothing was queued.
func (c *conn) write(parts ...[]byte) error { return c.put(true, parts) }

// queue is write for the reader goroutine's acknowledgements: the writer
// is woken once the reader has handled everything it read, so that they
// go out together.
func (c *conn) queue(parts ...[]byte) error { return c.put(false, parts) }

func (c *conn) put(wake bool, parts [][]byte) error {
	c.wmu.Lock()
	for len(c.out) >= maxPending && !c.wstop {
		if !wake {
			c.dataReady.Signal() // the reader waits for room: the writer must run
		}
		c.room.Wait()
	}
	if c.wstop {
		c.wmu.Unlock()
		if err := c.Failure(); err != nil {
			return fmt.Errorf("%w: %w", errClosed, err)
		}
		return errClosed
	}
	if wake && len(c.out) == 0 {
		c.dataReady.Signal()
	}
	for _, p := range parts {
		c.out = append(c.out, p...)
	}
	c.wmu.Unlock()
	c.wrote.Store(true)
	return nil
}

// ping queues a PINGREQ whose PINGRESP will be reported with mark.
func (c *conn) ping(mark uint64) error {
	c.wmu.Lock()
	if c.wstop {
		c.wmu.Unlock()
		return errClosed
	}
	if len(c.out) == 0 {
		c.dataReady.Signal()
	}
	c.out = append(c.out, pingreq...)
	c.pings = append(c.pings, mark)
	c.wmu.Unlock()
	c.pingSince.CompareAndSwap(0, time.Now().UnixNano())
	c.wrote.Store(true)
	return nil
}

// keepAlive sends a PINGREQ when nothing was written for half the
// keep-alive interval, and fails the connection when a PINGREQ is
// unanswered and nothing at all was read for the stall tolerance.
func (c *conn) keepAlive(ka time.Duration) {
	if ka <= 0 {
		return
	}
	t := time.NewTicker(ka / 2)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
			now := time.Now().UnixNano()
			if ps := c.pingSince.Load(); ps != 0 && c.stall > 0 &&
				now-ps > int64(c.stall) && now-c.lastRead.Load() > int64(c.stall) {
				c.fail(fmt.Errorf("no answer from the broker for %s (keep-alive)", c.stall))
				return
			}
			if !c.wrote.Swap(false) {
				_ = c.ping(0)
			}
		}
	}
}

// request writes pkt (a SUBSCRIBE or UNSUBSCRIBE with identifier id) and
// waits for its acknowledgement's body.
func (c *conn) request(ctx context.Context, pkt []byte, id uint16) ([]byte, error) {
	ch := make(chan []byte, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil, c.err
	}
	c.waiters[id] = ch
	c.mu.Unlock()
	if err := c.write(pkt); err != nil {
		return nil, err
	}
	select {
	case b := <-ch:
		return b, nil
	case <-c.done:
		// The reader hands over an answer before it fails the connection,
		// so an answer that came just before the loss is here.
		select {
		case b := <-ch:
			return b, nil
		default:
		}
		return nil, c.Failure()
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the answer of %s: %w", c.addr, ctx.Err())
	}
}

// fail records the first error, stops the writer and closes the socket.
func (c *conn) fail(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	close(c.done)
	c.mu.Unlock()
	c.wmu.Lock()
	c.wstop = true
	c.dataReady.Broadcast()
	c.room.Broadcast()
	c.wmu.Unlock()
	c.nc.Close()
}

// disconnected tells whether DISCONNECT was queued before any failure.
func (c *conn) disconnected() bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.bye
}

// SessionResumed implements driver.SessionAnswerer: the CONNACK's session
// present flag, and whether CONNECT asked to keep the session (a clean
// session is always answered 0).
func (c *conn) SessionResumed() (resumed, asked bool) {
	return c.sessionPresent, c.keepSession
}

// failure is the connection's error; nil while it is healthy.
func (c *conn) Failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// errAborted is the failure of a connection dropped on purpose.
var errAborted = errors.New("connection dropped by the client")

// abort drops the connection at once: the socket is reset (SO_LINGER 0),
// nothing queued is sent, no DISCONNECT.
func (c *conn) Abort() {
	if l, ok := c.nc.(interface{ SetLinger(int) error }); ok {
		_ = l.SetLinger(0)
	}
	c.fail(errAborted)
}

// close ends the connection gracefully by the deadline: what is queued,
// then DISCONNECT, then the socket. MQTT 5's DISCONNECT with reason 0
// keeps the session of a client that asked for an expiry interval.
func (c *conn) CloseBy(deadline time.Time) error {
	c.wmu.Lock()
	if !c.wstop {
		c.out = append(c.out, disconnectPacket(c.v)...)
		c.wstop, c.bye = true, true
		c.dataReady.Broadcast()
		c.room.Broadcast()
	}
	c.wmu.Unlock()
	var err error
	select {
	case <-c.writeDone:
		// The broker closes the connection once it has read DISCONNECT:
		// only the writer's own failure (or one before the close) counts.
		err = c.werr
		if err == nil && c.Failure() != nil && !c.disconnected() {
			err = c.Failure()
		}
	case <-time.After(time.Until(deadline)):
		err = fmt.Errorf("MQTT connection to %s: DISCONNECT not written by the close deadline", c.addr)
	}
	c.mu.Lock()
	if c.err == nil {
		c.err = errClosed
		close(c.done)
	}
	c.mu.Unlock()
	c.nc.Close()
	<-c.readDone
	return err
}

// Done is closed once the connection has failed or was closed
// (driver.LinkConn).
func (c *conn) Done() <-chan struct{} { return c.done }
