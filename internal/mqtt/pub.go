package mqtt

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// publisher is one MQTT publisher. Publish and Flush are called from one
// goroutine; the reader goroutine confirms sends.
//
// QoS 1 and 2: every send takes a slot (its packet identifier is the
// slot's index + 1) until the broker confirms it (PUBACK; PUBCOMP after
// PUBREC and PUBREL), at most window slots busy. The slot keeps the
// encoded PUBLISH: when the connection is lost, the next one sends every
// unconfirmed PUBLISH again with DUP set (counted in Resent) and every
// unfinished PUBREL, as MQTT's session resumption asks, so nothing is in
// doubt. QoS 0: a PINGREQ every window/4 sends, whose PINGRESP confirms
// the sends before it (the broker handles a connection's packets in
// order); on a broker that answers PINGREQ ahead of the PUBLISHes it has
// queued (Profile.PingOvertakes) a QoS 1 PUBLISH without payload to the
// case's barrier topic instead, whose PUBACK does. Sends a lost
// connection had not confirmed are in doubt.
type publisher struct {
	d      *Driver
	cl     *client
	spec   driver.PubSpec
	qos    byte
	window int
	topics []string // by topic*values+value; filled as used
	nvals  int

	mu           sync.Mutex
	slots        []slot
	next         int
	outstanding  int
	seq          uint64
	refused      int64 // MQTT 5 acknowledgements with a failure reason
	firstRefusal string

	sent      atomic.Uint64 // QoS 0 sends
	confirmed atomic.Uint64 // QoS 0 sends confirmed by a PINGRESP
	lastPing  uint64
	pingEvery uint64
	last      *conn // QoS 0: the connection of the latest send

	// QoS 0 barriers (Profile.PingOvertakes): by packet identifier, the
	// send count each confirms and the connection it went on.
	barrierTopic string
	barrierMu    sync.Mutex
	barriers     map[uint16]barrier
	barrierID    uint16

	wake chan struct{}
	hdr  []byte
}

// barrier is a QoS 0 publisher's QoS 1 PUBLISH awaiting its PUBACK, which
// confirms the first mark sends.
type barrier struct {
	mark uint64
	conn *conn
}

// slot is one send awaiting the broker's confirmation.
type slot struct {
	state byte // slotFree, slotSent (awaits PUBACK or PUBREC), slotReleased (PUBREL sent, awaits PUBCOMP)
	seq   uint64
	conn  *conn // the connection it was last written to
	pkt   []byte
}

const (
	slotFree byte = iota
	slotSent
	slotReleased
)

// Publisher implements driver.Driver.
func (d *Driver) Publisher(ctx context.Context, s driver.PubSpec) (driver.Publisher, error) {
	f := s.Case.Factors
	if err := d.Supports(f); err != nil {
		return nil, err
	}
	if s.Window < 0 {
		return nil, fmt.Errorf("publisher %d: negative window %d", s.ID, s.Window)
	}
	if s.Window == 0 {
		s.Window = driver.DefaultWindow(f)
	}
	p := &publisher{d: d, spec: s, qos: QoS(f), wake: make(chan struct{}, 1), nvals: 1}
	switch {
	case f.Filtered():
		p.nvals = max(f.Values, 1)
	case f.Selector:
		p.nvals = scenario.SelectorValues
	}
	p.topics = make([]string, f.Topics*p.nvals)
	p.window = s.Window
	if p.qos > 0 {
		p.window = min(p.window, 65535) // packet identifiers
		p.slots = make([]slot, p.window)
	}
	p.pingEvery = uint64(max(p.window/4, 1))
	if p.qos == 0 && d.p.PingOvertakes != "" {
		p.barrierTopic, p.barriers = barrierTopic(s.Case.Prefix), map[uint16]barrier{}
	}
	persistent := p.qos > 0
	id := pubClientID(s)
	cl, err := newClient(ctx, d, d.connectOpts(id, persistent), p.onPacket, p.onPingresp, p.resume)
	if err != nil {
		return nil, fmt.Errorf("publisher %d: %w", s.ID, err)
	}
	if persistent {
		d.noteSession(id)
	}
	if rm := int(cl.Current().serverRecvMax); rm > 0 && p.qos > 0 && rm < p.window {
		p.window = rm // MQTT 5: the broker takes no more unconfirmed
	}
	p.cl = cl
	p.last = cl.Current()
	return p, nil
}

// CopiesBody implements driver.BodyCopier: the body is copied into the
// output buffer (and the slot) before Publish returns.
func (p *publisher) CopiesBody() bool { return true }

// ConnStats implements driver.ConnReporter.
func (p *publisher) ConnStats() driver.ConnStats {
	st := p.cl.Log.Stats()
	p.mu.Lock()
	st.InDoubt += p.refused
	p.mu.Unlock()
	return st
}

