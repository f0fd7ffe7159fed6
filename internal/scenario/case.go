package scenario

import (
	"fmt"
	"strings"
	"time"
)

// Case is one fully resolved case of a suite: factors plus run settings.
type Case struct {
	ID   string `json:"id"`   // e.g. "03"; unique within the suite
	Name string `json:"name"` // free text

	Factors

	Warmup time.Duration `json:"-"`
	Window time.Duration `json:"-"`
	Drain  time.Duration `json:"-"`
	// Rate is msgs/s per publisher; 0 saturates (no think time).
	Rate float64 `json:"rate"`
	// PaceTick, when PaceTickSet, is the open-loop pacer's tick (0: a
	// wake-up for every message); otherwise the pacer chooses it from
	// the case's total rate (internal/load, pacer.go). The tick used is
	// in the record (result.pacer.tick_us).
	PaceTick    time.Duration `json:"-"`
	PaceTickSet bool          `json:"-"`
	// PublishWindow is the flow-control window (unconfirmed sends per publisher).
	PublishWindow int `json:"publish_window"`
	// DeliveryWindow bounds each subscriber's deliveries in flight (sent
	// by the broker, not yet taken by the client) where the driver pulls
	// them (driver.DeliveryWindowed); set by the run on a shaped link, 0:
	// the driver's own default. Not a scenario-file key.
	DeliveryWindow int `json:"delivery_window,omitempty"`
	// AckWait is how long the broker waits for a subscriber's
	// acknowledgement before it redelivers, where it has such a timer
	// (driver.DeliveryWindowed); set by the run on a shaped link, 0: the
	// driver's default. Not a scenario-file key.
	AckWait time.Duration `json:"-"`
	// InFlight bounds the deliveries due but not yet received across the
	// case (0: no bound): publishers wait at it, so the broker's backlog
	// stays bounded and saturation is at the pace it can sustain.
	InFlight int `json:"in_flight,omitempty"`
	// AckEvery and AckInterval bound lazy acknowledgement (dups-ok, client).
	AckEvery    int           `json:"ack_every"`
	AckInterval time.Duration `json:"-"`
	// DurableName and ClientID are templates naming durable subscriptions;
	// {prefix} and {sub} are replaced. Required when Subscription is durable.
	DurableName string `json:"durable_name,omitempty"`
	ClientID    string `json:"client_id,omitempty"`
	// ConnectUnshaped sets up the case's connections with the emulated
	// link's shaping and loss lifted, and puts them back before the
	// warm-up: connection set-up is excluded from the measurement (as in
	// Gaddah & Kunz), and 800 set-ups through 1 Mbit/s with 3 % loss cost
	// many seconds per case. Warm-up, window and drain run on the link.
	ConnectUnshaped bool `json:"connect_unshaped,omitempty"`
	// Faults is the case's fault schedule, applied during the window.
	Faults []Fault `json:"faults,omitempty"`
	// Paper holds the published reference values for this case, if any
	// (e.g. "sub_tput_wireline": 49.9).
	Paper map[string]float64 `json:"paper,omitempty"`
	// Capacity marks a capacity measurement (Henjes et al.): the record
	// says whether the broker was saturated, and a run where it was not,
	// or where the client was the bottleneck, is flagged and left out of
	// capacity fits.
	Capacity bool `json:"capacity,omitempty"`
	// Brokers, when set, restricts the case to these brokers (e.g. an
	// Artemis-only header-filter case in a file run on both).
	Brokers []string `json:"brokers,omitempty"`
	// Note is free text carried into reports (e.g. an erratum).
	Note string `json:"note,omitempty"`
	// Varied are the values a sweep gave this case, in the sweep's order
	// (a case's own sweep first); empty for a case not from a sweep.
	Varied []Setting `json:"-"`
	// Full holds the case's factors without the quick overrides, when
	// those changed them (e.g. a 200/200/200 case run as 20/20/20).
	Full *Factors `json:"full_factors,omitempty"`

	subscribersGiven bool // subscribers was set explicitly (filter cases derive it otherwise)

	File string `json:"-"` // scenario file and line the case came from
	Line int    `json:"-"`
}

