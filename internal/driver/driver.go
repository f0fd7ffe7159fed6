// Package driver defines the one small interface pslab needs from a broker
// protocol, and the connection bookkeeping every protocol's clients share
// (ConnTracker, Backoff, ResetOnClose). The protocols live with their
// brokers, each in its own package (internal/brokers/NAME).
package driver

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"time"

	"pslab/internal/scenario"
)

// Driver is everything a run needs from a broker protocol. One per protocol.
type Driver interface {
	// Name is the broker name used in results, e.g. "nats" or "artemis".
	Name() string
	// Supports returns nil when the driver can express f, or an error that says
	// why not (wrapped in ErrUnsupported). Never fake a combination.
	Supports(f scenario.Factors) error
	// Mechanism says in words what the factors meant on this broker, e.g.
	// "JetStream durable consumer, file storage, AckExplicit per message".
	// It is written into every result record.
	Mechanism(f scenario.Factors) string
	// Prepare creates what the case needs on the broker (streams, queues)
	// before any client connects. Called once per case, after Purge.
	Prepare(ctx context.Context, c CaseSpec) error
	// Publisher opens one connection for one publisher.
	Publisher(ctx context.Context, s PubSpec) (Publisher, error)
	// Subscriber opens one connection for one subscriber and starts delivering
	// to h asynchronously.
	Subscriber(ctx context.Context, s SubSpec, h Handler) (Subscriber, error)
	// Purge removes everything a case left on the broker (streams, durable
	// subscriptions, queued messages) whose name starts with the run prefix.
	Purge(ctx context.Context, prefix string) error
	// Close releases the driver's own admin connection, if any.
	Close() error
}

// ErrUnsupported wraps every "this broker cannot express that" error.
var ErrUnsupported = errors.New("unsupported by this broker")

// Dialer makes the TCP connections of clients; the link emulation supplies
// one that dials from inside the clients' network namespace.
type Dialer interface {
	DialContext(ctx context.Context, network, addr string) (net.Conn, error)
}

// Endpoint is where and how to reach a broker.
type Endpoint struct {
	URL      string // e.g. nats://10.77.1.2:4222 or stomp://127.0.0.1:61613
	User     string
	Password string
	Dialer   Dialer // nil: net.Dialer on the host network
	// AdminDialer, when set, is used for the driver's own administration
	// connection instead of Dialer: from beside the broker, not over the
	// emulated link.
	AdminDialer Dialer
	// StallTolerance is how long a client connection may move nothing
	// (TCP's retransmission back-off on a congested link) before the
	// broker may give it up, where the client sets that (STOMP: the
	// heart-beat it promises is half of it, and Artemis' connection TTL
	// twice the heart-beat); 0: the driver's default. The lab sets it on
	// a shaped link.
	StallTolerance time.Duration
	// MonitorURL is the broker's HTTP monitoring endpoint
	// (http://host:port), reached with the admin dialer (NATS: Held reads
	// the output buffers of core subscribers from its /connz). "" when the
	// broker has none that pslab knows of.
	MonitorURL string
	// TLS, when set, is the client configuration (the lab's CA as the
	// only root) for the connections of cases with tls: on; TLSURL is
	// where those connect ("": URL, the broker serves TLS and plain on
	// one port). Set by the lab for a broker it started with its own
	// certificates (internal/labtls); nil otherwise.
	TLS    *tls.Config
	TLSURL string
}

// Admin is the endpoint for administration connections.
func (ep Endpoint) Admin() Endpoint {
	if ep.AdminDialer != nil {
		ep.Dialer = ep.AdminDialer
	}
	return ep
}

// CaseSpec is one case as the driver sees it.
type CaseSpec struct {
	Prefix  string // unique per case run, e.g. "pslab-r1a2b-c03"; all names start with it
	Factors scenario.Factors
	// Handshakes collects the TLS handshakes of the case's client
	// connections (Factors.TLS); nil: nobody reads them.
	Handshakes *HandshakeLog
}

