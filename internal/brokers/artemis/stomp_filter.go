package artemis

import (
	"fmt"
	"strconv"
	"strings"

	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// This file maps the filter factor (scenario/filter.go) onto Artemis over
// STOMP (docs/filters.md has the table of every broker):
//
//	property  SEND header flt:<v> (a string property); selector flt = '<v>'
//	header    SEND header correlation-id:c<v> (JMSCorrelationID);
//	          selector JMSCorrelationID = 'c<v>'
//	subject   refused: Artemis filters with selectors; an address per
//	          value is the topics experiment
//
// OR-filters: one selector with OR-ed terms. AND-filters: k properties
// p1..pk on every message and a selector p1 = '..' AND ... of and_terms
// terms.

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

// FilterRefusals is the Artemis STOMP driver's filter capability table.
var FilterRefusals = driver.FilterRefusals{
	scenario.FilterSubject: "Artemis filters with JMS selectors on message properties and headers; " +
		"a subject (address) per value is what the topics experiment measures; use filter: property or header",
}
