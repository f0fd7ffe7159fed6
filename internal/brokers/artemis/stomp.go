package artemis

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// STOMP driver for ActiveMQ Artemis. The factor mapping (DESIGN.md, Factor
// mapping; docs/artemis.md):
//
//	topic                 multicast address <prefix>.t<topic>, SEND/SUBSCRIBE
//	                      with destination-type / subscription-type MULTICAST
//	non-durable sub       SUBSCRIBE without a name: a temporary queue
//	durable sub           CONNECT client-id + SUBSCRIBE durable-subscription-name
//	                      (queue <client-id>.<name>, kept while disconnected)
//	(non-)persistent      SEND header persistent:true|false
//	AUTO ack              ack:client-individual, one ACK per message
//	DUPS_OK ack           ack:client, cumulative ACK every N messages or T ms
//	CLIENT ack            ack:client, cumulative ACK every N messages
//	selector              SEND header sel:<0..99>; SUBSCRIBE header
//	                      selector:convert_string_expressions:sel >= a AND sel < b
//	publisher window      RECEIPT on every k-th SEND, at most Window unconfirmed

// stompWindowBytes is the consumer-window-size pslab asks for on
// ack:client and ack:client-individual subscriptions (Artemis' own default
// there is 10 KiB; 1 MiB is the Artemis JMS client's default window).
// ack-mode ACKs are also sent when half of it is unacknowledged, so the
// broker never stalls waiting for an ACK that waits for more messages.
const stompWindowBytes = 1 << 20

type stompDriver struct {
	ep driver.Endpoint

	mu    sync.Mutex
	admin *stompAdmin
}

// NewSTOMP returns the driver for ActiveMQ Artemis over STOMP 1.2 at ep
// (URL stomp://host:port). It does not connect until it is used.
func NewSTOMP(ep driver.Endpoint) (driver.Driver, error) {
	if _, err := stompAddr(ep.URL); err != nil {
		return nil, err
	}
	return &stompDriver{ep: ep}, nil
}

func (d *stompDriver) Name() string { return Name }

// SupportsSTOMP is the STOMP driver's Supports, usable before any broker
// runs (to select cases).
func SupportsSTOMP(f scenario.Factors) error { return (&stompDriver{}).Supports(f) }

// Supports implements Driver. Every factor of the paper has an Artemis STOMP
// expression; only values outside the scenario's vocabulary are refused.
func (d *stompDriver) Supports(f scenario.Factors) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("artemis over STOMP: %s: %w", fmt.Sprintf(format, a...), driver.ErrUnsupported)
	}
	if why := driver.ShapeRefusal(f); why != "" {
		return bad("%s", why)
	}
	switch f.Ack {
	case scenario.AckAuto, scenario.AckDupsOK, scenario.AckClient:
	default:
		return bad("no STOMP mapping for ack mode %q", f.Ack)
	}
	if why := FilterRefusals.Check(f); why != "" {
		return bad("%s", why)
	}
	return nil
}

// FilterMechanism implements FilterMechanism.
func (d *stompDriver) FilterMechanism(f scenario.Factors) string { return stompFilterMechanism(f) }

