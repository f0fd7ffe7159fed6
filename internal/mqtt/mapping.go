package mqtt

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"pslab/internal/brokers"
	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// The paper's factors on MQTT (docs/mqtt.md has the table):
//
//	topic                 topic <root>/t<topic> (<root>: the case's prefix, hashed short)
//	non-durable sub       clean session (3.1.1) / clean start, no expiry (5);
//	                      client id <prefix>-s<n>
//	durable sub           persistent session: clean session off (3.1.1) / clean
//	                      start off with a session expiry (5), client id from
//	                      the case's client_id; reconnects under the same id
//	persistent            QoS 1 (QoS 2 with exactly-once) publish and
//	                      subscription, with the broker's persistence
//	non-persistent        QoS 0 publish and subscription (at most once)
//	auto                  QoS 1: PUBACK per message after the handler
//	dups-ok               QoS 1: PUBACKs held back, sent every ack_every
//	                      messages or ack_interval
//	client                QoS 1: PUBACKs at application points, every
//	                      ack_every messages and at the end
//	exactly-once          QoS 2: PUBREC/PUBREL/PUBCOMP
//	selector              a topic per value <root>/t<topic>/s<value>; the
//	                      subscriber subscribes to its 20 (no matching step)
//	publisher window      PUBACK (QoS 1) / PUBCOMP (QoS 2) of each send; QoS 0:
//	                      PINGREQ every window/4 sends, confirmed by PINGRESP
//	                      (where the broker answers PINGREQ in order; else a
//	                      QoS 1 PUBLISH to <root>/b, confirmed by PUBACK)

// QoS is the MQTT quality of service of a case of f: one value for
// publishing and subscribing (a delivery is at the lower of the two, so
// a subscription above the publish QoS would promise nothing more).
func QoS(f scenario.Factors) byte {
	switch {
	case f.Delivery == scenario.NonPersistent:
		return 0
	case f.Ack == scenario.AckExactlyOnce:
		return 2
	}
	return 1
}

// filterRefusal is why MQTT cannot express property and header filters.
const filterRefusal = "MQTT 3.1.1 messages carry no properties and no broker matches MQTT 5 user properties: " +
	"a broker routes by topic only (filtering properties would happen in the client, which is not a broker filter); use filter: subject"

// FilterRefusals is the MQTT driver's filter capability table.
var FilterRefusals = driver.FilterRefusals{
	scenario.FilterProperty: filterRefusal,
	scenario.FilterHeader:   filterRefusal,
}

// Capabilities is the capability table of a broker driven over MQTT
// version v (its registry descriptor's): the filters MQTT cannot express,
// and the bytes a PUBLISH adds to a message body on the wire.
func Capabilities(v Version) brokers.Capabilities {
	return brokers.Capabilities{FilterRefusals: FilterRefusals, FrameOverhead: PublishOverhead(v)}
}

// supports is Supports for profile p.
func supports(p Profile, f scenario.Factors) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%s over %s: %s: %w", p.Name, p.Version, fmt.Sprintf(format, a...), driver.ErrUnsupported)
	}
	if why := driver.ShapeRefusal(f); why != "" {
		return bad("%s", why)
	}
	switch f.Ack {
	case scenario.AckAuto, scenario.AckDupsOK, scenario.AckClient, scenario.AckExactlyOnce:
	default:
		return bad("no MQTT mapping for ack mode %q", f.Ack)
	}
	if f.Delivery == scenario.NonPersistent && f.Ack != scenario.AckAuto {
		return bad("non-persistent delivery is QoS 0 (at most once), whose deliveries are never acknowledged, and a "+
			"message published at QoS 0 is delivered at QoS 0 whatever the subscription asks: ack %s cannot be expressed "+
			"(auto can: nothing to acknowledge)", f.Ack)
	}
	if f.Ack == scenario.AckExactlyOnce && p.QoS2Refusal != "" {
		return bad("ack exactly-once (QoS 2): %s", p.QoS2Refusal)
	}
	if p.MaxPayload > 0 && f.Size > p.MaxPayload {
		return bad("body of %d bytes above the broker's largest message (%d bytes)", f.Size, p.MaxPayload)
	}
	if why := FilterRefusals.Check(f); why != "" {
		return bad("%s", why)
	}
	if f.TLS {
		return bad("%s", TLSRefusal)
	}
	return nil
}

