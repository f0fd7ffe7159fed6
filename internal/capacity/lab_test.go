package capacity

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/brokers"
	"pslab/internal/brokers/fake"
	"pslab/internal/lab"
	"pslab/internal/results"
	"pslab/internal/scenario"
)

// fakeParams are short probes for the in-memory fake broker.
func fakeParams() Params {
	p := DefaultParams()
	p.Phases["wireline"] = Phases{Warmup: 100 * time.Millisecond, Window: 600 * time.Millisecond, Drain: 500 * time.Millisecond}
	p.DefaultStart, p.Resolution, p.PilotResolution, p.Target = 1500, 0.05, 0.1, 0.3
	p.MinSearches, p.MaxSearches = 2, 2
	p.Loads, p.LatencyMinReps, p.LatencyMaxReps = []float64{0.5}, 2, 2
	p.BusyAttempts = 1 // the tests of other packages keep the machine busy
	return p
}

// runFake runs the capacity policy on a fake broker of the given service
// rate into out, with finished records of an earlier run to resume.
func runFake(t *testing.T, rate float64, out string, finished []results.Record) []results.Record {
	t.Helper()
	reg := &brokers.Registry{}
	reg.Register(fake.Descriptor(fake.Knobs{ServiceRate: rate}))
	c := scenario.Defaults()
	c.ID, c.Name = "01", "fake 1/1/1"
	s := &scenario.Suite{Name: "capfake", File: "capfake.yaml", Brokers: []string{fake.Name}, Networks: []string{"wireline"}, Reps: 1, Cases: []scenario.Case{c}}
	var log bytes.Buffer
	o := lab.Options{Out: out, Log: &log, Registry: reg, LabName: "capfk", Policy: Policy{P: fakeParams()}, Finished: finished}
	plan, err := lab.MakePlan(s, o)
	require.NoError(t, err)
	sum, err := lab.Run(context.Background(), plan, o)
	require.NoError(t, err, log.String())
	assert.Zero(t, sum.Failed, log.String())
	recs, err := results.Read(out)
	require.NoError(t, err)
	return recs
}

// TestCapacityOnFakeBroker: on the in-memory fake with a service capacity
// of 2000 msg/s, the search finds it (within a wide ratio: the fake is
// timed by this process's scheduler), names the broker as the bound (by
// elimination: the fake has no CPU of its own), writes every probe as a
// record with its offered load, verdict and why, and a resume from part
// of the records runs only what is missing.
func TestCapacityOnFakeBroker(t *testing.T) {
	const rate = 2000
	out := t.TempDir()
	recs := runFake(t, rate, out, nil)
	p := fakeParams()
	rs := p.Results(recs)
	require.Len(t, rs, 1)
	r := rs[0]
	assert.True(t, r.Done)
	assert.Greater(t, r.Capacity, rate/2.0, r.Text)
	assert.Less(t, r.Capacity, rate*2.0, r.Text)
	assert.Equal(t, BoundBroker, r.Bound.Name, r.Bound.Why)
	assert.Equal(t, 2, r.Searches)
	require.Len(t, r.Levels, 1)
	assert.GreaterOrEqual(t, r.Levels[0].N, 2)
	for _, rec := range recs {
		assert.Empty(t, rec.Error)
		require.NotNil(t, rec.Probe, rec.Rep)
		assert.Contains(t, []results.Mode{results.ModeCapacityProbe, results.ModeFixedLoad}, rec.Mode)
		assert.Positive(t, rec.Probe.OfferedPerS)
		assert.NotEmpty(t, rec.Probe.Why)
		assert.Len(t, rec.Probe.Checks, 5)
		require.NotNil(t, rec.LatencyFloor, "every record carries the run's latency floor")
		assert.Positive(t, rec.LatencyFloor.Samples)
		assert.NotEmpty(t, rec.BrokerConfig, "the fake says its configuration")
		assert.InDelta(t, rec.Settings.Rate, rec.Probe.OfferedPerS, 1e-6, "1 publisher")
	}

	// Resume without the last two runs: the rest is kept, those two run
	// again, and the row ends done.
	out2 := t.TempDir()
	b, err := results.Create(out2)
	require.NoError(t, err)
	keep := recs[:len(recs)-2]
	for i := range keep {
		require.NoError(t, b.Append(&keep[i]))
	}
	again := runFake(t, rate, out2, keep)
	for i := range keep {
		assert.Equal(t, recs[i].Started, again[i].Started, "record %d kept", i)
	}
	assert.Len(t, again, len(recs), "the same policy needs the same number of runs")
	r2 := p.Results(again)[0]
	assert.True(t, r2.Done)
	_, err = os.Stat(filepath.Join(out2, results.SupersededFile))
	assert.True(t, os.IsNotExist(err), "same build and configuration: nothing set aside")
}
