package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/results"
)

// TestCapacityDryRunBuildsNothing: pslab capacity --dry-run prints the
// rows and the bounds of the machine time, and runs nothing: no output
// directory, no namespace. A bad flag beside it is still refused. (It
// used to be ignored: the search ran.)
func TestCapacityDryRunBuildsNothing(t *testing.T) {
	dir := t.TempDir()
	suite := filepath.Join(dir, "c.yaml")
	require.NoError(t, os.WriteFile(suite, []byte(capacitySuite), 0o644))
	out := filepath.Join(dir, "out")
	before := netnsNames()
	log, err := capacityCmd(suite, "--out", out, "--dry-run", "--reps", "2", "--max-reps", "4", "--max-probes", "5", "--loads", "50",
		"--latency-reps", "2", "--latency-max-reps", "3", "--busy-attempts", "2")
	require.NoError(t, err, log)
	assert.Contains(t, log, "1 case(s) x 1 broker(s) (fake) x 1 network(s) (wireline): 1 row(s) per network")
	assert.Contains(t, log, "a pilot search and 2-4 counted searches per row")
	// Runs per row: at least 2 probes in each of 3 searches + 2 runs at
	// the load; at most 5 searches x 5 probes x 2 attempts + 3 runs.
	assert.Regexp(t, `wireline\s+1\s+1s/3s/2s\s+250ms\s+8-53\s`, log)
	assert.Contains(t, log, "dry run: nothing was built")
	_, err = os.Stat(out)
	assert.True(t, os.IsNotExist(err), "nothing written")
	assert.Equal(t, before, netnsNames(), "no namespace")

	_, err = capacityCmd(suite, "--out", out, "--dry-run", "--max-probes", "2")
	require.Error(t, err)
	assert.True(t, isBadInput(err))
	assert.ErrorContains(t, err, "--max-probes")
}

// TestCapacityResumeDryRunChangesNothing: --resume DIR --dry-run prints
// the plan of the stored run and leaves its records as they were.
func TestCapacityResumeDryRunChangesNothing(t *testing.T) {
	dir := t.TempDir()
	suite := filepath.Join(dir, "c.yaml")
	require.NoError(t, os.WriteFile(suite, []byte(capacitySuite), 0o644))
	out := filepath.Join(dir, "out")
	log, err := capacityCmd(suite, "--out", out, "--lab", "capdry", "--start", "200", "--max-probes", "4", "--reps", "2", "--max-reps", "2",
		"--loads", "none", "--phases", "wireline=100ms/300ms/300ms", "--busy-attempts", "1", "--quiet-wait", "0")
	require.NoError(t, err, log)
	recs, err := os.ReadFile(filepath.Join(out, results.RecordsFile))
	require.NoError(t, err)

	log, err = capacityCmd("--resume", out, "--dry-run", "--lab", "capdry")
	require.NoError(t, err, log)
	assert.Contains(t, log, "1 row(s) per network")
	assert.Contains(t, log, "100ms/300ms/300ms", "the stored run's phases")
	assert.Contains(t, log, "the rows already finished are not taken off")
	again, err := os.ReadFile(filepath.Join(out, results.RecordsFile))
	require.NoError(t, err)
	assert.Equal(t, string(recs), string(again), "the records as they were")
}
