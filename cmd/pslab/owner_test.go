package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"pslab/internal/lab"
	"pslab/internal/results"
)

const fakeSuite = `suite: fk
brokers: [fake]
networks: [wireline]
defaults:
  warmup: 100ms
  window: 300ms
  drain: 1s
  rate: 100
cases:
  - id: "01"
`

// holdOut takes the lock of out as another pslab process would, with pid
// written in it, until the test ends.
func holdOut(t *testing.T, out string, pid string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(out, 0o755))
	f, err := os.OpenFile(filepath.Join(out, results.LockFile), os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	require.NoError(t, unix.Flock(int(f.Fd()), unix.LOCK_EX))
	_, err = f.WriteString(pid + "\n")
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
}

// TestSecondWriterOfAnOutputDirectoryIsRefused: while a pslab process
// holds an output directory, a new run into it and a resume of it are
// refused with exit code 2, naming the holder's pid, and write nothing.
// Before, a second run with the same --out (and another --lab) exited 0
// and left two records called rep 1 and an overwritten run.json, and a
// resume while the original run was still writing doubled its records.
func TestSecondWriterOfAnOutputDirectoryIsRefused(t *testing.T) {
	dir := t.TempDir()
	suite := filepath.Join(dir, "fk.yaml")
	require.NoError(t, os.WriteFile(suite, []byte(fakeSuite), 0o644))
	out := filepath.Join(dir, "out")
	holdOut(t, out, "4242")

	_, err := runCmd(suite, "--out", out, "--lab", "ownr")
	require.Error(t, err)
	assert.True(t, isBadInput(err), err)
	assert.Contains(t, err.Error(), "pid 4242")
	_, statErr := os.Stat(filepath.Join(out, lab.RunInfoFile))
	assert.True(t, os.IsNotExist(statErr), "no run.json written")
	_, statErr = os.Stat(filepath.Join(out, results.RecordsFile))
	assert.True(t, os.IsNotExist(statErr), "no record written")

	// The same for a resume: run.json of a run still being written.
	info, err := lab.NewRunInfo([]string{suite}, []string{suite})
	require.NoError(t, err)
	require.NoError(t, lab.WriteRunInfo(out, info))
	_, err = runCmd("--resume", out, "--lab", "ownr")
	require.Error(t, err)
	assert.True(t, isBadInput(err), err)
	assert.Contains(t, err.Error(), "pid 4242")
	_, statErr = os.Stat(filepath.Join(out, results.RecordsFile))
	assert.True(t, os.IsNotExist(statErr), "no record written")
	assert.Equal(t, exitBadInput, execute([]string{"run", suite, "--out", out, "--lab", "ownr"}))
}
