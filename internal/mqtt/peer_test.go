package mqtt

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// A scripted MQTT 3.1.1 peer: each accepted connection runs the next
// script, so a test plays the broker's side packet by packet (a lost
// PUBREL, a resumed session, a connection dropped between two packets).

type peer struct {
	t       *testing.T
	ln      net.Listener
	mu      sync.Mutex
	scripts []func(*peerConn)
	done    sync.WaitGroup
}

type peerConn struct {
	t  *testing.T
	nc net.Conn
	r  *packetReader
	// connect is the CONNECT's clean-session flag and client id.
	clean bool
	id    string
}

func newPeer(t *testing.T, scripts ...func(*peerConn)) *peer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &peer{t: t, ln: ln, scripts: scripts}
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.done.Wait() })
	return p
}

func (p *peer) serve() {
	for {
		nc, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if len(p.scripts) == 0 {
			p.mu.Unlock()
			nc.Close()
			continue
		}
		script := p.scripts[0]
		p.scripts = p.scripts[1:]
		p.mu.Unlock()
		p.done.Add(1)
		go func() {
			defer p.done.Done()
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(20 * time.Second))
			pc := &peerConn{t: p.t, nc: nc, r: &packetReader{br: bufio.NewReader(nc)}}
			script(pc)
		}()
	}
}

func (p *peer) endpoint() driver.Endpoint {
	return driver.Endpoint{URL: "mqtt://" + p.ln.Addr().String(), User: "u", Password: "p"}
}

// next reads the next packet, skipping PINGREQs (answered).
func (c *peerConn) next() packet {
	for {
		pk, err := c.r.next()
		if err != nil {
			return packet{typ: 0}
		}
		if pk.typ == pktPingreq {
			c.send([]byte{pktPingresp << 4, 0})
			continue
		}
		pk.body = append([]byte(nil), pk.body...)
		return pk
	}
}

// must ends the script when a check of it failed (the check reported
// it): scripts run on the peer's goroutines, where require's FailNow must
// not be called (it is for the test's goroutine only).
func (c *peerConn) must(ok bool) {
	if !ok {
		runtime.Goexit()
	}
}

func (c *peerConn) send(b []byte) {
	_, _ = c.nc.Write(b)
}

// accept reads CONNECT and answers CONNACK with sessionPresent.
func (c *peerConn) accept(sessionPresent bool) {
	pk := c.next()
	c.must(assert.EqualValues(c.t, pktConnect, pk.typ))
	// protocol name (6), level (1), flags (1), keep-alive (2), client id
	flags := pk.body[7]
	c.clean = flags&0x02 != 0
	n := int(binary.BigEndian.Uint16(pk.body[10:]))
	c.id = string(pk.body[12 : 12+n])
	sp := byte(0)
	if sessionPresent {
		sp = 1
	}
	c.send([]byte{pktConnack << 4, 2, sp, 0})
}

// suback answers the SUBSCRIBE that comes next, granting qos.
func (c *peerConn) suback(qos byte) {
	pk := c.next()
	c.must(assert.EqualValues(c.t, pktSubscribe, pk.typ))
	id := binary.BigEndian.Uint16(pk.body)
	c.send([]byte{pktSuback << 4, 3, byte(id >> 8), byte(id), qos})
}

func (c *peerConn) publish(qos byte, dup bool, id uint16, payload string) {
	c.send(append(publishHeader(nil, V311, "r/t0", qos, dup, id, len(payload)), payload...))
}

func peerDriver(t *testing.T, p *peer) *Driver {
	d, err := New(testProfile(), p.endpoint())
	require.NoError(t, err)
	return d
}

// peerPublisher opens a publisher of a persistent, non-durable case with
// ack on p (window 10); ctx bounds the test.
func peerPublisher(t *testing.T, p *peer, ack scenario.AckMode) (driver.Publisher, context.Context) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	t.Cleanup(cancel)
	pub, err := peerDriver(t, p).Publisher(ctx, driver.PubSpec{Case: peerCase(scenario.Persistent, ack, scenario.NonDurable), Window: 10})
	require.NoError(t, err)
	return pub, ctx
}

func peerCase(del scenario.Delivery, ack scenario.AckMode, sub scenario.Subscription) driver.CaseSpec {
	f := baseFactors()
	f.Delivery, f.Ack, f.Subscription = del, ack, sub
	return driver.CaseSpec{Prefix: "pslab-peer", Factors: f}
}

