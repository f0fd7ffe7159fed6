package nats

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"pslab/internal/broker"
	"pslab/internal/brokers"
	"pslab/internal/driver"
	"pslab/internal/mqtt"
	"pslab/internal/record"
	"pslab/internal/scenario"
)

// NATS over its MQTT listener (nats-mqtt): the same embedded nats-server
// child with JetStream on and server_name set, which the listener needs
// (it keeps MQTT sessions and QoS 1/2 messages in JetStream streams),
// driven by pslab's MQTT client (internal/mqtt) over MQTT 3.1.1, the only
// version nats-server speaks.

// NameMQTT is the broker's name in scenarios, flags and records.
const NameMQTT = "nats-mqtt"

// MQTTPort is the MQTT listener's port in the lab's broker namespace.
const MQTTPort = 1883

// mqttAckWait is how long nats-server waits for a PUBACK (or PUBREC,
// PUBCOMP) before it sends a QoS 1/2 delivery again within the session
// (MQTT itself resends only when a session resumes; the server's default
// is 30 s): TCP's longest back-off, as the server's write deadline, so
// that an acknowledgement held up over the 1 Mbit/s link does not bring
// the delivery again.
const mqttAckWait = WriteDeadline

// mqttMaxAckPending is how many QoS 1/2 deliveries the server sends a
// subscription unacknowledged (its default).
const mqttMaxAckPending = 1024

// WithMQTT opens o's MQTT listener on host:port, with pslab's settings.
// The listener takes the server's own user and password.
func WithMQTT(o *server.Options, host string, port int) *server.Options {
	o.MQTT = server.MQTTOpts{Host: host, Port: port, AckWait: mqttAckWait, MaxAckPending: mqttMaxAckPending,
		AuthTimeout: float64(o.AuthTimeout)}
	return o
}

func init() { brokers.Register(MQTTDescriptor()) }

// MQTTDescriptor describes NATS over MQTT to the registry.
func MQTTDescriptor() brokers.Descriptor {
	return brokers.Descriptor{
		Name:    NameMQTT,
		Summary: "NATS over its MQTT listener (MQTT 3.1.1; embedded nats-server, JetStream on)",
		Version: server.VERSION + " (embedded)",
		NewBroker: func(context.Context, string, io.Writer) (broker.Broker, error) {
			return &mqttServer{Server: NewServer(ServerConfig{MQTT: true})}, nil
		},
		NewDriver: func(_ context.Context, ep driver.Endpoint) (driver.Driver, error) {
			return mqtt.New(mqttProfile(mqttRunning.Lookup(ep.URL), ep), ep)
		},
		Supports:     func(f scenario.Factors) error { return mqttProfile(nil, driver.Endpoint{}).Supports(f) },
		Capabilities: mqtt.Capabilities(mqtt.V311),
		Schemes:      []string{"mqtt"},
		Probe:        mqtt.Probe,
		Install: func(_ context.Context, out, _ io.Writer) error {
			fmt.Fprintln(out, "nats-mqtt: embedded in pslab, nothing to install")
			return nil
		},
		Doctor: func(context.Context) []brokers.Check {
			return []brokers.Check{{Status: "ok", What: NameMQTT, Detail: "embedded nats-server's MQTT listener, nothing to install"}}
		},
		Login:     mqtt.Login,
		WireBytes: mqtt.WireBytes(mqtt.V311),
		MaxConns:  MaxConn,
		Caveats:   []record.Caveat{{Broker: NameMQTT, Mechanism: mqtt.SelectorAsTopic, Text: mqtt.SelectorCaveat}},
	}
}

// mqttRunning are the nats-mqtt brokers this process started, by their
// MQTT endpoint URL (the driver's administration reaches JetStream over
// the server's NATS port).
var mqttRunning mqtt.Running[*mqttServer]

// mqttServer is the embedded nats-server with its MQTT listener, as the
// lab sees it: its endpoint is the listener's.
type mqttServer struct {
	*Server
	nats driver.Endpoint // the server's NATS endpoint, for administration
}

// Name implements broker.Broker.
func (m *mqttServer) Name() string { return NameMQTT }

// Settings implements broker.Broker.
func (m *mqttServer) Settings() map[string]string {
	s := m.Server.Settings()
	m.mu.Lock()
	s["mqtt_listener"] = m.Server.mqtt
	m.mu.Unlock()
	s["mqtt_ack_wait"] = mqttAckWait.String() + " (a QoS 1/2 delivery unacknowledged this long is sent again)"
	s["mqtt_max_ack_pending"] = fmt.Sprint(mqttMaxAckPending)
	return s
}

// Start implements broker.Broker: the server, and the MQTT endpoint.
func (m *mqttServer) Start(ctx context.Context, h broker.Host) (driver.Endpoint, error) {
	ep, err := m.Server.Start(ctx, h)
	if err != nil {
		return ep, err
	}
	m.mu.Lock()
	addr := m.Server.mqtt
	m.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := broker.WaitTCP(wctx, h.Dialer(), addr, nil); err != nil {
		_ = m.Server.Stop(context.Background())
		return driver.Endpoint{}, fmt.Errorf("nats-server's MQTT listener at %s: %w", addr, err)
	}
	m.nats = ep
	mep := ep
	mep.URL = "mqtt://" + addr
	mqttRunning.Add(mep.URL, m)
	return mep, nil
}

