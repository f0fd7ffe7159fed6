package nats

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"pslab/internal/driver"
)

// Held implements HeldReporter. Core NATS keeps no backlog, but what the
// server queued for a subscriber connection and its client has not parsed
// yet is on its way (the server's monitoring endpoint against the client's
// count, coreHeld); a
// JetStream case holds, per consumer of its stream, NumPending (not yet
// delivered) plus NumAckPending (delivered, not yet acknowledged).
func (d *Driver) Held(ctx context.Context, c driver.CaseSpec) (driver.Held, error) {
	if usesCore(c.Factors) {
		if d.ep.MonitorURL == "" {
			return driver.Held{Source: "core NATS keeps no backlog; the server's output buffers are not counted (no monitoring endpoint)"}, nil
		}
		return coreHeld(ctx, d.ep, c, d.core.parsed)
	}
	h := driver.Held{Source: "JetStream consumers: num_pending + num_ack_pending"}
	st, err := d.js.Stream(ctx, streamName(c.Prefix))
	if err != nil {
		return h, fmt.Errorf("stream %s: %w", c.Prefix, err)
	}
	consumers := st.ListConsumers(ctx)
	for ci := range consumers.Info() {
		if ci.Config.Durable == "" && !d.live.has(ci.Name) {
			// An ephemeral consumer whose subscriber went away (a
			// disconnect fault): a non-durable subscription ends with its
			// subscriber, so what the consumer still counts until
			// InactiveThreshold removes it will never be delivered.
			continue
		}
		h.Backlog += int64(ci.NumPending) + int64(ci.NumAckPending)
		h.Delivering += int64(ci.NumAckPending)
	}
	if err := consumers.Err(); err != nil && !errors.Is(err, jetstream.ErrEndOfData) {
		return h, fmt.Errorf("list consumers of %s: %w", c.Prefix, err)
	}
	return h, nil
}

// liveConsumers is the set of JetStream consumer names open subscribers
// consume.
type liveConsumers struct {
	mu    sync.Mutex
	names map[string]bool
}

// swap replaces old (if not "") by new (if not "") in the set.
func (l *liveConsumers) swap(old, new string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.names == nil {
		l.names = map[string]bool{}
	}
	delete(l.names, old)
	if new != "" {
		l.names[new] = true
	}
}

func (l *liveConsumers) has(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.names[name]
}

// ClientHeld implements ClientHeldReporter for core subscriptions: the
// library's pending messages and those it dropped as a slow consumer.
func (s *natsSubscriber) ClientHeld() driver.ClientHeld {
	var h driver.ClientHeld
	for _, ns := range s.subs {
		if n, _, err := ns.Pending(); err == nil {
			h.Pending += int64(n)
		}
		if n, err := ns.Dropped(); err == nil {
			h.Dropped += int64(n)
		}
	}
	return h
}

// coreSubscribers are a driver's open core subscribers by connection name.
type coreSubscribers struct {
	mu     sync.Mutex
	byName map[string]*natsSubscriber
}

func (c *coreSubscribers) add(s *natsSubscriber) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byName == nil {
		c.byName = map[string]*natsSubscriber{}
	}
	c.byName[s.name] = s
}

// remove forgets s (not a subscriber of the same name that replaced it).
func (c *coreSubscribers) remove(s *natsSubscriber) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byName[s.name] == s {
		delete(c.byName, s.name)
	}
}

// parsed is how many messages the open subscriber of that connection name
// parsed on its current connection; false if there is none.
func (c *coreSubscribers) parsed(name string) (uint64, bool) {
	c.mu.Lock()
	s := c.byName[name]
	c.mu.Unlock()
	if s == nil {
		return 0, false
	}
	return s.watch.parsedHere(s.nc), true
}
