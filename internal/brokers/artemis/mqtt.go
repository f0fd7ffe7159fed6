package artemis

import (
	"context"
	"io"
	"net"
	"strconv"
	"strings"

	"pslab/internal/broker"
	"pslab/internal/brokers"
	"pslab/internal/driver"
	"pslab/internal/mqtt"
	"pslab/internal/record"
	"pslab/internal/scenario"
)

// Artemis over its MQTT acceptor (artemis-mqtt): the same instance, its
// MQTT acceptor on a port of its own, driven by pslab's MQTT client
// (internal/mqtt) over MQTT 3.1.1. Management (what it holds, the purge)
// goes over the STOMP acceptor, as for artemis.

// NameMQTT is the broker's name in scenarios, flags and records.
const NameMQTT = "artemis-mqtt"

// MQTTPort is the MQTT acceptor's port in the lab's broker namespace.
const MQTTPort = 1883

func init() { brokers.Register(MQTTDescriptor()) }

// MQTTDescriptor describes Artemis over MQTT to the registry.
func MQTTDescriptor() brokers.Descriptor {
	return brokers.Descriptor{
		Name:    NameMQTT,
		Summary: "ActiveMQ Artemis " + DefaultArtemisVersion + " over its MQTT acceptor (MQTT 3.1.1; the artemis instance)",
		Version: DefaultArtemisVersion,
		NewBroker: func(ctx context.Context, labName string, log io.Writer) (broker.Broker, error) {
			b, err := newBroker(ctx, labName, log)
			if err != nil {
				return nil, err
			}
			return &mqttArtemis{Artemis: b.(*Artemis)}, nil
		},
		NewDriver: func(_ context.Context, ep driver.Endpoint) (driver.Driver, error) {
			return mqtt.New(mqttProfile(mqttRunning.Lookup(ep.URL), ep), ep)
		},
		Supports:     func(f scenario.Factors) error { return mqttProfile(nil, driver.Endpoint{}).Supports(f) },
		Capabilities: mqtt.Capabilities(mqtt.V311),
		Schemes:      []string{"mqtt"},
		Probe:        mqtt.Probe,
		Install:      install,
		Doctor: func(context.Context) []brokers.Check {
			return []brokers.Check{{Status: "info", What: NameMQTT, Detail: "the artemis instance's MQTT acceptor (see artemis)"}}
		},
		Login:     mqtt.Login,
		WireBytes: mqtt.WireBytes(mqtt.V311),
		Caveats:   []record.Caveat{{Broker: NameMQTT, Mechanism: mqtt.SelectorAsTopic, Text: mqtt.SelectorCaveat}},
	}
}

// mqttRunning are the artemis-mqtt brokers this process started, by their
// MQTT endpoint URL.
var mqttRunning mqtt.Running[*mqttArtemis]

// mqttArtemis is the Artemis instance with its MQTT acceptor listening, as
// the lab sees it: its endpoint is the acceptor's.
type mqttArtemis struct {
	*Artemis
	stomp driver.Endpoint // for management
	url   string
}

// Name implements broker.Broker.
func (m *mqttArtemis) Name() string { return NameMQTT }

// Settings implements broker.Broker.
func (m *mqttArtemis) Settings() map[string]string {
	s := m.Artemis.Settings()
	s["protocol"] = "MQTT 3.1.1 (management over STOMP)"
	return s
}

// Start implements broker.Broker: the instance with its MQTT acceptor on
// MQTTPort (a free port on loopback).
func (m *mqttArtemis) Start(ctx context.Context, h broker.Host) (driver.Endpoint, error) {
	port := MQTTPort
	if _, loop := h.(broker.LoopbackHost); loop {
		p, err := broker.FreePort()
		if err != nil {
			return driver.Endpoint{}, err
		}
		port = p
	}
	m.Artemis.mu.Lock()
	m.Artemis.cfg.MQTTPort = port
	m.Artemis.mu.Unlock()
	ep, err := m.Artemis.Start(ctx, h)
	if err != nil {
		return ep, err
	}
	m.stomp = ep
	mep := ep
	mep.URL = "mqtt://" + net.JoinHostPort(h.ListenIP(), strconv.Itoa(port))
	m.url = mep.URL
	mqttRunning.Add(mep.URL, m)
	return mep, nil
}

