package mqtt

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"pslab/internal/driver"
)

// Watcher keeps a subscription to the topics a broker publishes its own
// state on (Mosquitto's $SYS) open for as long as it runs: a connection
// from beside the broker (ep's admin dialer), subscribed at QoS 0, that
// reconnects (driver.Link) when it fails (the broker restarted, the
// connection broke). Every PUBLISH and every PINGRESP of a Barrier reaches
// on, in the order the broker sent them, on the connection's reader.
type Watcher struct{ link *client }

// WatchEvent is what a Watcher hands on.
type WatchEvent struct {
	// Conn numbers the connection the event came on: 1, then one more at
	// each reconnection. An event with New opens each connection, before
	// anything arrives on it: what the broker published before is no
	// longer known (it may have restarted).
	Conn uint64
	New  bool
	// Topic, Payload and Retained are a PUBLISH (Retained: a retained
	// copy sent at the subscription, published before it); Topic is ""
	// for the answer to a Barrier.
	Topic    string
	Payload  []byte
	Retained bool
	// Mark is the answered Barrier's (0 for a PUBLISH).
	Mark uint64
}

// NewWatcher connects to the broker at ep, subscribes to filters and
// hands every event to on (called on one goroutine at a time, in order).
// The first connection's errors are returned.
func NewWatcher(ctx context.Context, ep driver.Endpoint, v Version, filters []string, on func(WatchEvent)) (*Watcher, error) {
	addr, err := Addr(ep.URL)
	if err != nil {
		return nil, err
	}
	if ep.AdminDialer != nil {
		ep.Dialer = ep.AdminDialer
	}
	w := &Watcher{}
	var conns atomic.Uint64
	o := connectOpts{v: v, clean: true, keepAlive: keepAliveFor(ep), stall: stallFor(ep)}
	dialOne := func(ctx context.Context) (*conn, error) {
		n := conns.Add(1)
		o.clientID = "pslab-admin-" + randomID()
		onPkt := func(_ *conn, p packet) error {
			if p.typ != pktPublish {
				return nil
			}
			m, err := decodePublish(v, p.flags, p.body)
			if err != nil {
				return err
			}
			on(WatchEvent{Conn: n, Topic: string(m.topic), Payload: append([]byte(nil), m.payload...), Retained: p.flags&0x01 != 0})
			return nil
		}
		onPing := func(mark uint64) {
			if mark != 0 { // 0: the keep-alive's own
				on(WatchEvent{Conn: n, Mark: mark})
			}
		}
		on(WatchEvent{Conn: n, New: true})
		c, err := dial(ctx, ep, addr, o, onPkt, onPing)
		if err != nil {
			return nil, err
		}
		pkt, err := subscribePacket(v, 1, filters, 0)
		if err == nil {
			_, err = c.request(ctx, pkt, 1)
		}
		if err != nil {
			c.Abort()
			return nil, fmt.Errorf("SUBSCRIBE %v: %w", filters, err)
		}
		return c, nil
	}
	if w.link, err = driver.NewLink(ctx, dialOne, 10*time.Second+o.stall, errClientClosed); err != nil {
		return nil, err
	}
	return w, nil
}

// Barrier sends a PINGREQ marked mark (not 0; the caller's to choose) on
// the current connection, waiting while it is down: the WatchEvent with
// that mark comes after every PUBLISH the broker sent before it handled
// the PINGREQ, so what arrives after it was published after Barrier was
// called. The mark never comes when the connection fails first (a new
// one opens with New).
func (w *Watcher) Barrier(ctx context.Context, mark uint64) error {
	if mark == 0 {
		return errors.New("mqtt: barrier mark 0 is the keep-alive's")
	}
	c, err := w.link.Conn(ctx)
	if err != nil {
		return err
	}
	return c.ping(mark)
}

// Close ends the subscription.
func (w *Watcher) Close() error { return w.link.Close(5*time.Second, nil) }

// Probe tells over a fresh connection c whether an MQTT broker lets a
// client in without credentials (a broker.AccessProbe): a CONNECT (3.1.1,
// clean session, no user name) answered with CONNACK code 0 is open.
func Probe(c net.Conn, _ string) (bool, string, error) {
	pkt, err := connectPacket(V311, "pslab-probe-"+randomID(), "", "", true, 10, 0, 0)
	if err != nil {
		return false, "", err
	}
	if _, err := c.Write(pkt); err != nil {
		return false, "", fmt.Errorf("MQTT CONNECT: %w", err)
	}
	pr := &packetReader{br: bufio.NewReader(c)}
	p, err := pr.next()
	if err != nil {
		return false, "", fmt.Errorf("MQTT CONNECT without credentials: no CONNACK: %w", err)
	}
	if p.typ != pktConnack {
		return false, "", fmt.Errorf("not an MQTT broker: %s instead of CONNACK", pktNames[p.typ])
	}
	ca, err := decodeConnack(V311, p.body)
	if err != nil {
		return false, "", err
	}
	if ca.code == 0 {
		_, _ = c.Write(disconnectPacket(V311))
		return true, "CONNECT without user name accepted (CONNACK 0)", nil
	}
	return false, fmt.Sprintf("CONNECT without user name refused: %s (CONNACK %d)", ca.reason, ca.code), nil
}

// Login logs in over a fresh connection c with user and pass (MQTT 3.1.1
// CONNECT, clean session) and disconnects: a CONNACK refusing them is
// ErrLoginRefused. The check of an external broker's URL before a run.
func Login(c net.Conn, _, user, pass string) error {
	pkt, err := connectPacket(V311, "pslab-login-"+randomID(), user, pass, true, 10, 0, 0)
	if err != nil {
		return err
	}
	if _, err := c.Write(pkt); err != nil {
		return fmt.Errorf("MQTT CONNECT: %w", err)
	}
	pr := &packetReader{br: bufio.NewReader(c)}
	p, err := pr.next()
	if err != nil {
		return fmt.Errorf("no answer to CONNECT: %w", err)
	}
	if p.typ != pktConnack {
		return fmt.Errorf("not an MQTT broker: %s instead of CONNACK", pktNames[p.typ])
	}
	ca, err := decodeConnack(V311, p.body)
	if err != nil {
		return err
	}
	switch {
	case ca.code == 0:
		_, _ = c.Write(disconnectPacket(V311))
		return nil
	case refusedLogin(ca.code):
		return fmt.Errorf("refused: %w (%s)", ErrLoginRefused, ca.reason)
	}
	return fmt.Errorf("refused: %s (CONNACK %d)", ca.reason, ca.code)
}