// PubSpec describes one publisher.
type PubSpec struct {
	Case  CaseSpec
	ID    int // 0-based publisher index
	Topic int // 0-based topic index
	// Window is the maximum number of sends not yet confirmed by the broker
	// (flow control). The driver decides what "confirmed" means (PubAck,
	// STOMP receipt, PING/PONG) and states it in Mechanism.
	Window int
}

// SubSpec describes one subscriber.
type SubSpec struct {
	Case  CaseSpec
	ID    int // 0-based subscriber index
	Topic int
	// DurableName and ClientID name a durable subscription; set whenever the
	// case is durable (the scenario guarantees a name source).
	DurableName string
	ClientID    string
	// SelectFrom..SelectTo (inclusive..exclusive) is the selector range when
	// Factors.Selector is set, as values of the `sel` property 0..99.
	SelectFrom, SelectTo int
	// FilterValues are the values in the subscriber's filter expression
	// when Factors.Filtered() (scenario.Factors.SubscriberFilterValues):
	// one for a simple or AND-filter, or_values for an OR-filter. Values at
	// or above Factors.Values are carried by no message.
	FilterValues []int
	// AckEvery and AckInterval bound lazy acknowledgement for DUPS_OK and
	// CLIENT: ack cumulatively after this many messages or this much time
	// (0: DefaultAckEvery, DefaultAckIntervalMs).
	AckEvery      int
	AckIntervalMs int
	// Window bounds the deliveries in flight to this subscriber (the
	// driver pulls at most this many at a time) for a DeliveryWindowed
	// driver; 0: the driver's default. AckWait is how long the broker
	// waits for an acknowledgement before it redelivers; 0: the driver's
	// default.
	Window  int
	AckWait time.Duration
}

// Defaults used when a SubSpec leaves the lazy-ack bounds at zero.
const (
	DefaultAckEvery      = 100
	DefaultAckIntervalMs = 100
)

// DeliveryWindowed is implemented by drivers whose subscribers pull
// deliveries in batches for a case of f (JetStream pull consumers): their
// in-flight deliveries can be bounded (SubSpec.Window). Over a shaped
// link a batch larger than the link can carry within the broker's
// redelivery timer comes again before it has arrived.
type DeliveryWindowed interface {
	DeliveryWindowed(f scenario.Factors) bool
}

// Message is one outgoing message: an encoded body (pslab stamp included)
// and the value of its filtered attribute: the selector property 0..99, or
// the filter value 0..Values-1 of a filter case (-1 when the case has
// neither). Topic is the message's topic when the case has
// TopicRoundRobin; otherwise the publisher's PubSpec.Topic is used. A
// driver may keep Body after Publish returns; callers never reuse it.
type Message struct {
	Body  []byte
	Sel   int
	Topic int
}

// FilterMechanism is implemented by drivers that can say in words how a
// case's filters are expressed on the broker (written into the record's
// filter block).
type FilterMechanism interface {
	FilterMechanism(f scenario.Factors) string
}

// MessageTopic is the topic of m from publisher s.
func MessageTopic(s PubSpec, m Message) int {
	if s.Case.Factors.TopicRoundRobin {
		return m.Topic
	}
	return s.Topic
}

// DefaultWindow is the default number of unconfirmed sends of a publisher
// of f on an unshaped path: WindowMessages, whatever the body size, within
// the memory guard WindowMemoryBytes (see flowcontrol.go).
func DefaultWindow(f scenario.Factors) int {
	return UnshapedWindow(1, f.Size)
}

// WindowFor is how many bodies of size bytes fit in budget bytes, at least 1
// and at most WindowMessages: the window on a shaped link, whose budget is
// link time (bytes).
func WindowFor(budget, size int) int {
	return min(max(budget/max(size, 1), 1), WindowMessages)
}

// Publisher sends on one connection. Not safe for concurrent use.
type Publisher interface {
	// Publish sends one message, blocking while Window sends are unconfirmed.
	Publish(ctx context.Context, m Message) error
	// Flush waits until every send so far is confirmed by the broker.
	Flush(ctx context.Context) error
	Close() error
}

