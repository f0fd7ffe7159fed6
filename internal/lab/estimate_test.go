package lab

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/load"
	"pslab/internal/scenario"
)

// The estimate counts runs per network (3 to 10 repetitions of 2 cases on
// 2 brokers), divides a shaped network's runs over its labs, and lets a
// shaped link's drains run to their bound at the most.
func TestEstimate(t *testing.T) {
	c := scenario.Defaults()
	c.Warmup, c.Window, c.Drain = 2*time.Second, 10*time.Second, 4*time.Second
	a, b := c, c
	a.ID, b.ID = "01", "02"
	s := &scenario.Suite{Name: "est", Cases: []scenario.Case{a, b}}
	p := Plan{Suite: s, Brokers: []string{"nats", "artemis"}, Networks: []string{"wireline", "wifi-paper"},
		Cases: s.Cases, Reps: 3, CITarget: 0.05, MaxReps: 10, Parallel: 4}
	e := p.Estimate(Options{})
	require.Len(t, e.Networks, 2)
	wl, wifi := e.Networks[0], e.Networks[1]
	assert.Equal(t, 1, wl.Labs, "wireline runs alone")
	assert.Equal(t, 4, wifi.Labs)
	for _, ne := range e.Networks {
		assert.Equal(t, 12, ne.RunsLeast, ne.Network)
		assert.Equal(t, 40, ne.RunsMost, ne.Network)
	}
	assert.Equal(t, 12*time.Second+overheadEstimate, wl.PerRun)
	assert.Equal(t, wl.PerRun+4*time.Second, wl.PerRunMost)
	assert.Equal(t, wl.PerRunMost+load.DefaultMaxDrain, wifi.PerRunMost)
	assert.Equal(t, wl.SetUp+12*wl.PerRun, wl.Least)
	assert.Equal(t, wifi.SetUp+40*wifi.PerRunMost/4, wifi.Most)
	assert.Equal(t, 8*setUpEstimate, wifi.SetUp, "4 labs set up one after the other, per broker")
	assert.Equal(t, 24, e.RunsLeast)
	assert.Equal(t, wl.Most+wifi.Most, e.Most)
}
