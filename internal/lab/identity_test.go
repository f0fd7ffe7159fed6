package lab

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/brokers"
	"pslab/internal/brokers/fake"
	"pslab/internal/results"
	"pslab/internal/scenario"
)

// resumeOnFake runs two repetitions of a case on the fake into out, with
// finished records to resume (written into out first).
func resumeOnFake(t *testing.T, out string, finished []results.Record, force bool) []results.Record {
	t.Helper()
	b, err := results.Create(out)
	require.NoError(t, err)
	for i := range finished {
		require.NoError(t, b.Append(&finished[i]))
	}
	reg := &brokers.Registry{}
	reg.Register(fake.Descriptor(fake.Knobs{}))
	s := &scenario.Suite{Name: "t", File: "t.yaml", Brokers: []string{fake.Name}, Networks: []string{"wireline"}, Reps: 2,
		Cases: []scenario.Case{fakeCase("c", scenario.NonDurable)}}
	var log bytes.Buffer
	o := Options{Out: out, Log: &log, Registry: reg, LabName: "labid", Finished: finished, ForceMixed: force}
	p, err := MakePlan(s, o)
	require.NoError(t, err)
	_, err = Run(context.Background(), p, o)
	require.NoError(t, err, log.String())
	recs, err := results.Read(out)
	require.NoError(t, err)
	return recs
}

// TestOneConfigurationPerRun: every record carries the broker's
// configuration hash and the paper mode; a resume finds a finished
// repetition of another pslab build or broker configuration, sets it
// aside (records.superseded.jsonl) and runs its row again; with
// ForceMixed (--force) it counts, and the row mixes.
func TestOneConfigurationPerRun(t *testing.T) {
	first := resumeOnFake(t, t.TempDir(), nil, false)
	require.Len(t, first, 2)
	for _, r := range first {
		assert.Equal(t, results.ModePaper, r.Mode)
		assert.NotEmpty(t, r.BrokerConfig)
		assert.Equal(t, Version(), r.Versions.Pslab)
		assert.Nil(t, r.LatencyFloor, "the floor is measured for policies only")
	}
	assert.Equal(t, first[0].BrokerConfig, first[1].BrokerConfig)

	for name, edit := range map[string]func(*results.Record){
		"build":  func(r *results.Record) { r.Versions.Pslab = "0123456789ab" },
		"config": func(r *results.Record) { r.BrokerConfig = "feedfacefeedface" },
	} {
		t.Run(name, func(t *testing.T) {
			old := first[0]
			edit(&old)
			out := t.TempDir()
			recs := resumeOnFake(t, out, []results.Record{old}, false)
			require.Len(t, recs, 2, "both repetitions of this build and configuration")
			for _, r := range recs {
				assert.Equal(t, first[0].IdentityOf(), r.IdentityOf())
			}
			assert.Equal(t, []int{2, 3}, []int{recs[0].Rep, recs[1].Rep}, "the set-aside record keeps its number")
			aside, err := results.Read(filepath.Join(out, results.SupersededFile))
			require.NoError(t, err)
			require.Len(t, aside, 1)
			assert.Equal(t, old.IdentityOf(), aside[0].IdentityOf())

			forced := resumeOnFake(t, t.TempDir(), []results.Record{old}, true)
			require.Len(t, forced, 2, "forced: the other one counts, one more runs")
			assert.NotEqual(t, forced[0].IdentityOf(), forced[1].IdentityOf(), "the row mixes")
		})
	}
}

// TestVersionTellsBuildsApart: a build without version control stamping
// (as go test's) is named by a hash of its executable, not a bare
// "devel" that every such build shares.
func TestVersionTellsBuildsApart(t *testing.T) {
	assert.Regexp(t, `^([0-9a-f]{12}(\+dirty)?|devel-[0-9a-f]{12})$`, Version())
	assert.Equal(t, Version(), Version())
}