// topic is the topic of message m.
func (p *publisher) topic(m driver.Message) (string, error) {
	f := p.spec.Case.Factors
	t := driver.MessageTopic(p.spec, m)
	v := 0
	if p.nvals > 1 {
		v = m.Sel
	}
	if t < 0 || t >= f.Topics || v < 0 || v >= p.nvals {
		return "", fmt.Errorf("publish: topic %d value %d outside 0..%d, 0..%d", t, m.Sel, f.Topics-1, p.nvals-1)
	}
	i := t*p.nvals + v
	if p.topics[i] == "" {
		sel := -1
		if p.nvals > 1 {
			sel = v
		}
		p.topics[i] = topicName(p.spec.Case.Prefix, f, t, sel)
	}
	return p.topics[i], nil
}

// Publish implements driver.Publisher.
func (p *publisher) Publish(ctx context.Context, m driver.Message) error {
	topic, err := p.topic(m)
	if err != nil {
		return err
	}
	if p.qos == 0 {
		return p.publish0(ctx, topic, m.Body)
	}
	return p.publish12(ctx, topic, m.Body)
}

func (p *publisher) publish0(ctx context.Context, topic string, body []byte) error {
	for {
		c, err := p.cl.Conn(ctx)
		if err != nil {
			return err
		}
		if c != p.last { // a new connection: the old one's unconfirmed sends are in doubt
			sent := p.sent.Load()
			p.cl.Log.AddInDoubt(int64(sent - p.confirmed.Load()))
			p.confirmed.Store(sent)
			p.lastPing, p.last = sent, c
		}
		sent := p.sent.Load()
		if sent-p.confirmed.Load() >= uint64(p.window) {
			if err := p.waitWake(ctx, c); err != nil {
				return err
			}
			continue
		}
		p.hdr = publishHeader(p.hdr[:0], p.d.p.Version, topic, 0, false, 0, len(body))
		if err := c.write(p.hdr, body); err != nil {
			if errors.Is(err, errClosed) {
				continue
			}
			return err
		}
		sent++
		p.sent.Store(sent)
		if sent-p.lastPing >= p.pingEvery {
			p.lastPing = sent
			_ = p.confirmUpTo(c, sent)
		}
		return nil
	}
}

