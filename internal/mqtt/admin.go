package mqtt

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"pslab/internal/driver"
)

// Watch connects to the broker at ep from beside it (ep's admin dialer),
// subscribes to filters at QoS 0 and returns the last payload of each
// topic, and how many messages arrived in all. Retained messages come at
// once; with fresh set, Watch returns once a message on that topic has
// arrived that is not a retained copy (the broker published it since)
// and a moment for those published with it, or fails after wait; without,
// it returns after wait. It is the administration side of brokers that
// publish their state as topics (Mosquitto's $SYS).
func Watch(ctx context.Context, ep driver.Endpoint, v Version, filters []string, fresh string, wait time.Duration) (map[string]string, int, error) {
	addr, err := Addr(ep.URL)
	if err != nil {
		return nil, 0, err
	}
	if ep.AdminDialer != nil {
		ep.Dialer = ep.AdminDialer
	}
	var mu sync.Mutex
	last := map[string]string{}
	n := 0
	live := make(chan struct{})
	onPkt := func(_ *conn, p packet) error {
		if p.typ != pktPublish {
			return nil
		}
		m, err := decodePublish(v, p.flags, p.body)
		if err != nil {
			return err
		}
		mu.Lock()
		last[string(m.topic)] = string(m.payload)
		n++
		if fresh != "" && string(m.topic) == fresh && p.flags&0x01 == 0 && live != nil {
			close(live)
			live = nil
		}
		mu.Unlock()
		return nil
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := dial(dctx, ep, addr, connectOpts{v: v, clientID: "pslab-admin-" + randomID(), clean: true}, onPkt, nil)
	if err != nil {
		return nil, 0, err
	}
	defer c.CloseBy(time.Now().Add(5 * time.Second))
	pkt, err := subscribePacket(v, 1, filters, 0)
	if err != nil {
		return nil, 0, err
	}
	if _, err := c.request(dctx, pkt, 1); err != nil {
		return nil, 0, fmt.Errorf("SUBSCRIBE %v: %w", filters, err)
	}
	mu.Lock()
	ch := live
	mu.Unlock()
	if fresh == "" {
		ch = nil
	}
	select {
	case <-ch:
		time.Sleep(100 * time.Millisecond) // the rest of that update
	case <-time.After(wait):
		if fresh != "" {
			return nil, 0, fmt.Errorf("no update of %s within %s", fresh, wait)
		}
	case <-c.done:
		return nil, 0, c.Failure()
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
	mu.Lock()
	defer mu.Unlock()
	out := make(map[string]string, len(last))
	for k, v := range last {
		out[k] = v
	}
	return out, n, nil
}

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