// TLSRefusal is why no MQTT broker runs a case with tls: on.
const TLSRefusal = "tls: on is not wired for MQTT: pslab's MQTT clients dial plain TCP and no MQTT broker's TLS listener is configured with the lab's certificate (NATS and Artemis over STOMP serve TLS)"

// mechanism is Mechanism for profile p.
func mechanism(p Profile, f scenario.Factors) string {
	q := QoS(f)
	var parts []string
	parts = append(parts, fmt.Sprintf("%s over %s (pslab's client): topic <root>/t<topic>", p.Product, p.Version))
	if f.Subscription == scenario.Durable {
		if p.Version == V5 {
			parts = append(parts, fmt.Sprintf("durable = persistent session: clean start off, session expiry %d s, client id from client_id (MQTT names a session by client id only: durable_name has no MQTT expression); reconnects resume it under the same id", sessionExpiry))
		} else {
			parts = append(parts, "durable = persistent session: clean session off, client id from client_id (MQTT names a session by client id only: durable_name has no MQTT expression); reconnects resume it under the same id")
		}
	} else {
		parts = append(parts, "non-durable = clean session: the subscription lives as long as the connection; a reconnect subscribes anew")
	}
	switch q {
	case 0:
		parts = append(parts, "non-persistent = QoS 0 publish and subscription (at most once; nothing is acknowledged, so AUTO has nothing to acknowledge)")
		if p.PingOvertakes != "" {
			parts = append(parts, "publisher flow control = a QoS 1 PUBLISH without payload to <root>/b (a topic nobody subscribes to) every window/4 sends, its PUBACK confirming that the broker has handled every PUBLISH before it (not a PINGREQ: "+p.PingOvertakes+")")
		} else {
			parts = append(parts, "publisher flow control = PINGREQ every window/4 sends, a PINGRESP confirming that the broker has handled every PUBLISH before it")
		}
		if f.Subscription == scenario.Durable {
			parts = append(parts, "QoS 0 while a durable subscriber is away: "+p.QoS0WhileAway)
		}
	default:
		parts = append(parts, fmt.Sprintf("persistent = QoS %d publish and subscription, with %s", q, p.Persistence),
			fmt.Sprintf("publisher flow control = at most publish_window sends unconfirmed (%s); the publisher's own session is persistent, so a reconnect sends again, flagged DUP, what was not confirmed", map[byte]string{1: "PUBACK", 2: "PUBCOMP"}[q]))
	}
	switch {
	case q == 2:
		parts = append(parts, "exactly-once = QoS 2: PUBREC/PUBREL/PUBCOMP both ways; the subscriber delivers a packet identifier once until its PUBREL, across reconnects of its session")
	case q == 1 && f.Ack == scenario.AckAuto:
		parts = append(parts, "AUTO = QoS 1, one PUBACK per message after the handler returns")
	case q == 1 && f.Ack == scenario.AckDupsOK:
		parts = append(parts, fmt.Sprintf("DUPS_OK = QoS 1, PUBACKs held back and sent every ack_every messages (default %d) or ack_interval (default %d ms), at most half the broker's in-flight limit; pending ones sent on close; unacknowledged ones redelivered (DUP) when the session resumes",
			driver.DefaultAckEvery, driver.DefaultAckIntervalMs))
	case q == 1 && f.Ack == scenario.AckClient:
		parts = append(parts, fmt.Sprintf("CLIENT = QoS 1, PUBACKs at application points: every ack_every messages (default %d), at most half the broker's in-flight limit; unacknowledged ones redelivered (DUP) when the session resumes",
			driver.DefaultAckEvery))
	}
	if q > 0 && p.InflightLimit > 0 {
		parts = append(parts, fmt.Sprintf("the broker sends at most %d QoS %d deliveries unacknowledged per subscriber (%s)", p.InflightLimit, q, p.InflightSetting))
	}
	if p.Redelivery != "" && q > 0 {
		parts = append(parts, p.Redelivery)
	}
	if p.Unordered != "" && q > 0 {
		parts = append(parts, p.Unordered)
	}
	if f.Selector {
		parts = append(parts, SelectorAsTopic+" <root>/t<topic>/s<0..99>; a subscriber subscribes to the topics of its 20 values (topic routing, no matching step: as NATS subjects, not a selector)")
	}
	if f.Filtered() {
		parts = append(parts, filterMechanism(f))
	}
	if f.TopicRoundRobin {
		parts = append(parts, "each publisher sends to every topic in turn")
	}
	if p.Note != "" {
		parts = append(parts, p.Note)
	}
	return strings.Join(parts, "; ")
}