// waitWake waits for a confirmation, c's failure or ctx's end (the
// caller checks again which).
func (p *publisher) waitWake(ctx context.Context, c *conn) error {
	select {
	case <-p.wake:
	case <-c.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

func (p *publisher) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// confirmUpTo asks the broker on c to confirm the first mark sends: a
// PINGREQ, or a barrier where the broker's PINGRESP overtakes PUBLISHes.
func (p *publisher) confirmUpTo(c *conn, mark uint64) error {
	if p.barriers == nil {
		return c.ping(mark)
	}
	p.barrierMu.Lock()
	for k, b := range p.barriers {
		if b.conn != c { // sent on a lost connection: its PUBACK never comes
			delete(p.barriers, k)
		}
	}
	p.barrierID++
	if p.barrierID == 0 {
		p.barrierID = 1
	}
	id := p.barrierID
	p.barriers[id] = barrier{mark: mark, conn: c}
	p.barrierMu.Unlock()
	return c.write(publishHeader(nil, p.d.p.Version, p.barrierTopic, 1, false, id, 0))
}

// onBarrierAck handles a PUBACK to a QoS 0 publisher: a barrier's.
func (p *publisher) onBarrierAck(c *conn, pk packet) error {
	if pk.typ != pktPuback || p.barriers == nil {
		return nil
	}
	a, err := decodeAck(pk.typ, pk.body)
	if err != nil {
		return err
	}
	p.barrierMu.Lock()
	b, ok := p.barriers[a.id]
	mine := ok && b.conn == c // a barrier sent on this connection
	if mine {
		delete(p.barriers, a.id)
	}
	p.barrierMu.Unlock()
	if mine {
		p.onPingresp(b.mark)
	}
	return nil
}

func (p *publisher) onPingresp(mark uint64) {
	for {
		cur := p.confirmed.Load()
		if mark <= cur || p.confirmed.CompareAndSwap(cur, mark) {
			break
		}
	}
	p.poke()
}

func (p *publisher) publish12(ctx context.Context, topic string, body []byte) error {
	c, err := p.cl.Conn(ctx)
	if err != nil {
		return err
	}
	p.mu.Lock()
	for p.outstanding >= p.window || p.slots[p.next].state != slotFree {
		p.mu.Unlock()
		if err := p.waitWake(ctx, c); err != nil {
			return err
		}
		if c.Failure() != nil {
			if c, err = p.cl.Conn(ctx); err != nil {
				return err
			}
		}
		p.mu.Lock()
	}
	i := p.next
	p.next = (p.next + 1) % len(p.slots)
	s := &p.slots[i]
	p.seq++
	s.state, s.seq, s.conn = slotSent, p.seq, c
	s.pkt = append(publishHeader(s.pkt[:0], p.d.p.Version, topic, p.qos, false, uint16(i+1), len(body)), body...)
	p.outstanding++
	p.mu.Unlock()
	for {
		err := c.write(s.pkt)
		if err == nil || !errors.Is(err, errClosed) {
			return err
		}
		// Nothing was queued on c. The next connection's resume sends
		// the busy slots again; if it took its list before this slot was
		// filled, send it here.
		if c, err = p.cl.Conn(ctx); err != nil {
			return nil // the slot stays: a later connection sends it
		}
		p.mu.Lock()
		if s.state == slotFree || s.conn == c {
			p.mu.Unlock()
			return nil
		}
		s.conn = c
		p.mu.Unlock()
	}
}

// onPacket handles the broker's confirmations (reader goroutine).
func (p *publisher) onPacket(c *conn, pk packet) error {
	if p.qos == 0 {
		return p.onBarrierAck(c, pk)
	}
	switch pk.typ {
	case pktPuback, pktPubrec, pktPubcomp:
	default:
		return nil // a publisher subscribes to nothing
	}
	a, err := decodeAck(pk.typ, pk.body)
	if err != nil {
		return err
	}
	i := int(a.id) - 1
	p.mu.Lock()
	if i < 0 || i >= len(p.slots) || p.slots[i].state == slotFree {
		p.mu.Unlock()
		return nil // a confirmation of a send confirmed before (after a resend)
	}
	s := &p.slots[i]
	var rel bool
	switch {
	case a.reason >= 0x80: // MQTT 5: the broker refused the message
		p.refused++
		if p.firstRefusal == "" {
			p.firstRefusal = fmt.Sprintf("%s reason 0x%02x", pktNames[pk.typ], a.reason)
		}
		p.free(s)
	case pk.typ == pktPubrec && s.state == slotSent:
		s.state, s.conn = slotReleased, c
		rel = true
	case pk.typ == pktPubrec: // PUBREC again for a released slot: release again
		rel = true
	case pk.typ == pktPuback || pk.typ == pktPubcomp:
		p.free(s)
	}
	p.mu.Unlock()
	if rel {
		var b [4]byte
		if err := c.queue(appendAck(b[:0], pktPubrel, a.id)); err != nil && !errors.Is(err, errClosed) {
			return err
		}
	}
	p.poke()
	return nil
}

// free marks s confirmed. Called with p.mu held.
func (p *publisher) free(s *slot) {
	s.state, s.conn = slotFree, nil
	p.outstanding--
}

// resume runs on each new connection before it becomes current: the
// unconfirmed PUBLISHes go again, flagged DUP, in their order, and the
// unfinished PUBRELs (a broker that kept no session had the message:
// PUBREC said so; its slot is done).
func (p *publisher) resume(_ context.Context, c *conn) error {
	if p.qos == 0 {
		return nil
	}
	p.mu.Lock()
	var busy []int
	for i := range p.slots {
		if p.slots[i].state != slotFree {
			busy = append(busy, i)
		}
	}
	sort.Slice(busy, func(a, b int) bool { return p.slots[busy[a]].seq < p.slots[busy[b]].seq })
	var out [][]byte
	var resent int64
	for _, i := range busy {
		s, id := &p.slots[i], uint16(i+1)
		switch {
		case s.state == slotReleased && c.sessionPresent:
			out = append(out, appendAck(nil, pktPubrel, id))
		case s.state == slotReleased:
			p.free(s)
			continue
		default:
			s.pkt[0] |= 0x08 // DUP
			out = append(out, s.pkt)
			resent++
		}
		s.conn = c
	}
	p.mu.Unlock()
	if resent > 0 { // never on the first connection, before p.cl is set
		p.cl.Log.AddResent(resent)
	}
	p.poke()
	for _, b := range out {
		if err := c.write(b); err != nil {
			return err
		}
	}
	return nil
}

// Flush implements driver.Publisher: it waits until the broker has
// confirmed every send (QoS 0: a PINGRESP after the last one). Across a
// lost connection it waits for the next one.
func (p *publisher) Flush(ctx context.Context) error {
	for {
		c, err := p.cl.Conn(ctx)
		if err != nil {
			return err
		}
		if p.qos == 0 {
			if c != p.last {
				sent := p.sent.Load()
				p.cl.Log.AddInDoubt(int64(sent - p.confirmed.Load()))
				p.confirmed.Store(sent)
				p.lastPing, p.last = sent, c
			}
			sent := p.sent.Load()
			if p.confirmed.Load() >= sent {
				return nil
			}
			if p.lastPing < sent {
				p.lastPing = sent
				_ = p.confirmUpTo(c, sent)
			}
		} else {
			p.mu.Lock()
			n := p.outstanding
			p.mu.Unlock()
			if n == 0 {
				return nil
			}
		}
		if err := p.waitWake(ctx, c); err != nil {
			return err
		}
	}
}

// Close implements driver.Publisher: DISCONNECT and the socket. While the
// broker is unreachable it stops reconnecting and returns at once.
func (p *publisher) Close() error {
	err := p.cl.Close(10*time.Second, nil)
	p.mu.Lock()
	r := p.firstRefusal
	p.mu.Unlock()
	if err == nil && r != "" {
		err = fmt.Errorf("publisher %d: the broker refused %d sends (first: %s)", p.spec.ID, p.refused, r)
	}
	return err
}

// Abort implements driver.Aborter.
func (p *publisher) Abort() { p.cl.Abort() }

// randomID is 8 random hex digits.
func randomID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
