package henjes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/lab"
	"pslab/internal/load"
	"pslab/internal/results"
	"pslab/internal/scenario"
)

func TestParseExperiments(t *testing.T) {
	all, err := ParseExperiments("all")
	require.NoError(t, err)
	assert.Equal(t, Experiments, all)
	some, err := ParseExperiments("grid, or")
	require.NoError(t, err)
	assert.Equal(t, []string{"grid", "or"}, some)
	assert.Equal(t, []string{filepath.Join("sc", "henjes-grid.yaml"), filepath.Join("sc", "henjes-or.yaml")}, Files("sc", some))
	_, err = ParseExperiments("grid,nonsense")
	assert.ErrorContains(t, err, `unknown experiment "nonsense"`)
}

// recordGrid writes into bundle one record per (filters, replication)
// whose broker CPU per received message is 10 µs + 1 µs per filter + 4 µs
// per copy: a demand the models can be fitted to. The broker never nears
// saturation, so no capacity fit is possible.
func recordGrid(bundle string) error {
	b, err := results.Create(bundle)
	if err != nil {
		return err
	}
	for i, nf := range []int{1, 5, 20, 40, 80} {
		for j, r := range []int{1, 2, 8} {
			const pub = 2000.0
			demand := (10 + float64(nf) + 4*float64(r)) * 1e-6
			rec := results.Record{RunID: "t", CaseID: fmt.Sprintf("%d.%d", i, j), Rep: 1, Broker: "nats",
				Network:   results.Network{Profile: "wireline", Backend: "none"},
				Factors:   scenario.Factors{Publishers: 1, Subscribers: r, Topics: 1},
				Filter:    &results.FilterInfo{Kind: "subject", FilterCounts: scenario.FilterCounts{NFilters: nf, NDistinct: nf}},
				Result:    &load.Result{PubTput: pub, SubTput: float64(r) * pub, Counts: load.Counts{ReceivedInWindow: 1, Expected: 1}},
				Resources: &results.Resources{BrokerCPUPct: 100 * demand * pub, ClientCPUPct: 5, Cores: 2}}
			if err := b.Append(&rec); err != nil {
				return err
			}
		}
	}
	return nil
}

func plans(names ...string) []lab.Plan {
	var ps []lab.Plan
	for _, n := range names {
		ps = append(ps, lab.Plan{Suite: &scenario.Suite{Name: "henjes-" + n}})
	}
	return ps
}

// TestMeasureFitsWhatWasMeasured: every plan is run into its own bundle;
// a failed experiment is reported at the end, after the fits and
// REPORT.md have been written from what was measured; a fit that is not
// possible (capacity: nothing saturated) is written as a refusal.
func TestMeasureFitsWhatWasMeasured(t *testing.T) {
	out := t.TempDir()
	var ran []string
	var stdout, stderr bytes.Buffer
	err := Measure(context.Background(), plans("grid", "or"), Options{
		Experiments: []string{"grid", "or"}, Brokers: []string{"nats"}, Out: out, Command: "pslab model measure --test",
		Run: func(p lab.Plan, bundle string) error {
			ran = append(ran, bundle)
			if p.Suite.Name == "henjes-or" { // the lab records a failed case run, and says so
				b, err := results.Create(bundle)
				require.NoError(t, err)
				require.NoError(t, b.Append(&results.Record{RunID: "t", CaseID: "01", Rep: 1, Broker: "nats", Error: "connect refused"}))
				return errors.New("1 case run(s) failed")
			}
			return recordGrid(bundle)
		},
		Stdout: &stdout, Stderr: &stderr,
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "henjes-or: 1 case run(s) failed")
	assert.Equal(t, []string{filepath.Join(out, "henjes-grid"), filepath.Join(out, "henjes-or")}, ran)

	report, rerr := os.ReadFile(filepath.Join(out, "REPORT.md"))
	require.NoError(t, rerr)
	for _, want := range []string{"# Henjes et al. on nats", "Command: `pslab model measure --test`", "Experiments: grid, or.",
		"## Response demand", "15 of 15 runs used (skipped: none)",
		"| nats | wireline | subject | 15 | 10 ± ", "## Response capacity", "No fit: none of the 15 records can be used"} {
		assert.Contains(t, string(report), want)
	}
	demand, derr := os.ReadFile(filepath.Join(out, "fit-demand.md"))
	require.NoError(t, derr)
	assert.Contains(t, string(demand), "Best form:")
	assert.FileExists(t, filepath.Join(out, "fit-demand.json"))
	capacity, cerr := os.ReadFile(filepath.Join(out, "fit-capacity.md"))
	require.NoError(t, cerr)
	assert.Contains(t, string(capacity), "No fit:")
	assert.NoFileExists(t, filepath.Join(out, "fit-capacity.json"), "a refused fit writes no parameters")
	// The records carry no filter factors, so the figures are skipped, each
	// with its reason: the fitted group reached the plotting.
	assert.Contains(t, stderr.String(), "plot skipped: filters-nats-wireline-subject: no joint-grid records")
	assert.DirExists(t, filepath.Join(out, "plots"))
	assert.Contains(t, stdout.String(), "results in "+out)
	assert.Contains(t, stderr.String(), "measured in ")
}

// TestMeasureStopsWhenCancelled: a run that fails because the context
// ended stops the workflow: nothing is fitted or written.
func TestMeasureStopsWhenCancelled(t *testing.T) {
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	runs := 0
	err := Measure(ctx, plans("grid", "or"), Options{Experiments: []string{"grid", "or"}, Out: out,
		Run: func(lab.Plan, string) error {
			runs++
			cancel()
			return context.Canceled
		},
		Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{},
	})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, runs)
	entries, _ := os.ReadDir(out)
	assert.Empty(t, entries)
	assert.False(t, strings.Contains(err.Error(), "henjes-grid"), "the cancelled run's own error, not a summary")
}