// Stop implements broker.Broker.
func (m *mqttServer) Stop(ctx context.Context) error {
	m.mu.Lock()
	addr := m.Server.mqtt
	m.mu.Unlock()
	mqttRunning.Remove("mqtt://" + addr)
	return m.Server.Stop(ctx)
}

// mqttProfile is nats-mqtt's mqtt.Profile; s is the server pslab started
// (nil: one reached by URL, whose JetStream pslab cannot ask).
func mqttProfile(s *mqttServer, ep driver.Endpoint) mqtt.Profile {
	p := mqtt.Profile{
		Name: NameMQTT, Product: "nats-server " + server.VERSION + " MQTT listener", Version: mqtt.V311,
		Persistence:        "JetStream file storage (the listener keeps QoS 1/2 messages in its $MQTT_msgs stream and sessions in $MQTT_sess, on file)",
		QoS0WhileAway:      "not kept (nats-server delivers QoS 0 as core NATS messages, to connected sessions only)",
		KeepsQoS0WhileAway: false,
		SurvivesKill:       true,
		InflightLimit:      mqttMaxAckPending, InflightSetting: "mqtt max_ack_pending",
		Redelivery: fmt.Sprintf("nats-server sends an unacknowledged QoS 1/2 delivery again after its ack wait (%s), flagged DUP", mqttAckWait),
		MaxPayload: server.MAX_PAYLOAD_SIZE,
	}
	if s != nil {
		p.Admin = &mqttAdmin{s: s, ep: ep}
	}
	return p
}

// mqttAdmin is nats-mqtt's part of a case (mqtt.Admin): what the server
// holds after the drain.
type mqttAdmin struct {
	s  *mqttServer
	ep driver.Endpoint // the MQTT endpoint (its monitor URL and admin dialer)
}

// Prepare implements mqtt.Admin: nothing per case (QoS 1/2 messages are
// always on file).
func (a *mqttAdmin) Prepare(context.Context, driver.CaseSpec) error { return nil }

// Purge implements mqtt.Admin: the driver ends the case's sessions, and
// nats-server removes their consumers with them.
func (a *mqttAdmin) Purge(context.Context, string) error { return nil }

// Close implements mqtt.Admin.
func (a *mqttAdmin) Close() error { return nil }

// mqttStream is the JetStream stream of the MQTT listener's QoS 1/2
// messages.
const mqttStream = "$MQTT_msgs"

// Held implements mqtt.Admin. QoS 1/2: the sum over the consumers of the
// listener's message stream (one per session subscription; earlier cases'
// went with their sessions) of what they have not delivered and what is
// delivered but not acknowledged. QoS 0 goes as core NATS messages: what
// the server queued for the case's MQTT connections (connz out_msgs, by
// their MQTT client id) less what the case's subscribers read is on its
// way (the server's output buffers, the sockets, the link).
func (a *mqttAdmin) Held(ctx context.Context, c driver.CaseSpec, st mqtt.CaseState) (driver.Held, error) {
	if st.QoS == 0 {
		conns, err := connz(ctx, a.ep)
		if err != nil {
			return driver.Held{}, err
		}
		var queued int64
		for _, cn := range conns {
			if strings.HasPrefix(cn.MQTTClient, c.Prefix) {
				queued += cn.OutMsgs
			}
		}
		onWay := max(queued-st.Parsed, 0)
		return driver.Held{Backlog: onWay, InSockets: onWay, Queued: queued, Parsed: st.Parsed,
			Source: fmt.Sprintf("nats-mqtt QoS 0 (core NATS): %d messages the server queued for the case's MQTT connections (connz out_msgs), %d read by the subscribers: %d on their way", queued, st.Parsed, onWay)}, nil
	}
	admin := a.s.nats.Admin()
	nc, err := natsConnect(ctx, admin, "pslab-mqtt-admin", nil)
	if err != nil {
		return driver.Held{}, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc, jetstream.WithDefaultTimeout(adminTimeout))
	if err != nil {
		return driver.Held{}, err
	}
	stream, err := js.Stream(ctx, mqttStream)
	if err != nil {
		return driver.Held{}, fmt.Errorf("nats-mqtt: stream %s: %w", mqttStream, err)
	}
	var h driver.Held
	n := 0
	list := stream.ListConsumers(ctx)
	for ci := range list.Info() {
		h.Backlog += int64(ci.NumPending) + int64(ci.NumAckPending)
		h.Delivering += int64(ci.NumAckPending)
		n++
	}
	if err := list.Err(); err != nil {
		return driver.Held{}, fmt.Errorf("nats-mqtt: consumers of %s: %w", mqttStream, err)
	}
	h.Source = fmt.Sprintf("nats-mqtt: the %d consumers of %s (one per session subscription): num_pending + num_ack_pending", n, mqttStream)
	return h, nil
}
