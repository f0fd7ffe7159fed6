package driver

import (
	"fmt"
	"strconv"
	"strings"

	"pslab/internal/scenario"
)

// This file maps the filter factor (scenario/filter.go) onto each broker:
//
//	kind      NATS                                   Artemis over STOMP
//	property  refused: the server matches subjects   SEND header flt:<v> (a string
//	          only, never headers                    property); selector flt = '<v>'
//	header    refused (as property)                  SEND header correlation-id:c<v>
//	                                                 (JMSCorrelationID); selector
//	                                                 JMSCorrelationID = 'c<v>'
//	subject   subject <root>.t<topic>.v<v>;          refused: Artemis filters with
//	          subscription / consumer FilterSubjects selectors; an address per value is
//	          on the subject of the filter's value   the topics experiment
//
// OR-filters: one selector with OR-ed terms (Artemis); one subscription per
// value on the subscriber's connection, or a consumer with one filter
// subject per value (NATS). AND-filters: k properties p1..pk on every
// message and a selector p1 = '..' AND ... of and_terms terms (Artemis); a
// k-token subject <root>.t<topic>.P1.P2...Pk and a filter subject with
// the first and_terms tokens literal and '>' for the rest (NATS). <root> is
// the case's subject root (natsRoot: its prefix, hashed short).

// filterProp is the application property of property filters.
const filterProp = "flt"

// stompFilterHeaders returns the SEND header lines of a message with
// filter value v (filter cases only).
func stompFilterHeaders(f scenario.Factors, v int) []byte {
	var b []byte
	switch {
	case f.FilterForm == scenario.FormAnd:
		for i, p := range f.AndProps(v) {
			b = append(b, 'p')
			b = strconv.AppendInt(b, int64(i+1), 10)
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(p), 10)
			b = append(b, '\n')
		}
	case f.Filter == scenario.FilterHeader:
		b = append(b, "correlation-id:c"...)
		b = strconv.AppendInt(b, int64(v), 10)
		b = append(b, '\n')
	default:
		b = append(b, filterProp+":"...)
		b = strconv.AppendInt(b, int64(v), 10)
		b = append(b, '\n')
	}
	return b
}

// stompFilterSelector is the SUBSCRIBE selector of a filter subscriber
// whose filter holds values.
func stompFilterSelector(f scenario.Factors, values []int) string {
	if f.FilterForm == scenario.FormAnd {
		props := f.AndProps(values[0])
		terms := make([]string, f.AndTerms)
		for i := range terms {
			terms[i] = fmt.Sprintf("p%d = '%d'", i+1, props[i])
		}
		return strings.Join(terms, " AND ")
	}
	terms := make([]string, len(values))
	for i, v := range values {
		if f.Filter == scenario.FilterHeader {
			terms[i] = fmt.Sprintf("JMSCorrelationID = 'c%d'", v)
		} else {
			terms[i] = fmt.Sprintf("%s = '%d'", filterProp, v)
		}
	}
	return strings.Join(terms, " OR ")
}

// stompFilterMechanism says how an Artemis filter case is expressed.
func stompFilterMechanism(f scenario.Factors) string {
	if !f.Filtered() {
		return ""
	}
	var s string
	switch {
	case f.FilterForm == scenario.FormAnd:
		s = fmt.Sprintf("AND-filter on application properties: every message carries k = %d SEND headers p1..p%d (string properties), "+
			"p%d = '<value+1>' and the others '0'; each subscriber's SUBSCRIBE selector is p1 = '..' AND ... AND p%d = '..' "+
			"(%d terms, the distinguishing one at position %d, %s)", f.AndProperties, f.AndProperties, f.AndPos(), f.AndTerms, f.AndTerms, f.AndPos(), f.AndPosition)
	case f.Filter == scenario.FilterHeader:
		s = "header filter: SEND header correlation-id:c<value> (Artemis stores it as the message's JMSCorrelationID); SUBSCRIBE selector JMSCorrelationID = 'c<value>'"
	default:
		s = "application property filter: SEND header " + filterProp + ":<value> (a string property); SUBSCRIBE selector " + filterProp + " = '<value>'"
	}
	if f.FilterForm == scenario.FormOr {
		s += fmt.Sprintf("; OR-filter: one selector of %d terms joined by OR per subscriber", f.OrValues)
	}
	return s + "; Artemis evaluates each subscription queue's selector against every message routed to the address"
}

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

// FilterRefusals is a broker's capability table for the filter factor:
// for each filter kind it cannot express, why not. Kinds not in it are
// supported.
type FilterRefusals map[scenario.FilterKind]string

// Check is the reason the broker cannot express f's filters, "" when it can.
func (r FilterRefusals) Check(f scenario.Factors) string {
	if why, ok := r[f.Filter]; ok {
		return fmt.Sprintf("filter %s: %s", f.Filter, why)
	}
	return ""
}

// natsHeaderRefusal is why NATS refuses property and header filters.
const natsHeaderRefusal = "nats-server routes by subject only and never evaluates message headers or properties " +
	"(filtering them would happen in the client, which is not a broker filter); use filter: subject"

// NATSFilterRefusals is the NATS driver's filter capability table.
var NATSFilterRefusals = FilterRefusals{
	scenario.FilterProperty: natsHeaderRefusal,
	scenario.FilterHeader:   natsHeaderRefusal,
}

// STOMPFilterRefusals is the Artemis STOMP driver's filter capability table.
var STOMPFilterRefusals = FilterRefusals{
	scenario.FilterSubject: "Artemis filters with JMS selectors on message properties and headers; " +
		"a subject (address) per value is what the topics experiment measures; use filter: property or header",
}