// TestQoS2DeliversOnceAcrossALostPUBREL: the broker resends a QoS 2
// PUBLISH (DUP) on the resumed session because the PUBREL never came; the
// subscriber answers PUBREC again but does not deliver it twice.
func TestQoS2DeliversOnceAcrossALostPUBREL(t *testing.T) {
	released := make(chan struct{})
	p := newPeer(t,
		func(c *peerConn) {
			c.accept(false)
			c.suback(2)
			c.publish(2, false, 5, "m5")
			pk := c.next()
			assert.EqualValues(t, pktPubrec, pk.typ)
			// the connection drops before PUBREL
		},
		func(c *peerConn) {
			c.accept(true) // session resumed: no SUBSCRIBE
			assert.False(t, c.clean, "a durable subscriber resumes its session")
			c.publish(2, true, 5, "m5")
			pk := c.next()
			assert.EqualValues(t, pktPubrec, pk.typ, "PUBREC again for the resent PUBLISH")
			c.send(appendAck(nil, pktPubrel, 5))
			pk = c.next()
			assert.EqualValues(t, pktPubcomp, pk.typ)
			c.publish(2, false, 6, "m6")
			pk = c.next()
			assert.EqualValues(t, pktPubrec, pk.typ)
			close(released)
			c.next() // until the client goes
		})
	d := peerDriver(t, p)
	var mu sync.Mutex
	var got []string
	s, err := d.Subscriber(context.Background(), driver.SubSpec{Case: peerCase(scenario.Persistent, scenario.AckExactlyOnce, scenario.Durable), ClientID: "pslab-peer-c0"},
		func(dl driver.Delivery) { mu.Lock(); got = append(got, string(dl.Body)); mu.Unlock() })
	require.NoError(t, err)
	select {
	case <-released:
	case <-time.After(15 * time.Second):
		t.Fatal("the script did not finish")
	}
	require.NoError(t, s.Close())
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"m5", "m6"}, got, "m5 once, though the broker sent it twice")
	st := s.(driver.ConnReporter).ConnStats()
	require.Len(t, st.Outages, 1)
	assert.False(t, st.Outages[0].Restored.IsZero())
}

// TestQoS1PublisherResendsWhatWasNotAcknowledged: after a lost
// connection the publisher's resumed session sends the unacknowledged
// PUBLISHes again, in order, flagged DUP, counted as resent.
func TestQoS1PublisherResendsWhatWasNotAcknowledged(t *testing.T) {
	type seen struct {
		id  uint16
		dup bool
	}
	var first, second []seen
	p := newPeer(t,
		func(c *peerConn) {
			c.accept(false)
			assert.False(t, c.clean, "a QoS 1 publisher keeps a session")
			for i := 0; i < 3; i++ {
				pk := c.next()
				m, err := decodePublish(V311, pk.flags, pk.body)
				c.must(assert.NoError(t, err))
				first = append(first, seen{m.id, m.dup})
			}
			c.send(appendAck(nil, pktPuback, first[0].id))
			time.Sleep(100 * time.Millisecond)
		},
		func(c *peerConn) {
			c.accept(true)
			for i := 0; i < 2; i++ {
				pk := c.next()
				m, err := decodePublish(V311, pk.flags, pk.body)
				c.must(assert.NoError(t, err))
				second = append(second, seen{m.id, m.dup})
				c.send(appendAck(nil, pktPuback, m.id))
			}
			c.next()
		})
	pub, ctx := peerPublisher(t, p, scenario.AckAuto)
	for i := 0; i < 3; i++ {
		require.NoError(t, pub.Publish(ctx, driver.Message{Body: []byte("m" + strconv.Itoa(i)), Sel: -1}))
	}
	require.NoError(t, pub.Flush(ctx), "confirmed on the second connection")
	require.NoError(t, pub.Close())
	assert.Equal(t, []seen{{1, false}, {2, false}, {3, false}}, first)
	assert.Equal(t, []seen{{2, true}, {3, true}}, second, "the unacknowledged two again, in order, DUP")
	st := pub.(driver.ConnReporter).ConnStats()
	assert.EqualValues(t, 2, st.Resent)
	assert.Zero(t, st.InDoubt, "nothing in doubt: MQTT resends")
}

