package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/lab"
	"pslab/internal/results"
)

// runCmd runs a fresh `pslab run` command (its own flag values) with args.
func runCmd(args ...string) (string, error) {
	c := newRunCmd()
	var errBuf bytes.Buffer
	c.SetArgs(args)
	c.SetErr(&errBuf)
	c.SetOut(&errBuf)
	c.SilenceUsage, c.SilenceErrors = true, true
	err := c.Execute()
	return errBuf.String(), err
}

func isBadInput(err error) bool {
	var b badInputError
	return errors.As(err, &b)
}

const resumeSuite = `suite: resume
brokers: [nats]
networks: [wireline]
reps: 2
defaults:
  warmup: 200ms
  window: 500ms
  drain: 1s
cases:
  - id: "01"
  - id: "02"
`

func TestStoredArgsRoundTrip(t *testing.T) {
	c := newRunCmd()
	require.NoError(t, c.Flags().Parse([]string{"--broker", "nats,artemis", "--network", "wireline", "--reps", "2",
		"--ci", "5%", "--quick", "--cases", "1-2", "--url", "nats=nats://a:b@127.0.0.1:1", "--out", "x", "--lab", "l2", "-v"}))
	args := storedArgs(c, []string{"s.yaml"})
	for _, a := range args {
		assert.NotContains(t, a, "--out", "where it writes is not stored")
		assert.NotContains(t, a, "--lab")
		assert.NotContains(t, a, "--verbose")
	}
	back := &cobra.Command{Use: "run"}
	var f runFlags
	addRunFlags(back, &f, true)
	require.NoError(t, back.Flags().Parse(args))
	assert.Equal(t, []string{"nats", "artemis"}, f.brokers)
	assert.Equal(t, []string{"wireline"}, f.networks)
	assert.Equal(t, 2, f.reps)
	assert.Equal(t, "5%", f.ci)
	assert.True(t, f.quick)
	assert.Equal(t, "1-2", f.cases)
	assert.Equal(t, []string{"nats=nats://a:b@127.0.0.1:1"}, f.urls)
	assert.Equal(t, []string{"s.yaml"}, back.Flags().Args())
}

func TestResumeRefusesWithTheReason(t *testing.T) {
	dir := t.TempDir()
	suite := filepath.Join(dir, "resume.yaml")
	require.NoError(t, os.WriteFile(suite, []byte(resumeSuite), 0o644))
	out := filepath.Join(dir, "out")

	_, err := runCmd("--resume", out)
	require.Error(t, err)
	assert.True(t, isBadInput(err))
	assert.Contains(t, err.Error(), "is not the output directory of a pslab run")

	info, err := lab.NewRunInfo([]string{suite}, []string{suite})
	require.NoError(t, err)
	require.NoError(t, lab.WriteRunInfo(out, info))

	_, err = runCmd("--resume", out, suite)
	assert.True(t, isBadInput(err))
	assert.ErrorContains(t, err, "takes the scenario files from")
	_, err = runCmd("--resume", out, "--reps", "5", "--out", "y")
	assert.True(t, isBadInput(err))
	assert.ErrorContains(t, err, "not with it: --out, --reps")

	require.NoError(t, os.WriteFile(suite, []byte(strings.Replace(resumeSuite, "window: 500ms", "window: 2s", 1)), 0o644))
	_, err = runCmd("--resume", out)
	assert.True(t, isBadInput(err))
	assert.ErrorContains(t, err, "scenario file "+suite+" changed since the run started")
	assert.ErrorContains(t, err, "--force resumes anyway")

	info.Pslab = "0123456789ab"
	require.NoError(t, lab.WriteRunInfo(out, info))
	_, err = runCmd("--resume", out)
	assert.ErrorContains(t, err, "changed since the run started", "the file change still refuses")
	assert.NotContains(t, err.Error(), "the run was made with", "another build alone is not refused: its records are set aside (lab identity)")
	_, err = os.Stat(filepath.Join(out, results.SupersededFile))
	assert.True(t, os.IsNotExist(err), "nothing changed by a refused resume")

	// A new run into a directory that holds a measured run is refused.
	require.NoError(t, results.WriteAtomic(filepath.Join(out, results.RecordsFile), []byte("{}\n")))
	_, err = runCmd(suite, "--out", out)
	assert.True(t, isBadInput(err))
	assert.ErrorContains(t, err, "continue it with --resume "+out)
}

