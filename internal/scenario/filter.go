package scenario

import (
	"fmt"
	"strings"
)

// FilterKind is how a subscriber's filter is expressed (Henjes et al.'s
// filter factor). Which broker can express which kind is the driver's
// decision (Driver.Supports): property and header on Artemis, subject on
// NATS.
type FilterKind string

// Filter kinds.
const (
	FilterNone     FilterKind = "none"     // no filters (the default)
	FilterProperty FilterKind = "property" // application property selector
	FilterHeader   FilterKind = "header"   // header field (correlation-id style) selector
	FilterSubject  FilterKind = "subject"  // subject per value, subscriptions on subjects
)

// FilterForm is the shape of each filter expression.
type FilterForm string

// Filter forms.
const (
	FormSimple FilterForm = "simple" // one value per filter
	FormOr     FilterForm = "or"     // or_values values per filter, OR-ed
	FormAnd    FilterForm = "and"    // and_terms terms over the message's and_properties properties, AND-ed
)

// ExtraValues says what the extra (non-matching) filters look for.
type ExtraValues string

// Extra filter values.
const (
	ExtraSame     ExtraValues = "same"     // all look for one other value
	ExtraDistinct ExtraValues = "distinct" // each looks for a different value
)

// AndPosition is where the distinguishing term sits in an AND-filter.
type AndPosition string

// AND-filter positions (paper 000 Section 4.8, experiments 1-3).
const (
	AndFirst  AndPosition = "first"
	AndMiddle AndPosition = "middle"
	AndLast   AndPosition = "last"
)

// Allowed values.
var (
	FilterKinds  = []FilterKind{FilterNone, FilterProperty, FilterHeader, FilterSubject}
	FilterForms  = []FilterForm{FormSimple, FormOr, FormAnd}
	ExtraKinds   = []ExtraValues{ExtraSame, ExtraDistinct}
	AndPositions = []AndPosition{AndFirst, AndMiddle, AndLast}
)

// DefaultAndProperties is k, the number of properties every message of an
// AND-filter case carries (the papers' k = 25), so that the message length
// does not change with the filter length.
const DefaultAndProperties = 25

// MaxFilterValues bounds the values messages may carry (the stamp holds
// the value in 16 bits, and every value is a filter on the broker).
const MaxFilterValues = 10000

// Filtered reports whether the case uses the filter factor.
func (f Factors) Filtered() bool { return f.Filter != "" && f.Filter != FilterNone }

// FilterGroups is how many different matching filters there are: one per
// value for simple and AND filters, values/or_values for OR-filters.
func (f Factors) FilterGroups() int {
	if f.FilterForm == FormOr && f.OrValues > 0 {
		return f.Values / f.OrValues
	}
	return f.Values
}

// FilterSubscribers is the number of subscribers a filter case has:
// matching subscribers per filter group, plus the extra filters.
func (f Factors) FilterSubscribers() int {
	return f.FilterGroups()*f.Matching + f.ExtraFilters
}

// MessageValues is the number of values a message's filtered attribute
// takes: the selector's 100, the filter's values (round robin), or 1.
func (f Factors) MessageValues() int {
	switch {
	case f.Selector:
		return SelectorValues
	case f.Filtered():
		return f.Values
	}
	return 1
}

// SubscriberFilterValues lists the values in subscriber j's filter
// expression (filter cases only). Matching subscribers come first: j is in
// filter group j mod groups; extra subscriber e = j - matching subscribers
// looks for value Values (same) or Values + e (distinct), which no message
// carries. Values at or above Values never match.
func (f Factors) SubscriberFilterValues(j int) []int {
	groups := f.FilterGroups()
	nMatch := groups * f.Matching
	if j >= nMatch {
		e := j - nMatch
		base := f.Values
		if f.ExtraValues != ExtraSame {
			base += e
		}
		return []int{base}
	}
	g := j % groups
	if f.FilterForm == FormOr {
		vals := make([]int, f.OrValues)
		for i := range vals {
			vals[i] = g*f.OrValues + i
		}
		return vals
	}
	return []int{g}
}