// ForBroker reports whether the case runs on broker b.
func (c Case) ForBroker(b string) bool {
	if len(c.Brokers) == 0 {
		return true
	}
	for _, x := range c.Brokers {
		if x == b {
			return true
		}
	}
	return false
}

// Where is "file:line" of the case.
func (c Case) Where() string { return fmt.Sprintf("%s:%d", c.File, c.Line) }

// Name templates.
func expand(tmpl, prefix string, sub int) string {
	r := strings.NewReplacer("{prefix}", prefix, "{sub}", fmt.Sprint(sub))
	return r.Replace(tmpl)
}

// DurableNameFor returns the durable subscription name of subscriber sub.
func (c Case) DurableNameFor(prefix string, sub int) string {
	return expand(c.DurableName, prefix, sub)
}

// ClientIDFor returns the client id of subscriber sub.
func (c Case) ClientIDFor(prefix string, sub int) string {
	return expand(c.ClientID, prefix, sub)
}

// TopicOfPublisher maps publisher i to its (first) topic (publisher i sends to
// topic i mod topics; with TopicRoundRobin it starts there and goes round). This realises the paper's connection models:
// one-to-one N/N/N, few-to-many 10/100/10 (one publisher and ten
// subscribers per topic), many-to-few 100/10/10 (ten publishers per topic).
func (f Factors) TopicOfPublisher(i int) int { return i % f.Topics }

// TopicOfMessage is the topic publisher i sends its message seq (1-based)
// to: its own topic, or round robin from it with TopicRoundRobin.
func (f Factors) TopicOfMessage(i int, seq uint64) int {
	if !f.TopicRoundRobin {
		return i % f.Topics
	}
	return int((uint64(i) + seq - 1) % uint64(f.Topics))
}

// ValueOfMessage is the filter value publisher i puts on message seq in a
// filter case: round robin over the values, publishers starting at
// different values.
func (f Factors) ValueOfMessage(i int, seq uint64) int {
	return int((uint64(i) + seq - 1) % uint64(max(f.Values, 1)))
}

// TopicOfSubscriber maps subscriber j to its topic (j mod topics).
func (f Factors) TopicOfSubscriber(j int) int { return j % f.Topics }

// SubscribersOfTopic counts the subscribers listening on topic t.
func (f Factors) SubscribersOfTopic(t int) int {
	n := 0
	for j := 0; j < f.Subscribers; j++ {
		if f.TopicOfSubscriber(j) == t {
			n++
		}
	}
	return n
}

// DeriveModel names the connection model that the counts describe.
func (f Factors) DeriveModel() Model {
	switch {
	case f.Publishers == f.Subscribers && f.Subscribers == f.Topics:
		return OneToOne
	case f.Subscribers > f.Publishers:
		return FewToMany
	default:
		return ManyToFew
	}
}

// DefaultBroker is the broker a scenario file that names none runs on
// (the only broker name outside the broker packages).
const DefaultBroker = "nats"

// Suite is a parsed scenario file.
type Suite struct {
	Name     string
	File     string
	Brokers  []string
	Networks []string
	Reps     int
	Cases    []Case
	// RepsRule: `ci:` and `max_reps:`, sequential repetitions.
	RepsRule RepsRule
	// RandomOrder: `order: random`, each network's case runs in seeded
	// random rounds instead of file order (lab.schedule).
	RandomOrder bool
	// PerNetwork: `per_network:`, each network's warm-up, window and drain.
	PerNetwork map[string]Phases
	// BrokersLine and NetworksLine are the lines of brokers: and networks:
	// (0: not in the file), for errors about their values.
	BrokersLine, NetworksLine int
	// Parallel: `parallel:`, the labs a shaped network's cases run in at
	// once (lab/parallel.go); 0: not given.
	Parallel int
}