// TestQoS0PublisherCountsSendsInDoubt: QoS 0 sends a lost connection had
// not confirmed by a PINGRESP are in doubt.
func TestQoS0PublisherCountsSendsInDoubt(t *testing.T) {
	p := newPeer(t,
		func(c *peerConn) {
			c.accept(false)
			assert.True(t, c.clean, "a QoS 0 publisher needs no session")
			for n := 0; n < 4; {
				pk, err := c.r.next()
				c.must(assert.NoError(t, err))
				switch pk.typ {
				case pktPublish:
					n++
				case pktPingreq:
					c.send([]byte{pktPingresp << 4, 0}) // confirms the 4 sends before it
				}
			}
			pk, err := c.r.next() // the PINGREQ after send 4: confirms 1..4
			c.must(assert.NoError(t, err))
			c.must(assert.EqualValues(t, pktPingreq, pk.typ))
			c.send([]byte{pktPingresp << 4, 0})
			for n := 0; n < 3; n++ { // sends 5..7, then the connection drops unconfirmed
				pk := c.next()
				c.must(assert.EqualValues(t, pktPublish, pk.typ))
			}
		},
		func(c *peerConn) {
			c.accept(false)
			c.next()
		})
	d := peerDriver(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	pub, err := d.Publisher(ctx, driver.PubSpec{Case: peerCase(scenario.NonPersistent, scenario.AckAuto, scenario.NonDurable), Window: 16})
	require.NoError(t, err)
	for i := 0; i < 7; i++ {
		require.NoError(t, pub.Publish(ctx, driver.Message{Body: []byte("x"), Sel: -1}))
	}
	require.Eventually(t, func() bool {
		st := pub.(driver.ConnReporter).ConnStats()
		return len(st.Outages) == 1 && !st.Outages[0].Restored.IsZero()
	}, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, pub.Flush(ctx))
	st := pub.(driver.ConnReporter).ConnStats()
	assert.EqualValues(t, 3, st.InDoubt, "sends 5..7 were never confirmed")
	assert.Zero(t, st.Resent, "QoS 0 is never sent again")
	require.NoError(t, pub.Close())
}

// TestDupsOKHoldsPUBACKsBack: DUPS_OK acknowledges in batches of
// ack_every, the rest after ack_interval, in the order of the PUBLISHes.
func TestDupsOKHoldsPUBACKsBack(t *testing.T) {
	acks := make(chan []uint16, 4)
	p := newPeer(t, func(c *peerConn) {
		c.accept(false)
		c.suback(1)
		for i := 1; i <= 6; i++ {
			c.publish(1, false, uint16(i), fmt.Sprint(i))
		}
		var batch []uint16
		for len(batch) < 6 {
			pk := c.next()
			if pk.typ != pktPuback {
				t.Errorf("got %s", pktNames[pk.typ])
				return
			}
			a, _ := decodeAck(pk.typ, pk.body)
			batch = append(batch, a.id)
			if len(batch) == 4 {
				acks <- append([]uint16(nil), batch...)
			}
		}
		acks <- batch
		c.next()
	})
	d := peerDriver(t, p)
	s, err := d.Subscriber(context.Background(), driver.SubSpec{Case: peerCase(scenario.Persistent, scenario.AckDupsOK, scenario.NonDurable),
		AckEvery: 4, AckIntervalMs: 300}, func(driver.Delivery) {})
	require.NoError(t, err)
	assert.Equal(t, []uint16{1, 2, 3, 4}, <-acks)
	assert.Equal(t, []uint16{1, 2, 3, 4, 5, 6}, <-acks, "the last two after the interval")
	require.NoError(t, s.Close())
}

// TestLoginRefusedIsNamed: a CONNACK refusing the credentials is
// ErrLoginRefused.
func TestLoginRefusedIsNamed(t *testing.T) {
	p := newPeer(t, func(c *peerConn) {
		c.next()
		c.send([]byte{pktConnack << 4, 2, 0, 5})
	})
	err := Check(context.Background(), p.endpoint(), V311)
	assert.ErrorIs(t, err, ErrLoginRefused)
}

func TestLoginOverAConnection(t *testing.T) {
	p := newPeer(t,
		func(c *peerConn) { c.accept(false); c.next() },
		func(c *peerConn) { c.next(); c.send([]byte{pktConnack << 4, 2, 0, 4}) })
	for _, want := range []error{nil, ErrLoginRefused} {
		nc, err := net.Dial("tcp", p.ln.Addr().String())
		require.NoError(t, err)
		err = Login(nc, "", "u", "p")
		nc.Close()
		if want == nil {
			assert.NoError(t, err)
		} else {
			assert.ErrorIs(t, err, want)
		}
	}
}

// TestQoS0ConfirmsByBarrierWherePingOvertakes: on a broker whose PINGRESP
// overtakes PUBLISHes (Profile.PingOvertakes: Artemis), a QoS 0 publisher
// confirms its sends with a QoS 1 PUBLISH without payload to the case's
// barrier topic every window/4 sends; the PINGRESPs this peer sends at
// once confirm nothing, so the window stays full until a barrier's
// PUBACK, and Flush waits for the PUBACK of a barrier after the last
// send.
func TestQoS0ConfirmsByBarrierWherePingOvertakes(t *testing.T) {
	conns := make(chan *peerConn, 1)
	barriers := make(chan uint16, 16)
	var qos0 atomic.Int64
	c := peerCase(scenario.NonPersistent, scenario.AckAuto, scenario.NonDurable)
	p := newPeer(t, func(pc *peerConn) {
		pc.accept(false)
		conns <- pc
		for {
			pk := pc.next() // answers every PINGREQ at once, as Artemis does
			if pk.typ != pktPublish {
				if pk.typ == 0 || pk.typ == pktDisconnect {
					return
				}
				continue
			}
			m, err := decodePublish(V311, pk.flags, pk.body)
			if !assert.NoError(t, err) {
				return
			}
			if m.qos == 0 {
				qos0.Add(1)
				continue
			}
			assert.EqualValues(t, 1, m.qos)
			assert.Equal(t, barrierTopic(c.Prefix), string(m.topic))
			assert.Empty(t, m.payload)
			barriers <- m.id
		}
	})
	prof := testProfile()
	prof.PingOvertakes = "the peer answers PINGREQ ahead of PUBLISHes"
	d, err := New(prof, p.endpoint())
	require.NoError(t, err)
	assert.Contains(t, d.Mechanism(c.Factors), "a QoS 1 PUBLISH without payload to <root>/b")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	pub, err := d.Publisher(ctx, driver.PubSpec{Case: c, Window: 8})
	require.NoError(t, err)
	pc := <-conns
	for range 8 {
		require.NoError(t, pub.Publish(ctx, driver.Message{Body: []byte("x"), Sel: -1}))
	}
	ids := make([]uint16, 0, 5)
	for range 4 { // after sends 2, 4, 6 and 8
		ids = append(ids, <-barriers)
	}
	ninth := make(chan error, 1)
	go func() { ninth <- pub.Publish(ctx, driver.Message{Body: []byte("x"), Sel: -1}) }()
	select {
	case err := <-ninth:
		t.Fatalf("send 9 went out with 8 unconfirmed (a PINGRESP counted as a confirmation?): %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	pc.send(appendAck(nil, pktPuback, ids[0])) // confirms sends 1..2
	require.NoError(t, <-ninth)
	flushed := make(chan error, 1)
	go func() { flushed <- pub.Flush(ctx) }()
	ids = append(ids, <-barriers) // Flush's, after send 9
	for _, id := range ids[1:4] {
		pc.send(appendAck(nil, pktPuback, id))
	}
	select {
	case err := <-flushed:
		t.Fatalf("Flush returned before the last barrier's PUBACK: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	pc.send(appendAck(nil, pktPuback, ids[4]))
	require.NoError(t, <-flushed)
	assert.EqualValues(t, 9, qos0.Load())
	assert.Len(t, ids, 5)
	require.NoError(t, pub.Close())
}

// sessions lists the broker's answers about the session on each
// reconnection of st ("nil" where none was recorded).
func sessions(st driver.ConnStats) []string {
	var out []string
	for _, o := range st.Outages {
		switch {
		case o.Restored.IsZero():
			out = append(out, "not restored")
		case o.Session == nil:
			out = append(out, "nil")
		default:
			out = append(out, strconv.FormatBool(*o.Session))
		}
	}
	return out
}

// TestQoS2PublisherRecordsSessionPresent: a QoS 2 publisher's
// reconnections record the broker's CONNACK session present, each on its
// outage: a broker that answers 0 after a drop kept no session, and the
// PUBLISH whose PUBREC the drop cut off goes again (DUP) as a new
// message to it; one that answers 1 resumed the session.
func TestQoS2PublisherRecordsSessionPresent(t *testing.T) {
	// completes the QoS 2 exchange of the PUBLISH read next, which must be
	// a DUP resend.
	resent := func(c *peerConn) {
		pk := c.next()
		c.must(assert.EqualValues(t, pktPublish, pk.typ))
		m, err := decodePublish(V311, pk.flags, pk.body)
		c.must(assert.NoError(t, err))
		assert.True(t, m.dup, "the PUBLISH the drop left unanswered goes again, DUP")
		c.send(appendAck(nil, pktPubrec, m.id))
		pk = c.next()
		c.must(assert.EqualValues(t, pktPubrel, pk.typ))
		c.send(appendAck(nil, pktPubcomp, m.id))
	}
	p := newPeer(t,
		func(c *peerConn) {
			c.accept(false)
			assert.False(t, c.clean, "a QoS 2 publisher keeps a session")
			c.next() // the first PUBLISH; dropped before PUBREC
		},
		func(c *peerConn) {
			c.accept(false) // the broker kept no session
			resent(c)
			c.next() // the second PUBLISH; dropped before PUBREC
		},
		func(c *peerConn) {
			c.accept(true) // the broker kept the session
			resent(c)
			c.next()
		})
	pub, ctx := peerPublisher(t, p, scenario.AckExactlyOnce)
	for i := range 2 {
		require.NoError(t, pub.Publish(ctx, driver.Message{Body: []byte("m" + strconv.Itoa(i)), Sel: -1}))
		require.NoError(t, pub.Flush(ctx), "PUBCOMP on the next connection")
	}
	require.NoError(t, pub.Close())
	st := pub.(driver.ConnReporter).ConnStats()
	assert.Equal(t, []string{"false", "true"}, sessions(st), "session present 0, then 1")
	require.NotNil(t, st.FirstSession)
	assert.False(t, *st.FirstSession, "the first connection found no session")
	assert.EqualValues(t, 2, st.Resent)
}

// TestSubscriberRecordsSessionPresent: a durable subscriber's
// reconnections record the broker's CONNACK session present (1: resumed,
// nothing subscribed again; 0: gone, subscribed anew); a clean session's
// answer says nothing and is not recorded (nil, as for protocols without
// one).
func TestSubscriberRecordsSessionPresent(t *testing.T) {
	done := make(chan struct{})
	p := newPeer(t,
		func(c *peerConn) { c.accept(false); c.suback(2) }, // then dropped
		func(c *peerConn) { c.accept(true) },               // resumed, then dropped
		func(c *peerConn) {
			c.accept(false) // gone: the subscriber subscribes again
			c.suback(2)
			close(done)
			c.next()
		})
	d := peerDriver(t, p)
	s, err := d.Subscriber(context.Background(), driver.SubSpec{Case: peerCase(scenario.Persistent, scenario.AckExactlyOnce, scenario.Durable), ClientID: "pslab-peer-c0"},
		func(driver.Delivery) {})
	require.NoError(t, err)
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("the script did not finish")
	}
	require.Eventually(t, func() bool {
		st := s.(driver.ConnReporter).ConnStats()
		return len(st.Outages) == 2 && !st.Outages[1].Restored.IsZero()
	}, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, s.Close())
	st := s.(driver.ConnReporter).ConnStats()
	assert.Equal(t, []string{"true", "false"}, sessions(st))
	require.NotNil(t, st.FirstSession)
	assert.False(t, *st.FirstSession)

	clean := make(chan struct{})
	p = newPeer(t,
		func(c *peerConn) { c.accept(false); c.suback(0) },
		func(c *peerConn) {
			c.accept(false)
			assert.True(t, c.clean)
			c.suback(0)
			close(clean)
			c.next()
		})
	d = peerDriver(t, p)
	s, err = d.Subscriber(context.Background(), driver.SubSpec{Case: peerCase(scenario.NonPersistent, scenario.AckAuto, scenario.NonDurable)},
		func(driver.Delivery) {})
	require.NoError(t, err)
	<-clean
	require.Eventually(t, func() bool {
		st := s.(driver.ConnReporter).ConnStats()
		return len(st.Outages) == 1 && !st.Outages[0].Restored.IsZero()
	}, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, s.Close())
	st = s.(driver.ConnReporter).ConnStats()
	assert.Equal(t, []string{"nil"}, sessions(st), "a clean session asked for none")
	assert.Nil(t, st.FirstSession)
}