// AndPos is the 1-based position of the distinguishing term in an AND
// filter of n terms: 1, n, or (n+1)/2 (the papers' middle for odd n; for
// even n they split the subscribers between n/2 and n/2+1, pslab takes n/2).
func (f Factors) AndPos() int {
	switch f.AndPosition {
	case AndFirst:
		return 1
	case AndLast:
		return f.AndTerms
	}
	return (f.AndTerms + 1) / 2
}

// AndProps returns the properties P1..Pk of a message with value v in an
// AND-filter case: P_pos = v+1 (the papers' #j, j >= 1), every other 0.
func (f Factors) AndProps(v int) []int {
	props := make([]int, f.AndProperties)
	props[f.AndPos()-1] = v + 1
	return props
}

// FilterCounts are what the service-time models need from a case.
type FilterCounts struct {
	// NFilters is the number of filters each message is checked against:
	// the filtered subscribers of its topic.
	NFilters int `json:"n_fltr"`
	// NDistinct is how many of them differ from each other.
	NDistinct int `json:"n_diff"`
	// RExpected is the replication grade the design gives: deliveries due
	// per published message.
	RExpected float64 `json:"r_expected"`
	// Terms is the number of terms (values) in each filter expression: 1
	// for simple filters, or_values, and_terms.
	Terms int `json:"terms,omitempty"`
}

// Counts returns the case's filter counts. For the paper's selector (a
// random range of 20 of 100 values per subscriber) every subscriber of a
// topic has a filter, assumed different, and 20 % of them match.
func (f Factors) Counts() FilterCounts {
	perTopic := float64(f.Subscribers) / float64(max(f.Topics, 1))
	switch {
	case f.Selector:
		n := (f.Subscribers + max(f.Topics, 1) - 1) / max(f.Topics, 1)
		return FilterCounts{NFilters: n, NDistinct: n, RExpected: perTopic * SelectorSpan / SelectorValues, Terms: 1}
	case !f.Filtered():
		return FilterCounts{RExpected: perTopic}
	}
	c := FilterCounts{NFilters: f.Subscribers, RExpected: float64(f.Matching), Terms: 1}
	c.NDistinct = f.FilterGroups()
	if f.ExtraFilters > 0 {
		if f.ExtraValues == ExtraSame {
			c.NDistinct++
		} else {
			c.NDistinct += f.ExtraFilters
		}
	}
	switch f.FilterForm {
	case FormOr:
		c.Terms = f.OrValues
	case FormAnd:
		c.Terms = f.AndTerms
	}
	return c
}

// filterString is the filter part of Factors.String.
func (f Factors) filterString() string {
	if !f.Filtered() {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, " filter=%s/%s values=%d r=%d", f.Filter, f.FilterForm, f.Values, f.Matching)
	if f.ExtraFilters > 0 {
		fmt.Fprintf(&b, " +%d %s", f.ExtraFilters, f.ExtraValues)
	}
	switch f.FilterForm {
	case FormOr:
		fmt.Fprintf(&b, " or=%d", f.OrValues)
	case FormAnd:
		fmt.Fprintf(&b, " and=%d@%s/k%d", f.AndTerms, f.AndPosition, f.AndProperties)
	}
	return b.String()
}

// normalizeFilter fills the filter defaults of a filter case (form simple,
// one value, one matching subscriber per value, distinct extra values, k =
// 25 properties for AND) and derives the subscribers when not given.
func (c *Case) normalizeFilter() {
	if !c.Filtered() {
		c.Filter = "" // none is the zero value: unfiltered records stay as they were
		return
	}
	if c.FilterForm == "" {
		c.FilterForm = FormSimple
	}
	if c.Values == 0 {
		c.Values = 1
	}
	if c.Matching == 0 {
		c.Matching = 1
	}
	if c.ExtraValues == "" && c.ExtraFilters > 0 {
		c.ExtraValues = ExtraDistinct
	}
	if c.FilterForm == FormAnd {
		if c.AndProperties == 0 {
			c.AndProperties = DefaultAndProperties
		}
		if c.AndPosition == "" {
			c.AndPosition = AndFirst
		}
	}
	if !c.subscribersGiven && c.Values > 0 && c.Matching > 0 && (c.FilterForm != FormOr || c.OrValues > 0) {
		c.Subscribers = c.FilterSubscribers()
	}
}