// Stop implements broker.Broker.
func (m *mqttArtemis) Stop(ctx context.Context) error {
	mqttRunning.Remove(m.url)
	return m.Artemis.Stop(ctx)
}

// mqttProfile is artemis-mqtt's mqtt.Profile; a is the instance pslab
// started (nil: one reached by URL, which pslab cannot manage).
func mqttProfile(a *mqttArtemis, ep driver.Endpoint) mqtt.Profile {
	p := mqtt.Profile{
		Name: NameMQTT, Product: "ActiveMQ Artemis " + DefaultArtemisVersion + " MQTT acceptor", Version: mqtt.V311,
		Persistence:   "Artemis's journal (a QoS 1/2 message is a durable message, journaled where a subscription queue holds it)",
		QoS0WhileAway: "kept in the session's durable subscription queue, as a non-durable message (memory only)",
		SurvivesKill:  true,
		// MQTTProtocolHandler.channelRead (2.44.0) answers PINGREQ on the
		// network thread and queues every other packet on the
		// connection's actor: a PINGRESP overtakes the PUBLISHes queued
		// before it. With PINGREQ as the QoS 0 flow control, set 1 row 19
		// queued the publisher's PUBLISHes unbounded on the heap until the
		// JVM ran out of it (TestMQTTQoS0FlowControlWaitsForRouting).
		PingOvertakes: "Artemis answers a PINGREQ at once, ahead of the PUBLISHes it has queued",
		Unordered: "measured: Artemis delivers QoS 1/2 messages out of publish order, most to a persistent session " +
			"(TestMQTTEveryCombination, 1/1/1 at 1,000 msg/s, 3 runs: 25-260 of 1,300-2,200 deliveries reordered on a durable subscription, " +
			"0-1 on a non-durable one; and QoS 0 now and then: 2 deliveries to a clean session in one CI run of that test); pslab counts them as reordered",
	}
	if a != nil {
		d := &stompDriver{ep: a.stomp}
		p.Admin = &mqttAdmin{d: d}
	}
	return p
}

// mqttAdmin is artemis-mqtt's part of a case (mqtt.Admin), over the STOMP
// acceptor's management.
type mqttAdmin struct{ d *stompDriver }

// Prepare implements mqtt.Admin: Artemis makes a topic's address and a
// subscription's queue on first use.
func (a *mqttAdmin) Prepare(context.Context, driver.CaseSpec) error { return nil }

// Held implements mqtt.Admin: the message count of every queue bound to
// the case's topics (Artemis's addresses are the topics with '/' as '.';
// a subscription's queue is <client id>.<address>), as for artemis.
func (a *mqttAdmin) Held(ctx context.Context, c driver.CaseSpec, _ mqtt.CaseState) (driver.Held, error) {
	var h driver.Held
	err := a.d.withAdmin(ctx, func(ad *stompAdmin) error {
		var err error
		h, err = ad.held(ctx, mqtt.Root(c.Prefix)+".")
		return err
	})
	h.Source = strings.Replace(h.Source, "the case's addresses", "the case's topics' addresses", 1)
	return h, err
}

// Purge implements mqtt.Admin: the driver ends the case's sessions (their
// queues go with them); what is left on the case's topics' addresses is
// deleted. Before a case (prefix "pslab-") there is no topic to name:
// Artemis deletes an address it made once no queue is bound to it.
func (a *mqttAdmin) Purge(ctx context.Context, prefix string) error {
	if !strings.HasPrefix(prefix, "pslab-") || prefix == "pslab-" {
		return nil
	}
	return a.d.withAdmin(ctx, func(ad *stompAdmin) error {
		return ad.purge(ctx, mqtt.Root(prefix)+".", purgeBound(a.d.ep))
	})
}

// Close implements mqtt.Admin.
func (a *mqttAdmin) Close() error { return a.d.Close() }
