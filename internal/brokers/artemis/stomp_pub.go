package artemis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-stomp/stomp/v3/frame"

	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// stompReceiptEvery is k: a SEND carries a receipt header every k sends, so
// up to Window/k receipts are in flight and the pipe never drains.
func stompReceiptEvery(window int) int {
	if window < 4 {
		return 1
	}
	return window / 4
}

// stompPub is one publisher connection. Publish is called from one
// goroutine; the reader goroutine advances confirmed.
//
// Across a lost connection (stompLink redials): Publish and Flush wait
// until the link is up again (or their context ends). A message is sent
// again on the new connection only when nothing of it was written to the
// old one, so Resent stays 0; sends written to the old connection after
// its last RECEIPT are counted in InDoubt (exactly: Artemis sends receipts
// in order, so a receipt confirms every send before it).
type stompPub struct {
	link    *stompLink
	last    *stompConn // the connection of the latest send
	prefix  []byte     // "SEND\n" + fixed headers
	prefixT [][]byte   // round robin: the prefix of each topic
	filt    [][]byte   // filter cases: the filter header lines of each value
	window  uint64
	every   uint64
	sent    uint64
	flushes int

	confirmed atomic.Uint64 // highest sequence confirmed by a RECEIPT
	wake      chan struct{} // poked on every receipt
	num       []byte        // scratch for headers
}

// Publisher implements Driver.
func (d *stompDriver) Publisher(ctx context.Context, s driver.PubSpec) (driver.Publisher, error) {
	if err := d.Supports(s.Case.Factors); err != nil {
		return nil, err
	}
	if err := checkName(s.Case.Prefix); err != nil {
		return nil, err
	}
	if s.Window < 0 {
		return nil, fmt.Errorf("publisher %d: negative window %d", s.ID, s.Window)
	}
	if s.Window == 0 {
		s.Window = driver.DefaultWindow(s.Case.Factors)
	}
	tc, err := d.tlsClient(s.Case)
	if err != nil {
		return nil, err
	}
	l, err := newStompLink(ctx, d.ep, tc, "", nil, nil)
	if err != nil {
		return nil, err
	}
	p := &stompPub{
		link:   l,
		last:   l.Current(),
		prefix: sendPrefix(stompTopic(s.Case, s.Topic), s.Case.Factors.Delivery == scenario.Persistent),
		window: uint64(s.Window),
		every:  uint64(stompReceiptEvery(s.Window)),
		wake:   make(chan struct{}, 1),
	}
	f := s.Case.Factors
	if f.TopicRoundRobin {
		for t := 0; t < f.Topics; t++ {
			p.prefixT = append(p.prefixT, sendPrefix(stompTopic(s.Case, t), f.Delivery == scenario.Persistent))
		}
	}
	if f.Filtered() {
		p.filt = make([][]byte, f.Values)
		for v := range p.filt {
			p.filt[v] = stompFilterHeaders(f, v)
		}
	}
	return p, nil
}

// ConnStats implements ConnReporter.
func (p *stompPub) ConnStats() driver.ConnStats { return p.link.Log.Stats() }

// conn waits for a usable connection. On a new one, what the old one had
// not confirmed is counted in doubt: the old connection's reader has
// stopped (stompLink aborts it before redialing), so no receipt of it can
// still arrive.
func (p *stompPub) conn(ctx context.Context) (*stompConn, error) {
	c, err := p.link.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if c != p.last {
		p.link.Log.AddInDoubt(int64(p.sent - p.confirmed.Load()))
		p.confirmed.Store(p.sent)
		p.last = c
	}
	return c, nil
}

// sendPrefix is the fixed part of every SEND frame of a publisher.
func sendPrefix(dest string, persistent bool) []byte {
	return []byte("SEND\ndestination:" + dest + "\ndestination-type:MULTICAST\npersistent:" +
		strconv.FormatBool(persistent) + "\n")
}

// appendSendHeaders appends the per-message headers and the blank line:
// sel (when the case has a selector), content-length, and receipt:<seq>
// when seq > 0.
func appendSendHeaders(b []byte, sel, size int, seq uint64) []byte {
	if sel >= 0 {
		b = append(b, "sel:"...)
		b = strconv.AppendInt(b, int64(sel), 10)
		b = append(b, '\n')
	}
	b = append(b, "content-length:"...)
	b = strconv.AppendInt(b, int64(size), 10)
	b = append(b, '\n')
	if seq > 0 {
		b = append(b, "receipt:p"...)
		b = strconv.AppendUint(b, seq, 10)
		b = append(b, '\n')
	}
	return append(b, '\n')
}