// SelectorAsTopic is the part of a selector case's mechanism a report's
// caveat looks for; SelectorCaveat is that caveat.
const (
	SelectorAsTopic = "selector = a topic per value"
	SelectorCaveat  = "MQTT has no message selectors: over MQTT a \"selector\" is topic routing (the publisher puts the selector value in the topic, the subscriber subscribes to the topics of its values), so the broker has no matching step to pay for. The selector claims measure routing there, not filtering."
)

// filterMechanism says how the subject filter maps onto topics.
func filterMechanism(f scenario.Factors) string {
	if !f.Filtered() {
		return ""
	}
	switch f.FilterForm {
	case scenario.FormAnd:
		return fmt.Sprintf("AND-filter as topic levels: a message goes to <root>/t0/P1/.../P%d (P%d = value+1, the others 0); "+
			"a subscriber's topic filter has the first %d levels literal and '#' for the rest", f.AndProperties, f.AndPos(), f.AndTerms)
	case scenario.FormOr:
		return fmt.Sprintf("subject filter: a message goes to <root>/t0/v<value>; an OR-filter of %d values is %d topic filters in one SUBSCRIBE: MQTT has no OR over arbitrary values", f.OrValues, f.OrValues)
	}
	return "subject filter: a message goes to <root>/t0/v<value>; a subscriber filters by subscribing to the topic of its value"
}

// Root is the first topic level of a case: its prefix hashed into 8
// characters, so that the topic on every message is as short as a load
// tool's (the prefix itself names sessions and client ids).
func Root(prefix string) string { return root(prefix) }

// barrierTopic is the topic of a case's flow-control barriers (QoS 0 on a
// broker whose PINGRESP overtakes PUBLISHes): no subscriber's filter
// matches it (theirs start <root>/t).
func barrierTopic(prefix string) string { return root(prefix) + "/b" }

func root(prefix string) string {
	h := fnv.New64a()
	h.Write([]byte(prefix))
	const space = 36 * 36 * 36 * 36 * 36 * 36 * 36
	return fmt.Sprintf("p%07s", strconv.FormatUint(h.Sum64()%space, 36))
}

// topicName is the topic a message of publisher topic t with filtered
// value v (selector or filter value; -1: none) goes to.
func topicName(prefix string, f scenario.Factors, t, v int) string {
	r := root(prefix) + "/t" + strconv.Itoa(t)
	switch {
	case f.Filtered() && f.FilterForm == scenario.FormAnd:
		var b strings.Builder
		b.WriteString(r)
		for _, p := range f.AndProps(v) {
			b.WriteByte('/')
			b.WriteString(strconv.Itoa(p))
		}
		return b.String()
	case f.Filtered():
		return r + "/v" + strconv.Itoa(v)
	case f.Selector && v >= 0:
		return r + "/s" + strconv.Itoa(v)
	}
	return r
}

