// Package fake is an in-memory broker and driver for hermetic tests of the
// load engine and the lab: no root, no network, no broker process, a case
// in seconds. It models topics, non-durable and durable subscriptions (a
// durable one queues what arrives while its subscriber is away),
// selectors and filters (by the message's value), lazy acknowledgement
// (DUPS_OK and CLIENT redeliver what was not acknowledged when the
// subscriber leaves), and deterministic knobs that drop, duplicate and
// reorder messages, slow subscribers down and refuse publishes.
//
// It is registered as the broker "fake" (Simulated) so that `pslab run
// --brokers fake` smoke-tests a set-up; it runs only when named (the
// scenario default is nats), and its records say it measured nothing.
package fake

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"pslab/internal/broker"
	"pslab/internal/brokers"
	"pslab/internal/driver"
)

// Name is the fake broker's name in scenarios, flags and records.
const Name = "fake"

func init() { brokers.Register(Descriptor(Knobs{})) }

// Descriptor describes a fake broker with knobs k (tests register one in
// their own brokers.Registry).
func Descriptor(k Knobs) brokers.Descriptor {
	return brokers.Descriptor{
		Name:      Name,
		Summary:   "in-memory fake broker for hermetic tests (measures nothing)",
		Simulated: true,
		NewBroker: func(context.Context, string, io.Writer) (broker.Broker, error) { return New(k), nil },
		NewDriver: func(_ context.Context, ep driver.Endpoint) (driver.Driver, error) {
			srv, ok := servers.Load(ep.URL)
			if !ok {
				return nil, fmt.Errorf("fake: no running fake broker at %s", ep.URL)
			}
			return &Driver{srv: srv.(*server)}, nil
		},
		Supports: supports,
		Install: func(_ context.Context, out, _ io.Writer) error {
			fmt.Fprintln(out, "fake: in memory inside pslab, nothing to install")
			return nil
		},
		Doctor: func(context.Context) []brokers.Check {
			return []brokers.Check{{Status: "info", What: Name, Detail: "in-memory broker for hermetic tests, nothing to install (never a measurement)"}}
		},
	}
}

// servers are the started fake brokers by URL, for NewDriver.
var (
	servers sync.Map
	started atomic.Int64
)

// Broker is a fake broker as the lab sees it (broker.Broker).
type Broker struct {
	srv *server
	url string
}

// New makes a fake broker with knobs k.
func New(k Knobs) *Broker { return &Broker{srv: newServer(k)} }

// Stats says what the broker did so far.
func (b *Broker) Stats() Stats { return (&Driver{srv: b.srv}).Stats() }

// Name implements broker.Broker.
func (b *Broker) Name() string { return Name }

// Start implements broker.Broker: the broker is reachable (by NewDriver,
// in this process) at a fake:// URL; h is not used.
func (b *Broker) Start(context.Context, broker.Host) (driver.Endpoint, error) {
	b.url = "fake://" + strconv.FormatInt(started.Add(1), 10)
	servers.Store(b.url, b.srv)
	return driver.Endpoint{URL: b.url}, nil
}

// Stop implements broker.Broker.
func (b *Broker) Stop(context.Context) error {
	servers.Delete(b.url)
	return nil
}

// PID implements broker.Broker: no process of its own.
func (b *Broker) PID() int { return 0 }

// Version implements broker.Broker.
func (b *Broker) Version() string { return "fake in-memory broker (pslab)" }

// Settings implements broker.Broker: the knobs.
func (b *Broker) Settings() map[string]string {
	k := b.srv.knobs
	return map[string]string{
		"drop_every": strconv.Itoa(k.DropEvery), "duplicate_every": strconv.Itoa(k.DuplicateEvery),
		"reorder_every": strconv.Itoa(k.ReorderEvery), "slow_subscribers": strconv.Itoa(k.SlowSubscribers),
		"slow_delay": k.SlowDelay.String(), "fail_publish_after": strconv.Itoa(k.FailPublishAfter),
		"max_queue": strconv.Itoa(k.MaxQueue), "service_rate": strconv.FormatFloat(k.ServiceRate, 'g', -1, 64),
	}
}

// EffectiveConfig implements broker.Configured: the knobs.
func (b *Broker) EffectiveConfig() (map[string]string, map[string][]byte, error) {
	return b.Settings(), nil, nil
}