var nul = []byte{0}

// Publish implements Publisher.
func (p *stompPub) Publish(ctx context.Context, m driver.Message) error {
	prefix, sel := p.prefix, m.Sel
	if p.prefixT != nil {
		if m.Topic < 0 || m.Topic >= len(p.prefixT) {
			return fmt.Errorf("publish: topic %d outside 0..%d", m.Topic, len(p.prefixT)-1)
		}
		prefix = p.prefixT[m.Topic]
	}
	var filt []byte
	if p.filt != nil {
		if sel < 0 || sel >= len(p.filt) {
			return fmt.Errorf("publish: filter value %d outside 0..%d", sel, len(p.filt)-1)
		}
		filt = p.filt[sel]
		sel = -1 // the filter headers replace the selector's sel header
	}
	for {
		c, err := p.conn(ctx)
		if err != nil {
			return err
		}
		seq := p.sent + 1
		if seq > p.window {
			if err := p.waitConfirmed(ctx, c, seq-p.window); err != nil {
				if c.Failure() != nil && ctx.Err() == nil {
					continue // lost: wait for the next connection
				}
				return err
			}
		}
		var rseq uint64
		if seq%p.every == 0 {
			rseq = seq
			if err := c.expect("p"+strconv.FormatUint(seq, 10), p.onReceipt(seq)); err != nil {
				continue // c failed before anything was written
			}
		}
		p.num = appendSendHeaders(append(p.num[:0], filt...), sel, len(m.Body), rseq)
		err = c.writeRaw(prefix, p.num, m.Body, nul)
		if errors.Is(err, errNotSent) {
			continue
		}
		// Written, or written in part when the connection broke: the
		// broker may have it; if so it is in doubt.
		p.sent = seq
		return nil
	}
}

func (p *stompPub) onReceipt(seq uint64) func(error) {
	return func(err error) {
		if err == nil {
			for {
				cur := p.confirmed.Load()
				if cur >= seq || p.confirmed.CompareAndSwap(cur, seq) {
					break
				}
			}
		}
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
}

// waitConfirmed blocks until every send up to seq is confirmed, or c
// fails. Receipts are sent by Artemis in order, after the frames before
// them are processed (for persistent messages: stored).
func (p *stompPub) waitConfirmed(ctx context.Context, c *stompConn, seq uint64) error {
	for p.confirmed.Load() < seq {
		if err := c.Failure(); err != nil {
			return err
		}
		select {
		case <-p.wake:
		case <-c.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Flush implements Publisher. If the last send carried no receipt, an empty
// transaction's ABORT carries one: Artemis answers it only after every
// earlier frame of the connection is done. When the connection is lost
// meanwhile, Flush waits for the next one and returns once it has
// confirmed its own sends; the old connection's unconfirmed ones are in
// doubt.
func (p *stompPub) Flush(ctx context.Context) error {
	for {
		c, err := p.conn(ctx)
		if err != nil {
			return err
		}
		err = p.flushOn(ctx, c)
		if err == nil || ctx.Err() != nil || c.Failure() == nil {
			return err
		}
	}
}

func (p *stompPub) flushOn(ctx context.Context, c *stompConn) error {
	if p.sent > 0 && p.sent%p.every != 0 && p.confirmed.Load() < p.sent {
		p.flushes++
		tx := "pslab-flush-" + strconv.Itoa(p.flushes)
		if err := c.writeFrame(frame.New(frame.BEGIN, frame.Transaction, tx)); err != nil {
			return err
		}
		seq := p.sent
		if err := c.expect("f"+strconv.Itoa(p.flushes), p.onReceipt(seq)); err != nil {
			return err
		}
		f := frame.New(frame.ABORT, frame.Transaction, tx, frame.Receipt, "f"+strconv.Itoa(p.flushes))
		if err := c.writeFrame(f); err != nil {
			return err
		}
	}
	return p.waitConfirmed(ctx, c, p.sent)
}

// Close implements Publisher: DISCONNECT (without a receipt: Flush has
// confirmed what was sent; stomp_close.go) and, once the broker has closed
// the connection, the socket. While the broker is unreachable it stops
// reconnecting and returns at once.
func (p *stompPub) Close() error {
	return p.link.Close(10*time.Second, nil)
}

// Abort implements Aborter.
func (p *stompPub) Abort() { p.link.Abort() }