// validateFilter checks the filter factor; run after normalizeFilter.
func (c *Case) validateFilter(add func(field, format string, a ...any)) {
	f := c.Factors
	if !f.Filtered() {
		for _, x := range []struct {
			name string
			set  bool
		}{
			{"filter_form", f.FilterForm != ""}, {"values", f.Values != 0}, {"matching", f.Matching != 0},
			{"extra_filters", f.ExtraFilters != 0}, {"extra_values", f.ExtraValues != ""}, {"or_values", f.OrValues != 0},
			{"and_terms", f.AndTerms != 0}, {"and_position", f.AndPosition != ""}, {"and_properties", f.AndProperties != 0},
		} {
			if x.set {
				add(x.name, "%s needs a filter: set filter to property, header or subject", x.name)
			}
		}
		return
	}
	if f.Selector {
		add("filter", "filter and selector are two ways to filter; use one (selector is Gaddah & Kunz's 20-of-100 range)")
	}
	if f.Topics != 1 {
		add("filter", "filter cases use one topic (the papers' filter experiments do), got topics %d", f.Topics)
	}
	if f.Values < 1 || f.Values > MaxFilterValues {
		add("values", "values must be 1..%d, got %d", MaxFilterValues, f.Values)
	}
	if f.Matching < 1 {
		add("matching", "matching must be at least 1 (subscribers per value whose filter matches), got %d", f.Matching)
	}
	if f.ExtraFilters < 0 {
		add("extra_filters", "extra_filters must not be negative, got %d", f.ExtraFilters)
	}
	if f.ExtraFilters > 0 && f.FilterForm != FormSimple {
		add("extra_filters", "extra_filters (non-matching subscribers) are defined for simple filters only, not %s", f.FilterForm)
	}
	if f.Values+max(f.ExtraFilters, 1) > MaxFilterValues {
		add("extra_filters", "values + extra_filters must stay within %d", MaxFilterValues)
	}
	switch f.FilterForm {
	case FormOr:
		if f.OrValues < 1 {
			add("or_values", "an OR-filter needs or_values (values per filter) of at least 1")
		} else if f.Values%f.OrValues != 0 {
			add("or_values", "values (%d) must be a multiple of or_values (%d): every value in exactly one OR-filter", f.Values, f.OrValues)
		}
	default:
		if f.OrValues != 0 {
			add("or_values", "or_values needs filter_form or")
		}
	}
	if f.FilterForm == FormAnd {
		if f.Filter == FilterHeader {
			add("filter_form", "an AND-filter needs several properties; a message has one correlation id (use filter property)")
		}
		if f.AndTerms < 1 || f.AndTerms > f.AndProperties {
			add("and_terms", "and_terms must be 1..and_properties (%d), got %d", f.AndProperties, f.AndTerms)
		}
		if f.AndProperties < 1 || f.AndProperties > 100 {
			add("and_properties", "and_properties must be 1..100, got %d", f.AndProperties)
		}
	} else if f.AndTerms != 0 || f.AndPosition != "" || f.AndProperties != 0 {
		add("and_terms", "and_terms, and_position and and_properties need filter_form and")
	}
	if c.subscribersGiven && f.Values > 0 && c.Subscribers != f.FilterSubscribers() {
		add("subscribers", "subscribers (%d) must equal filter groups x matching + extra_filters = %d x %d + %d = %d; leave subscribers out to derive it",
			c.Subscribers, f.FilterGroups(), f.Matching, f.ExtraFilters, f.FilterSubscribers())
	}
}
