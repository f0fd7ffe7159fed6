package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/lab"
	"pslab/internal/results"
)

// A sweep writes run.json, its records carry their varied values, and an
// interrupted sweep is continued by run --resume: only what is missing
// runs again (on the in-memory fake broker: hermetic).
func TestSweepIsResumable(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sweep")
	sweep := []string{"sweep", "--broker", "fake", "--vary", "size=100,200", "--set", "warmup=100ms", "--set", "window=300ms",
		"--set", "drain=500ms", "--set", "rate=200", "--out", out, "--lab", "uxsweep"}
	require.Equal(t, exitOK, executeFresh(sweep...))
	info, err := lab.ReadRunInfo(out)
	require.NoError(t, err)
	assert.Equal(t, "sweep", info.Command)
	recs, err := results.Read(out)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	assert.Equal(t, []string{"size=200"}, recs[1].Varied)

	// Lose the second case's record, as a killed sweep would.
	line, err := json.Marshal(recs[0])
	require.NoError(t, err)
	require.NoError(t, results.WriteAtomic(filepath.Join(out, results.RecordsFile), append(line, '\n')))
	require.Equal(t, exitOK, executeFresh("run", "--resume", out, "--lab", "uxsweep"))
	again, err := results.Read(out)
	require.NoError(t, err)
	require.Len(t, again, 2, "each case once")
	assert.Equal(t, recs[0].Started.String(), again[0].Started.String(), "the finished case was not run again")
	assert.Equal(t, []string{"size=200"}, again[1].Varied)

	assert.Equal(t, exitBadInput, executeFresh(sweep...), "a second sweep into the same directory is refused")
}

// sweep's --help says what its flags default to, not "the file's".
func TestSweepHelpNamesItsOwnDefaults(t *testing.T) {
	code, help := executeOut(t, "sweep", "--help")
	require.Equal(t, exitOK, code)
	assert.NotContains(t, help, "the file")
	assert.Contains(t, help, "brokers to run on, e.g. nats,artemis (default: nats)")
	code, help = executeOut(t, "run", "--help")
	require.Equal(t, exitOK, code)
	assert.Contains(t, help, "(default: the file's)")
}
