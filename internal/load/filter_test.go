package load

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/brokers/artemis"
	"pslab/internal/driver"
	"pslab/internal/scenario"
	"pslab/internal/testbroker"
)

// filterCase is a rate-limited filter case (no slow-consumer losses on a
// busy machine): every message is due to exactly `matching` subscribers.
func filterCase(kind scenario.FilterKind, mutate func(f *scenario.Factors)) scenario.Case {
	c := quickCase(scenario.NonDurable, scenario.NonPersistent)
	c.Publishers, c.Topics = 2, 1
	c.Rate = 400
	c.Filter = kind
	c.FilterForm, c.Values, c.Matching = scenario.FormSimple, 1, 1
	mutate(&c.Factors)
	if c.FilterForm == scenario.FormAnd && c.AndProperties == 0 {
		c.AndProperties = scenario.DefaultAndProperties
	}
	c.Subscribers = c.FilterSubscribers()
	c.Model = c.DeriveModel()
	return c
}

// filterForms are the designs every filter kind is checked with.
var filterForms = []struct {
	name string
	set  func(f *scenario.Factors)
}{
	{"simple-r2-extra3-distinct", func(f *scenario.Factors) {
		f.Matching, f.ExtraFilters, f.ExtraValues = 2, 3, scenario.ExtraDistinct
	}},
	{"simple-r1-extra3-same", func(f *scenario.Factors) {
		f.ExtraFilters, f.ExtraValues = 3, scenario.ExtraSame
	}},
	{"simple-values4", func(f *scenario.Factors) { f.Values = 4 }},
	{"or-values6-by3", func(f *scenario.Factors) {
		f.FilterForm, f.Values, f.OrValues = scenario.FormOr, 6, 3
	}},
	{"and-first", func(f *scenario.Factors) {
		f.FilterForm, f.Values, f.AndTerms, f.AndPosition = scenario.FormAnd, 3, 4, scenario.AndFirst
	}},
	{"and-middle", func(f *scenario.Factors) {
		f.FilterForm, f.Values, f.AndTerms, f.AndPosition = scenario.FormAnd, 3, 5, scenario.AndMiddle
	}},
	{"and-last-all-terms", func(f *scenario.Factors) {
		f.FilterForm, f.Values, f.AndTerms, f.AndPosition = scenario.FormAnd, 3, 25, scenario.AndLast
	}},
}

// checkExact asserts the accounting of a filter case: every message was
// due to exactly `matching` subscribers, each got exactly those, none got
// anything else.
func checkExact(t *testing.T, c scenario.Case, res *Result) {
	t.Helper()
	n := res.Counts
	t.Logf("%s: sent %d expected %d received %d unexpected %d lost %d", c.Factors, n.Sent, n.Expected, n.Received, n.Unexpected, n.Lost)
	require.Positive(t, n.Sent)
	assert.Equal(t, n.Sent*int64(c.Matching), n.Expected, "each message is due to exactly r = matching subscribers")
	assert.Equal(t, n.Expected, n.Received, "every due delivery arrived")
	assert.Zero(t, n.Unexpected, "no delivery to a filter that does not match")
	assert.Zero(t, n.Lost)
	assert.Zero(t, n.DecodeErrors)
	assert.Zero(t, n.PublishErrors, res.FirstError)
}

func runFilterCase(t *testing.T, d driver.Driver, c scenario.Case, prefix string) {
	t.Helper()
	require.NoError(t, d.Supports(c.Factors))
	res, err := Run(context.Background(), Config{Case: c, Prefix: prefix, Driver: d, Seed: 5})
	require.NoError(t, err)
	require.NoError(t, d.Purge(context.Background(), prefix))
	checkExact(t, c, res)
}

// TestFilterSubjectsOnEmbeddedNATS checks exact counts for every filter
// form as NATS subject filters, on core NATS and (for two forms) JetStream.
func TestFilterSubjectsOnEmbeddedNATS(t *testing.T) {
	d := startNATS(t)
	for i, fc := range filterForms {
		t.Run("core/"+fc.name, func(t *testing.T) {
			c := filterCase(scenario.FilterSubject, fc.set)
			runFilterCase(t, d, c, fmt.Sprintf("pslab-p6f-core%d", i))
		})
	}
	for i, fc := range []int{0, 3, 5} {
		t.Run("jetstream/"+filterForms[fc].name, func(t *testing.T) {
			c := filterCase(scenario.FilterSubject, filterForms[fc].set)
			c.Delivery = scenario.Persistent
			runFilterCase(t, d, c, fmt.Sprintf("pslab-p6f-js%d", i))
		})
	}
	t.Run("property-refused", func(t *testing.T) {
		c := filterCase(scenario.FilterProperty, func(*scenario.Factors) {})
		err := d.Supports(c.Factors)
		require.ErrorIs(t, err, driver.ErrUnsupported)
		t.Logf("as a user sees it: %v", err)
	})
}

// TestTopicRoundRobinOnEmbeddedNATS: each publisher sends to every topic in
// turn; each subscriber gets exactly its topic's messages.
func TestTopicRoundRobinOnEmbeddedNATS(t *testing.T) {
	d := startNATS(t)
	c := quickCase(scenario.NonDurable, scenario.NonPersistent)
	c.Publishers, c.Topics, c.Subscribers = 2, 5, 10
	c.TopicRoundRobin, c.Rate = true, 500
	c.Model = c.DeriveModel()
	res, err := Run(context.Background(), Config{Case: c, Prefix: "pslab-p6f-rr", Driver: d, Seed: 1})
	require.NoError(t, err)
	n := res.Counts
	assert.Equal(t, 2*n.Sent, n.Expected, "10 subscribers on 5 topics: 2 per message")
	assert.Equal(t, n.Expected, n.Received)
	assert.Zero(t, n.Unexpected)
}

// startArtemisForLoad starts a test Artemis instance of its own, or skips
// when Artemis is not installed.
func startArtemisForLoad(t *testing.T) driver.Driver {
	t.Helper()
	_, _, d := testbroker.RunArtemis(t, artemis.ArtemisConfig{Instance: "test-load", HeapMB: 512})
	return d
}

// TestFiltersOnArtemis checks exact counts for property filters in every
// form and header filters in the forms a correlation id can express.
func TestFiltersOnArtemis(t *testing.T) {
	d := startArtemisForLoad(t)
	for i, fc := range filterForms {
		t.Run("property/"+fc.name, func(t *testing.T) {
			runFilterCase(t, d, filterCase(scenario.FilterProperty, fc.set), fmt.Sprintf("pslab-p6f-prop%d", i))
		})
		c := filterCase(scenario.FilterHeader, fc.set)
		if c.FilterForm == scenario.FormAnd {
			continue // a message has one correlation id (refused by the scenario)
		}
		t.Run("header/"+fc.name, func(t *testing.T) {
			runFilterCase(t, d, c, fmt.Sprintf("pslab-p6f-hdr%d", i))
		})
	}
	t.Run("subject-refused", func(t *testing.T) {
		err := d.Supports(filterCase(scenario.FilterSubject, func(*scenario.Factors) {}).Factors)
		require.ErrorIs(t, err, driver.ErrUnsupported)
		t.Logf("as a user sees it: %v", err)
	})
}
