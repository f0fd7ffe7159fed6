package nats

import (
	"fmt"
	"strings"

	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// This file maps the filter factor (scenario/filter.go) onto NATS
// (docs/filters.md has the table of every broker):
//
//	property  refused: the server matches subjects only, never headers
//	header    refused (as property)
//	subject   subject <root>.t<topic>.v<v>; subscription / consumer
//	          FilterSubjects on the subject of the filter's value
//
// OR-filters: one subscription per value on the subscriber's connection,
// or a consumer with one filter subject per value. AND-filters: a k-token
// subject <root>.t<topic>.P1.P2...Pk and a filter subject with the first
// and_terms tokens literal and '>' for the rest. <root> is the case's
// subject root (natsRoot: its prefix, hashed short).

// natsSubjectFor is the subject of a message with filtered value v (-1:
// none) on topic t: the selector's per-value subject, the filter's value
// or AND-token subject, or the topic's plain subject.
func natsSubjectFor(prefix string, f scenario.Factors, t, v int) string {
	switch {
	case f.Selector:
		return subject(prefix, t, v)
	case !f.Filtered():
		return subject(prefix, t, -1)
	case f.FilterForm == scenario.FormAnd:
		var b strings.Builder
		fmt.Fprintf(&b, "%s.t%d", natsRoot(prefix), t)
		for _, p := range f.AndProps(v) {
			fmt.Fprintf(&b, ".%d", p)
		}
		return b.String()
	}
	return fmt.Sprintf("%s.t%d.v%d", natsRoot(prefix), t, v)
}

// natsFilterSubjects are the subjects a filter subscriber subscribes to:
// one per value of its filter, or for an AND-filter one subject whose
// first and_terms tokens are literal and whose tail is '>'.
func natsFilterSubjects(prefix string, f scenario.Factors, t int, values []int) []string {
	if f.FilterForm == scenario.FormAnd {
		var b strings.Builder
		fmt.Fprintf(&b, "%s.t%d", natsRoot(prefix), t)
		props := f.AndProps(values[0])
		for _, p := range props[:f.AndTerms] {
			fmt.Fprintf(&b, ".%d", p)
		}
		if f.AndTerms < len(props) {
			b.WriteString(".>")
		}
		return []string{b.String()}
	}
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = natsSubjectFor(prefix, f, t, v)
	}
	return out
}

// natsFilterMechanism says how a NATS filter case is expressed.
func natsFilterMechanism(f scenario.Factors) string {
	if !f.Filtered() {
		return ""
	}
	sub := "core: a subscription on it; JetStream: a consumer whose FilterSubjects hold it"
	var s string
	switch f.FilterForm {
	case scenario.FormAnd:
		s = fmt.Sprintf("AND-filter as subject tokens: a message goes to the %d-token subject <root>.t0.P1...P%d (P%d = value+1, the others 0); "+
			"a subscriber's filter subject has the first %d tokens literal and '>' for the rest (%s)", f.AndProperties, f.AndProperties, f.AndPos(), f.AndTerms, sub)
	case scenario.FormOr:
		s = fmt.Sprintf("subject filter: a message goes to <root>.t0.v<value>; an OR-filter of %d values is %d subjects on one subscriber "+
			"(core: one subscription per subject on its connection; JetStream: one consumer with %d FilterSubjects): NATS has no OR over arbitrary values", f.OrValues, f.OrValues, f.OrValues)
	default:
		s = "subject filter: a message goes to <root>.t0.v<value>; a subscriber filters by subscribing to the subject of its value (" + sub + ")"
	}
	return s + "; nats-server matches a subject against its subscription trie (sublist, with a cache of recent results), not against each subscription in turn"
}

// natsHeaderRefusal is why NATS refuses property and header filters.
const natsHeaderRefusal = "nats-server routes by subject only and never evaluates message headers or properties " +
	"(filtering them would happen in the client, which is not a broker filter); use filter: subject"

// FilterRefusals is the NATS driver's filter capability table.
var FilterRefusals = driver.FilterRefusals{
	scenario.FilterProperty: natsHeaderRefusal,
	scenario.FilterHeader:   natsHeaderRefusal,
}
