// Package scenario reads scenario files (YAML), validates them with file:line
// errors, and expands them into the cases a run executes.
package scenario

import (
	"fmt"
	"strings"
)

// Model is the connection model of the paper.
type Model string

// Connection models (Gaddah & Kunz, Table 1).
const (
	OneToOne  Model = "one-to-one"
	FewToMany Model = "few-to-many"
	ManyToFew Model = "many-to-few"
)

// Subscription is durable or non-durable.
type Subscription string

// Subscription kinds.
const (
	Durable    Subscription = "durable"
	NonDurable Subscription = "non-durable"
)

// Delivery is the JMS delivery mode.
type Delivery string

// Delivery modes.
const (
	Persistent    Delivery = "persistent"
	NonPersistent Delivery = "non-persistent"
)

// AckMode is the JMS acknowledgement mode.
type AckMode string

// Acknowledgement modes.
const (
	AckAuto   AckMode = "auto"
	AckDupsOK AckMode = "dups-ok"
	AckClient AckMode = "client"
	// AckExactlyOnce is MQTT's QoS 2 (PUBREC/PUBREL/PUBCOMP): every
	// message delivered once and only once, across reconnects of a
	// persistent session. Brokers without such a handshake refuse it.
	AckExactlyOnce AckMode = "exactly-once"
)

// BodyType is the JMS message type whose codec builds the body.
type BodyType string

// Body types.
const (
	BodyBytes  BodyType = "bytes"
	BodyText   BodyType = "text"
	BodyMap    BodyType = "map"
	BodyStream BodyType = "stream"
	BodyObject BodyType = "object"
)

// SelectorSpan is how many of the 100 selector values (0..99) one subscriber
// selects: a contiguous fifth, as in the paper's selector cases.
const SelectorSpan = 20

// SelectorValues is the number of distinct values of the selector property.
const SelectorValues = 100

// Factors are the independent variables of one case: everything a driver
// needs to decide how to express the case on its broker.
type Factors struct {
	Publishers   int          `json:"publishers"`
	Subscribers  int          `json:"subscribers"`
	Topics       int          `json:"topics"`
	Model        Model        `json:"model"`
	Subscription Subscription `json:"subscription"`
	Delivery     Delivery     `json:"delivery"`
	Ack          AckMode      `json:"ack"`
	Selector     bool         `json:"selector"`
	Body         BodyType     `json:"body"`
	Size         int          `json:"size"` // message body bytes, pslab stamp included
	// TopicRoundRobin: every publisher sends to every topic in turn (Henjes
	// et al.'s topic experiments) instead of to topic i mod topics.
	TopicRoundRobin bool `json:"topic_round_robin,omitempty"`
	// TLS: every client connection of the case (publishers and
	// subscribers, not the lab's administration) is TLS, verified against
	// the lab's own CA (internal/labtls); brokers that cannot serve it
	// refuse the case.
	TLS bool `json:"tls,omitempty"`

	// The filter factor of Henjes et al. (see filter.go and docs/filters.md).
	// Messages carry a value 0..Values-1, round robin; Matching subscribers
	// per filter group match it, ExtraFilters subscribers look for values
	// no message carries.
	Filter        FilterKind  `json:"filter,omitempty"`
	FilterForm    FilterForm  `json:"filter_form,omitempty"`
	Values        int         `json:"values,omitempty"`
	Matching      int         `json:"matching,omitempty"`
	ExtraFilters  int         `json:"extra_filters,omitempty"`
	ExtraValues   ExtraValues `json:"extra_values,omitempty"`
	OrValues      int         `json:"or_values,omitempty"`
	AndTerms      int         `json:"and_terms,omitempty"`
	AndPosition   AndPosition `json:"and_position,omitempty"`
	AndProperties int         `json:"and_properties,omitempty"`
}

// String is a compact one-line description, e.g. "1/1/1 non-durable/non-persistent/auto bytes 100B".
func (f Factors) String() string {
	sel := ""
	if f.Selector {
		sel = " selector"
	}
	if f.TopicRoundRobin {
		sel += " round-robin"
	}
	if f.TLS {
		sel += " tls"
	}
	return fmt.Sprintf("%d/%d/%d %s/%s/%s %s %dB%s%s", f.Publishers, f.Subscribers, f.Topics,
		f.Subscription, f.Delivery, f.Ack, f.Body, f.Size, sel, f.filterString())
}

// Allowed values per factor, used by validation and by `pslab sweep`.
var (
	Models        = []Model{OneToOne, FewToMany, ManyToFew}
	Subscriptions = []Subscription{Durable, NonDurable}
	Deliveries    = []Delivery{Persistent, NonPersistent}
	AckModes      = []AckMode{AckAuto, AckDupsOK, AckClient, AckExactlyOnce}
	BodyTypes     = []BodyType{BodyBytes, BodyText, BodyMap, BodyStream, BodyObject}
)

func oneOf[T ~string](v T, allowed []T) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	return fmt.Errorf("unknown value %q (want one of %s)", string(v), strings.Join(names, ", "))
}