// PublishOverhead is what one PUBLISH of a case adds to its payload on
// the wire over MQTT version v (brokers.Capabilities.FrameOverhead): the
// fixed header with its remaining length, the topic (its longest for the
// case: the last topic, the last selector or filter value) with its
// length, the packet identifier at QoS 1 and 2, and MQTT 5's empty
// property list. A delivery is the same PUBLISH from the broker. The
// acknowledgements (4 bytes each at QoS 1, three at QoS 2) are not
// counted, as for every protocol.
func PublishOverhead(v Version) func(scenario.Factors) int {
	return func(f scenario.Factors) int {
		val := -1
		switch {
		case f.Filtered():
			val = max(f.Values-1, 0)
		case f.Selector:
			val = scenario.SelectorValues - 1
		}
		topic := topicName("pslab", f, max(f.Topics-1, 0), val)
		return len(publishHeader(nil, v, topic, QoS(f), false, 1, f.Size))
	}
}

// topicFilters are what subscriber s subscribes to.
func topicFilters(s driver.SubSpec) []string {
	f := s.Case.Factors
	r := root(s.Case.Prefix) + "/t" + strconv.Itoa(s.Topic)
	switch {
	case f.Filtered() && f.FilterForm == scenario.FormAnd:
		if len(s.FilterValues) == 0 {
			return nil
		}
		var b strings.Builder
		b.WriteString(r)
		props := f.AndProps(s.FilterValues[0])
		for _, p := range props[:f.AndTerms] {
			b.WriteByte('/')
			b.WriteString(strconv.Itoa(p))
		}
		if f.AndTerms < len(props) {
			b.WriteString("/#")
		}
		return []string{b.String()}
	case f.Filtered():
		out := make([]string, len(s.FilterValues))
		for i, v := range s.FilterValues {
			out[i] = r + "/v" + strconv.Itoa(v)
		}
		return out
	case f.Selector:
		out := make([]string, 0, s.SelectTo-s.SelectFrom)
		for v := s.SelectFrom; v < s.SelectTo; v++ {
			out = append(out, r+"/s"+strconv.Itoa(v))
		}
		return out
	}
	return []string{r}
}

// Client identifiers. Every one starts with the case's prefix, so that
// Purge finds the sessions of a case.
func pubClientID(s driver.PubSpec) string { return s.Case.Prefix + "-p" + strconv.Itoa(s.ID) }

func subClientID(s driver.SubSpec) string {
	if s.Case.Factors.Subscription != scenario.Durable || s.ClientID == "" {
		return s.Case.Prefix + "-s" + strconv.Itoa(s.ID)
	}
	if strings.HasPrefix(s.ClientID, s.Case.Prefix) {
		return s.ClientID
	}
	return s.Case.Prefix + "." + s.ClientID
}

// sessionExpiry is the MQTT 5 session expiry of a persistent session, in
// seconds: longer than any case (Purge ends the session afterwards).
const sessionExpiry = 24 * 3600

// WireBytes is what one message of a case run under prefix puts on the
// link over MQTT version v (the registry's Descriptor.WireBytes): the
// PUBLISH from the publisher and the PUBLISH to a subscriber, on the topic
// of topic 0 (a selector or filter case's first value), at the case's QoS.
// Acknowledgements (4 bytes each way at QoS 1, 8 at QoS 2) are not in it,
// as NATS's PONGs and JetStream's acks are not in NATS's.
func WireBytes(v Version) func(prefix string, f scenario.Factors) (toBroker, toClient int) {
	return func(prefix string, f scenario.Factors) (int, int) {
		sel := -1
		if f.Selector || f.Filtered() {
			sel = 0
		}
		n := len(publishHeader(nil, v, topicName(prefix, f, 0, sel), QoS(f), false, 1, f.Size)) + f.Size
		return n, n
	}
}