// Mechanism implements Driver.
func (d *stompDriver) Mechanism(f scenario.Factors) string {
	var b strings.Builder
	b.WriteString("Artemis over STOMP 1.2: topic = multicast address (destination-type:MULTICAST)")
	if f.Subscription == scenario.Durable {
		b.WriteString("; durable = CONNECT client-id + SUBSCRIBE durable-subscription-name (queue <client-id>.<name> kept while disconnected)")
	} else {
		b.WriteString("; non-durable = SUBSCRIBE without a name (temporary queue deleted on disconnect)")
	}
	if f.Delivery == scenario.Persistent {
		b.WriteString("; SEND persistent:true (journaled only where a durable subscription queue holds it)")
	} else {
		b.WriteString("; SEND persistent:false")
	}
	fmt.Fprintf(&b, "; publisher flow control = RECEIPT on every k-th SEND (k = Window/4), at most Window (default %d messages on an unshaped path) sends unconfirmed, a receipt meaning the broker has routed (persistent: stored) everything before it", driver.WindowMessages)
	switch f.Ack {
	case scenario.AckAuto:
		b.WriteString("; AUTO = ack:client-individual, one ACK per message after the handler returns")
	case scenario.AckDupsOK:
		fmt.Fprintf(&b, "; DUPS_OK = ack:client, cumulative ACK every AckEvery messages (default %d) or AckIntervalMs (default %d ms), pending ACK sent on close",
			driver.DefaultAckEvery, driver.DefaultAckIntervalMs)
	case scenario.AckClient:
		fmt.Fprintf(&b, "; CLIENT = ack:client, cumulative ACK every AckEvery messages (default %d), unacknowledged ones redelivered after close",
			driver.DefaultAckEvery)
	}
	fmt.Fprintf(&b, "; consumer-window-size %d bytes, ACK also at half of it", stompWindowBytes)
	fmt.Fprintf(&b, "; CONNECT heart-beat:%d,0 (Artemis closes a connection that sends nothing for %s)", heartBeatFor(d.ep).Milliseconds(), connectionTTL(d.ep))
	if f.Selector {
		b.WriteString("; selector = SEND header sel:<0..99>, SUBSCRIBE selector:convert_string_expressions:sel >= a AND sel < b (STOMP headers are strings)")
	}
	if f.Filtered() {
		b.WriteString("; " + stompFilterMechanism(f))
	}
	if f.TopicRoundRobin {
		b.WriteString("; each publisher sends to every topic's address in turn")
	}
	if f.TLS {
		b.WriteString("; " + stompTLSMechanism)
	}
	return b.String()
}

// Prepare implements Driver. Artemis creates the multicast addresses on
// first use, so a case needs nothing up front.
func (d *stompDriver) Prepare(ctx context.Context, c driver.CaseSpec) error {
	if err := d.Supports(c.Factors); err != nil {
		return err
	}
	return checkName(c.Prefix)
}

// Purge implements Driver: it deletes, through the broker's management
// address, every queue (durable subscriptions included) and every address
// whose name starts with prefix.
func (d *stompDriver) Purge(ctx context.Context, prefix string) error {
	if err := checkName(prefix); err != nil {
		return err
	}
	return d.withAdmin(ctx, func(a *stompAdmin) error { return a.purge(ctx, prefix, purgeBound(d.ep)) })
}

// Close implements Driver.
func (d *stompDriver) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.admin == nil {
		return nil
	}
	err := d.admin.close(5 * time.Second)
	d.admin = nil
	return err
}

// checkName refuses names that would need escaping in a STOMP header or
// that Artemis treats specially (wildcards).
func checkName(s string) error {
	if s == "" {
		return fmt.Errorf("empty name")
	}
	for _, r := range s {
		ok := r == '-' || r == '_' || r == '.' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		if !ok {
			return fmt.Errorf("name %q: only letters, digits, '-', '_' and '.' are allowed", s)
		}
	}
	return nil
}

// stompTopic is the multicast address of a topic.
func stompTopic(c driver.CaseSpec, topic int) string {
	return c.Prefix + ".t" + strconv.Itoa(topic)
}

// stompClientID is the client-id of a durable subscriber. It always starts
// with the case prefix so that Purge finds the subscription queue
// (<client-id>.<name>).
func stompClientID(s driver.SubSpec) string {
	id := s.ClientID
	if id == "" {
		id = "sub" + strconv.Itoa(s.ID)
	}
	if !strings.HasPrefix(id, s.Case.Prefix) {
		id = s.Case.Prefix + "." + id
	}
	return id
}

// stompDurableName is the durable-subscription-name of a subscriber.
func stompDurableName(s driver.SubSpec) string {
	if s.DurableName != "" {
		return s.DurableName
	}
	return "d" + strconv.Itoa(s.ID)
}

// stompSelector is the SUBSCRIBE selector header value for [from, to).
// STOMP headers arrive as string properties, so the numeric comparison
// needs Artemis' convert_string_expressions: prefix.
func stompSelector(from, to int) string {
	return fmt.Sprintf("convert_string_expressions:sel >= %d AND sel < %d", from, to)
}
