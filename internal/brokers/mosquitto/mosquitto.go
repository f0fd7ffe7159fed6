// Package mosquitto registers Eclipse Mosquitto, the reference MQTT
// broker, driven over MQTT 3.1.1 by pslab's MQTT client
// (internal/brokers/mqtt). pslab installs Debian's package on first use
// and runs the broker as its own child process: on the broker CPU set,
// inside the lab's broker namespace (or on loopback), with a generated
// password, its persistence set per case.
package mosquitto

import (
	"context"
	"fmt"
	"io"

	"pslab/internal/broker"
	"pslab/internal/brokers"
	"pslab/internal/driver"
	"pslab/internal/mqtt"
	"pslab/internal/record"
	"pslab/internal/scenario"
)

// Name is the broker's name in scenarios, flags and records (MQTT 3.1.1);
// NameV5 is the same broker driven over MQTT 5.
const (
	Name   = "mosquitto"
	NameV5 = "mosquitto-v5"
)

func init() {
	brokers.Register(Descriptor(mqtt.V311))
	brokers.Register(Descriptor(mqtt.V5))
}

// Descriptor describes Mosquitto driven over MQTT version v to the
// registry.
func Descriptor(v mqtt.Version) brokers.Descriptor {
	name := Name
	if v == mqtt.V5 {
		name = NameV5
	}
	return brokers.Descriptor{
		Name:      name,
		Summary:   fmt.Sprintf("Eclipse Mosquitto %s over %s (Debian's package, installed on first use)", PinnedVersion, v),
		Version:   PinnedVersion + " (Debian's package)",
		NewBroker: newBroker,
		NewDriver: func(_ context.Context, ep driver.Endpoint) (driver.Driver, error) {
			m := running.Lookup(ep.URL)
			version := ""
			if m != nil {
				version, _ = BinaryVersion()
			}
			return mqtt.New(profile(v, name, version, m, ep), ep)
		},
		Supports:     func(f scenario.Factors) error { return profile(v, name, "", nil, driver.Endpoint{}).Supports(f) },
		Capabilities: mqtt.Capabilities(v),
		Schemes:      []string{"mqtt"},
		Probe:        mqtt.Probe,
		Install:      Install,
		Start:        start,
		Stop:         stop,
		OwnProcess:   ownProcess,
		Doctor:       doctorOf(v),
		Login:        mqtt.Login,
		WireBytes:    mqtt.WireBytes(v),
		Leftovers:    func(o brokers.LeftoverOptions) ([]string, error) { return Leftovers(o.CacheDir) },
		// docker-compose.yml: the mosquitto service, in the nats service's
		// namespace, MQTT on 1883, password file from MOSQUITTO_*.
		Container: &brokers.Container{Name: "pslab-mosquitto", Scheme: "mqtt", Port: 1883,
			UserVar: "MOSQUITTO_USER", PassVar: "MOSQUITTO_PASSWORD"},
		Caveats: []record.Caveat{{Broker: name, Mechanism: mqtt.SelectorAsTopic, Text: mqtt.SelectorCaveat}},
	}
}

// doctorOf is the doctor of Mosquitto over v: one broker, checked once.
func doctorOf(v mqtt.Version) func(context.Context) []brokers.Check {
	if v == mqtt.V311 {
		return doctor
	}
	return func(context.Context) []brokers.Check {
		return []brokers.Check{{Status: "info", What: NameV5, Detail: "the same Mosquitto as " + Name + ", over MQTT 5 (see " + Name + ")"}}
	}
}

// newBroker makes the Mosquitto of a run, installing it on first use (the
// lab has removed what killed runs left: Descriptor.Leftovers).
func newBroker(ctx context.Context, _ string, log io.Writer) (broker.Broker, error) {
	if _, err := Binary(); err != nil {
		fmt.Fprintln(log, "installing mosquitto (first use) ...")
		if err := Install(ctx, log, log); err != nil {
			return nil, err
		}
	}
	return New(Config{}), nil
}

// StatePath is where `pslab broker start mosquitto` keeps its state.
func StatePath() string { return broker.DetachedPath(Name) }

// start runs a Mosquitto on 127.0.0.1:1883 and leaves it running.
func start(ctx context.Context, out, log io.Writer) error {
	if err := broker.CheckNoDetached(Name); err != nil {
		return err
	}
	if _, err := Binary(); err != nil {
		if err := Install(ctx, out, log); err != nil {
			return err
		}
	}
	m := New(Config{Port: 1883, Detached: true})
	st, _, err := broker.StartDetached(Name, m, func(ep driver.Endpoint) broker.Detached {
		return broker.Detached{Name: Name, PID: m.PID(), URL: ep.URL, User: ep.User, Password: ep.Password, Dir: m.Dir()}
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s running, pid %d\nurl:      %s\nuser:     %s\npassword: %s\n(give --url %s=mqtt://USER:PASSWORD@127.0.0.1:1883; state in %s)\n",
		Name, st.PID, st.URL, st.User, st.Password, Name, StatePath())
	return nil
}

// stop stops what start left running and removes its run directory.
func stop(ctx context.Context, out io.Writer) error { return broker.StopDetachedBroker(ctx, Name, out) }
