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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

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

// state is what `pslab broker start nats` leaves for `stop` (0600: it
// holds the generated credentials).
type state struct {
	Name     string `json:"name"`
	PID      int    `json:"pid"`
	URL      string `json:"url"`
	User     string `json:"user"`
	Password string `json:"password"`
	Store    string `json:"store,omitempty"`
}

// StatePath is where `pslab broker start nats` keeps its state.
func StatePath() string { return filepath.Join(broker.CacheDir(), Name+".state.json") }

func readState() (state, error) {
	var st state
	data, err := os.ReadFile(StatePath())
	if err != nil {
		return st, err
	}
	return st, json.Unmarshal(data, &st)
}

// start runs a detached nats-server on 127.0.0.1:4222, its monitoring on
// 8222.
func start(_ context.Context, out, _ io.Writer) error {
	if st, err := readState(); err == nil && broker.ProcessAlive(st.PID) {
		return fmt.Errorf("%s is already running (pid %d, %s); stop it first with `pslab broker stop %s`", Name, st.PID, st.URL, Name)
	}
	b := NewServer(ServerConfig{Port: 4222, MonitorPort: 8222, Detached: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ep, err := b.Start(ctx, broker.LoopbackHost{})
	if err != nil {
		return err
	}
	st := state{Name: Name, PID: b.PID(), URL: ep.URL, User: ep.User, Password: ep.Password, Store: b.Settings()["jetstream_store"]}
	data, _ := json.MarshalIndent(st, "", "  ")
	if err := os.MkdirAll(broker.CacheDir(), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(StatePath(), data, 0o600); err != nil {
		_ = b.Stop(context.Background())
		return err
	}
	fmt.Fprintf(out, "%s running, pid %d\nurl:      %s\nuser:     %s\npassword: %s\nmonitor:  %s (give --url nats=nats://USER:PASSWORD@127.0.0.1:4222?monitor=8222)\n(state in %s)\n",
		Name, st.PID, st.URL, st.User, st.Password, ep.MonitorURL, StatePath())
	return nil
}

// stop stops what start left running and removes its store and state.
func stop(ctx context.Context, out io.Writer) error {
	st, err := readState()
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no %s started by `pslab broker start` (no %s)", Name, StatePath())
	}
	if err != nil {
		return err
	}
	if broker.ProcessAlive(st.PID) {
		if err := broker.StopDetached(ctx, st.PID, 10*time.Second); err != nil {
			return err
		}
	}
	if st.Store != "" {
		os.RemoveAll(st.Store)
	}
	if err := os.Remove(StatePath()); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s stopped (pid %d)\n", Name, st.PID)
	return nil
}