// BodyCopier is implemented by publishers that never keep Message.Body
// after Publish returns, so the caller may reuse the buffer.
type BodyCopier interface {
	CopiesBody() bool
}

// UnreceivedReporter is implemented by publishers that can ask the broker
// how many of their sends it has not received yet: still on their way
// (in the publisher's socket buffer or on the link) when a flush was cut.
// Called once the publisher has stopped.
type UnreceivedReporter interface {
	Unreceived(ctx context.Context) (int64, error)
}

// Delivery is one received message.
type Delivery struct {
	Body        []byte
	Redelivered bool
}

// Handler receives deliveries. It may be called from several goroutines of
// one subscriber at once (e.g. one per subscribed subject), so it must be
// safe for concurrent use. Acknowledgement is done by the driver per the
// case's ack mode after Handler returns.
type Handler func(d Delivery)

// Subscriber receives on one connection.
type Subscriber interface {
	// Close disconnects; a durable subscription stays on the broker.
	Close() error
	// Unsubscribe removes the subscription (durable ones too) and disconnects.
	Unsubscribe() error
}

// Aborter is implemented by publishers and subscribers that can drop their
// connection at once, with no goodbye to the broker, like a crashed client:
// the socket is reset (nothing queued in it is sent) and a durable
// subscription stays. A case ends this way when a purge follows anyway: on a
// slow link a graceful close waits behind the data still queued for the
// client, and the broker keeps sending it after the client has gone.
type Aborter interface {
	Abort()
}

// ResetOnClose makes closing c reset the connection (SO_LINGER 0: an RST,
// and whatever its send buffer still holds is discarded) instead of
// sending the rest and a FIN. Connections that are not TCP are left as
// they are.
func ResetOnClose(c net.Conn) {
	if l, ok := c.(interface{ SetLinger(int) error }); ok {
		_ = l.SetLinger(0)
	}
}

// Outage is one period a client connection was unusable: from when the loss was
// noticed to when the client was usable again (publisher: connected; subscriber:
// connected and subscribed again). Restored is zero if it never came back.
// Cause is the client's reason for the loss, as it reported it (empty when
// it gave none). Session is the broker's answer, on the connection that
// ended the outage, whether it had kept the client's session (MQTT's
// CONNACK session present): nil where the protocol gives no such answer
// (NATS, STOMP) or the client asked to keep no session (an MQTT clean
// session, always answered 0).
type Outage struct {
	Lost, Restored time.Time
	Cause          string
	Session        *bool
}

// ConnStats is what one client connection went through.
type ConnStats struct {
	Outages []Outage
	// InDoubt counts sends that Publish had accepted but whose broker confirmation
	// (PubAck, STOMP receipt, PONG) had not arrived when the connection was lost,
	// or came back as an error: the broker may or may not have them. Publishers
	// only.
	InDoubt int64
	// Resent counts messages the client sent again after reconnecting (if the driver
	// or client library replays), so the audit can explain duplicates.
	Resent int64
	// FirstSession is the broker's answer on the client's first
	// connection whether it had kept the client's session, as
	// Outage.Session (a subscriber that comes back after a
	// subscriber-disconnect is a new client: its first connection
	// resumes the session).
	FirstSession *bool
}

// SessionAnswerer is implemented by connections whose broker says, on
// connecting, whether it kept the client's session (MQTT: CONNACK session
// present). asked is false when the client asked to keep none (its answer
// says nothing); Link records resumed in the client's ConnTracker.
type SessionAnswerer interface {
	SessionResumed() (resumed, asked bool)
}

// SessionAnswer is c's answer about its session for a ConnTracker: nil
// unless c is a SessionAnswerer that asked to keep its session.
func SessionAnswer(c any) *bool {
	sa, ok := c.(SessionAnswerer)
	if !ok {
		return nil
	}
	resumed, asked := sa.SessionResumed()
	if !asked {
		return nil
	}
	return &resumed
}

// ConnReporter is implemented by publishers and subscribers that reconnect by
// themselves after the broker or the link drops their connection.
type ConnReporter interface {
	ConnStats() ConnStats
}
