// Package nats is NATS (core and JetStream) in pslab: the embedded
// nats-server run as a child process (server.go, child.go), the driver
// over nats.go (driver.go, client.go, pub.go, reconnect.go), what the
// server holds for a case (held.go, connz.go), the filter mapping
// (filter.go), the access probe and login (probe.go), the clean-up of
// stores (leftovers.go), and the descriptor that registers it all with
// the broker registry (this file).
package nats

import (
	"context"
	"fmt"
	"io"

	"github.com/nats-io/nats-server/v2/server"

	"pslab/internal/broker"
	"pslab/internal/brokers"
	"pslab/internal/driver"
	"pslab/internal/record"
)

// Name is the broker's name in scenarios, flags and records.
const Name = "nats"

func init() { brokers.Register(Descriptor()) }

// Descriptor describes NATS to the registry.
func Descriptor() brokers.Descriptor {
	return brokers.Descriptor{
		Name:    Name,
		Summary: "NATS core and JetStream (embedded nats-server)",
		Version: server.VERSION + " (embedded)",
		NewBroker: func(context.Context, string, io.Writer) (broker.Broker, error) {
			return NewServer(ServerConfig{}), nil
		},
		NewDriver: func(ctx context.Context, ep driver.Endpoint) (driver.Driver, error) {
			return NewDriver(ctx, ep)
		},
		Supports:     (&Driver{}).Supports,
		Capabilities: brokers.Capabilities{FilterRefusals: FilterRefusals},
		Schemes:      []string{"nats"},
		Probe:        openAccess,
		Install: func(_ context.Context, out, _ io.Writer) error {
			fmt.Fprintln(out, "nats: embedded in pslab, nothing to install")
			return nil
		},
		Start: start,
		Stop:  stop,
		Doctor: func(context.Context) []brokers.Check {
			return []brokers.Check{{Status: "ok", What: Name, Detail: "embedded nats-server, nothing to install"}}
		},
		Login:     login,
		WireBytes: wireBytes,
		MaxConns:  MaxConn,
		Leftovers: leftovers,
		// docker-compose.yml: the nats service owns the namespace that the
		// artemis service joins; docker/nats/nats.conf opens the
		// monitoring port.
		Container: &brokers.Container{Name: "pslab-nats", Scheme: "nats", Port: 4222, Query: "monitor=8222",
			UserVar: "NATS_USER", PassVar: "NATS_PASSWORD", OwnsNamespace: true},
		Caveats: []record.Caveat{{Broker: Name, Mechanism: selectorAsSubject,
			Text: "NATS has no message selectors: on NATS a \"selector\" is subject routing (the publisher puts the selector value in the subject, the subscriber subscribes to the subjects of its values), so the broker has no matching step to pay for. The selector claims measure routing there, not filtering."}},
	}
}

// StatePath is where `pslab broker start nats` keeps its state.
func StatePath() string { return broker.DetachedPath(Name) }

// start runs a detached nats-server on 127.0.0.1:4222, its monitoring on
// 8222.
func start(_ context.Context, out, _ io.Writer) error {
	if err := broker.CheckNoDetached(Name); err != nil {
		return err
	}
	b := NewServer(ServerConfig{Port: 4222, MonitorPort: 8222, Detached: true})
	st, ep, err := broker.StartDetached(Name, b, func(ep driver.Endpoint) broker.Detached {
		return broker.Detached{Name: Name, PID: b.PID(), URL: ep.URL, User: ep.User, Password: ep.Password, Store: b.Settings()["jetstream_store"]}
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s running, pid %d\nurl:      %s\nuser:     %s\npassword: %s\nmonitor:  %s (give --url nats=nats://USER:PASSWORD@127.0.0.1:4222?monitor=8222)\n(state in %s)\n",
		Name, st.PID, st.URL, st.User, st.Password, ep.MonitorURL, StatePath())
	return nil
}

// stop stops what start left running and removes its store and state.
func stop(ctx context.Context, out io.Writer) error { return broker.StopDetachedBroker(ctx, Name, out) }