// TestResumeContinuesAnInterruptedRun runs two cases twice on a NATS
// child over the wireline, makes the record of one repetition interrupted
// and drops another, and resumes: only those two run again.
func TestResumeContinuesAnInterruptedRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts nats-server and runs cases")
	}
	bin := buildPslab(t) // the broker child re-executes the binary
	dir := t.TempDir()
	suite := filepath.Join(dir, "resume.yaml")
	require.NoError(t, os.WriteFile(suite, []byte(resumeSuite), 0o644))
	out := filepath.Join(dir, "out")
	pslab := func(args ...string) (string, error) {
		c := exec.Command(bin, args...)
		c.Env = append(os.Environ(), "PSLAB_CACHE="+filepath.Join(dir, "cache"))
		b, err := c.CombinedOutput()
		return string(b), err
	}
	log, err := pslab("run", suite, "--out", out, "--lab", "pslabres")
	require.NoError(t, err, log)
	assert.Contains(t, log, "[1/4] elapsed", "progress with the whole run's count")
	assert.Contains(t, log, "ETA")
	recs, err := results.Read(out)
	require.NoError(t, err)
	require.Len(t, recs, 4)
	for _, r := range recs {
		require.NotNil(t, r.Machine)
		assert.NotEmpty(t, r.Machine.Hostname)
		assert.Positive(t, r.Machine.Cores)
		require.NotNil(t, r.Order)
	}

	// Interrupt one repetition, lose another (as if the run had stopped).
	var keep []results.Record
	started := map[string]string{}
	for _, r := range recs {
		key := r.CaseID + "/" + string(rune('0'+r.Rep))
		switch key {
		case "02/2":
			r.Flags = append(r.Flags, results.ParseFlag("interrupted: test"))
		case "01/2":
			continue
		default:
			started[key] = r.Started.String()
		}
		keep = append(keep, r)
	}
	require.NoError(t, os.Remove(filepath.Join(out, results.RecordsFile)))
	b, err := results.Create(out)
	require.NoError(t, err)
	for i := range keep {
		require.NoError(t, b.Append(&keep[i]))
	}

	log, err = pslab("run", "--resume", out, "--lab", "pslabres")
	require.NoError(t, err, log)
	assert.Contains(t, log, "2 finished repetition(s) kept; 1 failed or interrupted set aside")
	recs, err = results.Read(out)
	require.NoError(t, err)
	require.Len(t, recs, 4, "each repetition once")
	seen := map[string]int{}
	for _, r := range recs {
		key := r.CaseID + "/" + string(rune('0'+r.Rep))
		seen[key]++
		assert.True(t, r.Finished(), key)
		if s, ok := started[key]; ok {
			assert.Equal(t, s, r.Started.String(), "%s was finished: not run again", key)
		}
	}
	assert.Equal(t, map[string]int{"01/1": 1, "01/2": 1, "02/1": 1, "02/2": 1}, seen)
	aside, err := results.Read(filepath.Join(out, results.SupersededFile))
	require.NoError(t, err)
	require.Len(t, aside, 1)
	assert.Equal(t, "02", aside[0].CaseID)

	// Changed file: refused, then forced (nothing left to run) and noted.
	require.NoError(t, os.WriteFile(suite, []byte(resumeSuite+"# changed\n"), 0o644))
	log, err = pslab("run", "--resume", out, "--lab", "pslabres")
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), log)
	assert.Equal(t, exitBadInput, exit.ExitCode(), log)
	log, err = pslab("run", "--resume", out, "--lab", "pslabres", "--force")
	require.NoError(t, err, log)
	info, err := lab.ReadRunInfo(out)
	require.NoError(t, err)
	require.Len(t, info.Resumed, 2)
	assert.Empty(t, info.Resumed[0].Forced)
	require.Len(t, info.Resumed[1].Forced, 1)
	assert.Contains(t, info.Resumed[1].Forced[0], "changed since the run started")
	recs, err = results.Read(out)
	require.NoError(t, err)
	assert.Len(t, recs, 4, "a finished run resumed runs nothing")
}
