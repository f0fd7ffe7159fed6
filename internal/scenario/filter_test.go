package scenario

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const filterSuite = `suite: f
defaults:
  publishers: 5
  capacity: on
cases:
  - id: grid
    filter: property
    matching: 2
    extra_filters: 3
  - id: or
    filter: header
    filter_form: or
    values: 20
    or_values: 4
  - id: and
    brokers: [artemis]
    filter: property
    filter_form: and
    values: 10
    and_terms: 5
    and_position: middle
  - id: plain
    subscribers: 3
  - id: rr
    publishers: 2
    topics: 5
    subscribers: 5
    topic_round_robin: on
`

func TestParseFilterCases(t *testing.T) {
	s, err := Parse("f.yaml", []byte(filterSuite), Options{})
	require.NoError(t, err)
	byID := map[string]Case{}
	for _, c := range s.Cases {
		byID[c.ID] = c
	}
	g := byID["grid"]
	assert.Equal(t, 5, g.Subscribers, "2 matching + 3 extra, derived")
	assert.Equal(t, FormSimple, g.FilterForm)
	assert.Equal(t, ExtraDistinct, g.ExtraValues, "default: different values, as the papers' grid")
	assert.True(t, g.Capacity)
	assert.Equal(t, FilterCounts{NFilters: 5, NDistinct: 4, RExpected: 2, Terms: 1}, g.Counts())
	assert.Equal(t, []int{0}, g.SubscriberFilterValues(1))
	assert.Equal(t, []int{1}, g.SubscriberFilterValues(2), "first extra looks for #1")
	assert.Equal(t, []int{3}, g.SubscriberFilterValues(4))

	o := byID["or"]
	assert.Equal(t, 5, o.Subscribers, "20 values, 4 per OR-filter: 5 subscribers (the papers' design)")
	assert.Equal(t, []int{8, 9, 10, 11}, o.SubscriberFilterValues(2))
	assert.Equal(t, FilterCounts{NFilters: 5, NDistinct: 5, RExpected: 1, Terms: 4}, o.Counts())

	a := byID["and"]
	assert.Equal(t, 10, a.Subscribers)
	assert.Equal(t, DefaultAndProperties, a.AndProperties)
	assert.Equal(t, 3, a.AndPos())
	props := a.AndProps(4)
	assert.Len(t, props, 25)
	assert.Equal(t, 5, props[2])
	assert.Equal(t, 0, props[0]+props[1]+props[3]+props[24])
	assert.True(t, a.ForBroker("artemis"))
	assert.False(t, a.ForBroker("nats"))

	p := byID["plain"]
	assert.False(t, p.Filtered())
	assert.Equal(t, FilterKind(""), p.Filter, "none stays the zero value: unfiltered records do not change")
	assert.Equal(t, FilterCounts{RExpected: 3}, p.Counts())
	assert.True(t, p.ForBroker("nats"))

	rr := byID["rr"]
	assert.True(t, rr.TopicRoundRobin)
	seen := map[int]bool{}
	for seq := uint64(1); seq <= 5; seq++ {
		seen[rr.TopicOfMessage(1, seq)] = true
	}
	assert.Len(t, seen, 5, "a round-robin publisher reaches every topic")
}

func TestAndPositions(t *testing.T) {
	f := Factors{FilterForm: FormAnd, AndTerms: 6, AndProperties: 25}
	for pos, want := range map[AndPosition]int{AndFirst: 1, AndMiddle: 3, AndLast: 6} {
		f.AndPosition = pos
		assert.Equal(t, want, f.AndPos(), pos)
	}
	f.AndTerms = 7
	f.AndPosition = AndMiddle
	assert.Equal(t, 4, f.AndPos(), "(n+1)/2 for odd n, as the papers")
}

func TestSelectorCountsUnchanged(t *testing.T) {
	f := Factors{Publishers: 10, Subscribers: 100, Topics: 10, Selector: true}
	c := f.Counts()
	assert.Equal(t, 10, c.NFilters)
	assert.InDelta(t, 2.0, c.RExpected, 1e-9, "10 subscribers per topic, 20 of 100 values each")
	assert.Equal(t, SelectorValues, f.MessageValues())
}

func TestFilterValidation(t *testing.T) {
	src := `suite: bad
cases:
  - filter: subject
    subscribers: 4
    matching: 2
  - filter: header
    filter_form: and
    and_terms: 3
  - filter: property
    filter_form: or
    values: 10
    or_values: 3
  - matching: 3
  - filter: property
    selector: on
  - filter: property
    filter_form: and
    and_terms: 30
  - filter: property
    filter_form: or
    values: 4
    or_values: 2
    extra_filters: 2
  - filter: sometimes
`
	lines := errorLines(t, src)
	want := []string{
		"bad.yaml:4: subscribers (4) must equal filter groups x matching + extra_filters = 1 x 2 + 0 = 2",
		"bad.yaml:7: an AND-filter needs several properties",
		"bad.yaml:12: values (10) must be a multiple of or_values (3)",
		"bad.yaml:13: matching needs a filter",
		"bad.yaml:14: filter and selector are two ways to filter",
		"bad.yaml:18: and_terms must be 1..and_properties (25), got 30",
		"bad.yaml:23: extra_filters (non-matching subscribers) are defined for simple filters only",
		"bad.yaml:24: filter: unknown value \"sometimes\"",
	}
	joined := strings.Join(lines, "\n")
	for _, w := range want {
		assert.Contains(t, joined, w)
	}
}

func TestFilterViaSetField(t *testing.T) {
	s, err := SweepSuite("cli", []Setting{{"filter", "subject"}, {"publishers", "5"}},
		[]Vary{{"matching", []string{"1", "4"}}, {"extra_filters", []string{"0", "10"}}})
	require.NoError(t, err)
	require.Len(t, s.Cases, 4)
	assert.Equal(t, 14, s.Cases[3].Subscribers)
	assert.Equal(t, 14, s.Cases[3].Counts().NFilters)
	assert.Equal(t, 1, s.Cases[3].Counts().NDistinct-10, "4 matching share one filter, plus 10 distinct extras")
}

func TestCaseSweep(t *testing.T) {
	src := `suite: cs
defaults:
  publishers: 5
cases:
  - {id: a, name: all, filter: subject, sweep: {matching: [2, 5]}}
  - {id: b, filter: property, extra_values: same, sweep: {extra_filters: [1, 4]}}
  - {id: c}
`
	s, err := Parse("cs.yaml", []byte(src), Options{})
	require.NoError(t, err)
	var ids, names []string
	for _, c := range s.Cases {
		ids = append(ids, c.ID)
		names = append(names, c.Name)
	}
	assert.Equal(t, []string{"a.01", "a.02", "b.01", "b.02", "c"}, ids)
	assert.Equal(t, "all, matching=5", names[1])
	assert.Equal(t, 5, s.Cases[3].Subscribers, "1 matching + 4 extra")
	assert.Equal(t, 2, s.Cases[3].Counts().NDistinct, "#0 and the one other value")
}
