package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/broker"
	"pslab/internal/report"
	"pslab/internal/results"
)

// signalRun is one `pslab run` of a suite, signalled from the test.
type signalRun struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer
	out    string // the run bundle
	cache  string // PSLAB_CACHE of the run
	lab    string
	kids   []int // its children while it ran (the broker)
	exited chan error
}

// startSignalRun starts bin on suite (written to a file) with a lab name
// and cache of its own, with -v progress lines.
func startSignalRun(t *testing.T, bin, suite, lab string, extra ...string) *signalRun {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "suite.yaml")
	require.NoError(t, os.WriteFile(file, []byte(suite), 0o644))
	out := filepath.Join(dir, "out")
	return startSignalCommand(t, bin, dir, lab, out, append([]string{"run", file, "--out", out, "--lab", lab, "-v"}, extra...)...)
}

// startSignalCommand starts bin with args (which write to out, in lab),
// with the cache in dir.
func startSignalCommand(t *testing.T, bin, dir, lab, out string, args ...string) *signalRun {
	t.Helper()
	r := &signalRun{stderr: &lockedBuffer{}, out: out, cache: filepath.Join(dir, "cache"), lab: lab}
	r.cmd = exec.Command(bin, args...)
	r.cmd.Env = append(os.Environ(), "PSLAB_CACHE="+r.cache)
	r.cmd.Stderr = r.stderr
	require.NoError(t, r.cmd.Start())
	r.exited = make(chan error, 1)
	go func() { r.exited <- r.cmd.Wait() }()
	return r
}

// waitFor waits until the run's stderr holds s; the bound only catches a
// run that never gets there (it fails the test, it measures nothing).
func (r *signalRun) waitFor(t *testing.T, s string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); !strings.Contains(r.stderr.String(), s); {
		if time.Now().After(deadline) {
			_ = r.cmd.Process.Kill()
			<-r.exited
			t.Fatalf("no %q in the run's output:\n%s", s, r.stderr.String())
		}
		select {
		case <-r.exited:
			t.Fatalf("pslab ended before %q:\n%s", s, r.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	r.kids = append(r.kids, childrenOf(r.cmd.Process.Pid)...)
}

// signal sends sig and waits for the exit; it returns the exit code. A run
// that does not end within two minutes ignored the signal: it is killed
// and the test fails.
func (r *signalRun) signal(t *testing.T, sigs ...syscall.Signal) int {
	t.Helper()
	for _, sig := range sigs {
		require.NoError(t, r.cmd.Process.Signal(sig))
	}
	select {
	case err := <-r.exited:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		require.NoError(t, err)
		return 0
	case <-time.After(2 * time.Minute):
		_ = r.cmd.Process.Kill()
		<-r.exited
		t.Fatalf("pslab ignored %v:\n%s", sigs, r.stderr.String())
		return -1
	}
}

// checkNothingLeft: no broker child, no NATS store, no namespace and no
// lock file of the lab remain.
func (r *signalRun) checkNothingLeft(t *testing.T) {
	t.Helper()
	for _, k := range r.kids {
		gone := false
		for i := 0; i < 100 && !gone; i++ {
			gone = !broker.ProcessAlive(k)
			time.Sleep(50 * time.Millisecond)
		}
		assert.True(t, gone, "child %d of pslab still runs", k)
	}
	stores, _ := filepath.Glob(filepath.Join(r.cache, "nats", "store-*"))
	assert.Empty(t, stores, "NATS stores left behind")
	if os.Geteuid() == 0 {
		for _, ns := range []string{"-cli", "-rtr", "-brk"} {
			_, err := os.Stat("/run/netns/" + r.lab + ns)
			assert.True(t, os.IsNotExist(err), "namespace %s%s left behind", r.lab, ns)
		}
		_, err := os.Stat("/run/pslab-" + r.lab + ".lock")
		assert.True(t, os.IsNotExist(err), "lock file of lab %s left behind", r.lab)
	}
}

// records reads the bundle; a run interrupted before its first record
// may have written none.
func (r *signalRun) records(t *testing.T) []results.Record {
	t.Helper()
	recs, err := results.Read(r.out)
	if err != nil && os.IsNotExist(errors.Unwrap(err)) {
		return nil
	}
	if _, statErr := os.Stat(filepath.Join(r.out, results.RecordsFile)); os.IsNotExist(statErr) {
		return nil
	}
	require.NoError(t, err)
	return recs
}

const windowHourSuite = `suite: interrupt
networks: [wireline]
defaults:
  warmup: 200ms
  window: 1h
  drain: 1h
  rate: 200
  subscription: durable
  delivery: persistent
  durable_name: "{prefix}-s{sub}"
  client_id: "{prefix}-c{sub}"
cases:
  - id: "01"
  - id: "02"
`

// TestSIGINTInWindowRecordsInterrupted: SIGINT in the measurement window
// of an hour-long case stops the run at once with exit code 130; the case
// is recorded as interrupted with the part of the window measured, the
// next case never starts, the report counts the record neither as a
// result nor as a failure, and nothing is left behind. Before, the case
// was saved as a valid result with window_s 20 and exit code 0.
func TestSIGINTInWindowRecordsInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs pslab (heavy: run under /tmp/pslab-heavy.lock)")
	}
	bin := buildPslab(t)
	r := startSignalRun(t, bin, windowHourSuite, "sigint")
	r.waitFor(t, "window ")
	assert.Equal(t, 130, r.signal(t, syscall.SIGINT), r.stderr.String())
	recs := r.records(t)
	require.Len(t, recs, 1, "the interrupted case, and no later one:\n%s", r.stderr.String())
	rec := recs[0]
	assert.Equal(t, "01", rec.CaseID)
	assert.Empty(t, rec.Error, "an interruption is no failure")
	require.True(t, rec.Interrupted(), "the record must say it was interrupted")
	in := rec.Result.Interrupted
	assert.Equal(t, "window", in.Phase)
	assert.Less(t, in.WindowMeasuredS, rec.Settings.WindowS, "it claims no more of the window than was measured")
	_, interrupted := results.Flagged(rec.Flags, results.FlagInterrupted)
	assert.True(t, interrupted, rec.Flags)
	d := report.Build(recs)
	assert.Zero(t, d.Failed)
	assert.Equal(t, 1, d.Interrupted)
	for _, g := range d.Groups {
		assert.Zero(t, g.Reps, "an interrupted run is no result")
	}
	assert.Contains(t, r.stderr.String(), "INTERRUPTED")
	r.checkNothingLeft(t)
}

// TestSIGINTStopsEveryModelExperiment: the first SIGINT stops `pslab model
// measure` as a whole, with exit code 130. Before, each experiment had its
// own signal watch: SIGINT stopped the experiment in progress and the
// command went on with the next one (seen in the henjes reference run).
func TestSIGINTStopsEveryModelExperiment(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs pslab (heavy: run under /tmp/pslab-heavy.lock)")
	}
	bin := buildPslab(t)
	dir := t.TempDir()
	for _, e := range []string{"publishers", "subscribers"} {
		suite := strings.Replace(windowHourSuite, "suite: interrupt", "suite: henjes-"+e, 1)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "henjes-"+e+".yaml"), []byte(suite), 0o644))
	}
	out := filepath.Join(dir, "out")
	r := startSignalCommand(t, bin, dir, "sigmodel", out, "model", "measure", "--scenarios", dir,
		"--experiments", "publishers,subscribers", "--broker", "nats", "--out", out, "--lab", "sigmodel", "-v")
	r.waitFor(t, "starting nats")
	time.Sleep(time.Second) // into the unrecorded warm-up run of the first case, an hour long
	assert.Equal(t, 130, r.signal(t, syscall.SIGINT), r.stderr.String())
	assert.Contains(t, r.stderr.String(), "suite henjes-publishers")
	assert.NotContains(t, r.stderr.String(), "suite henjes-subscribers", "the next experiment must not start")
	r.checkNothingLeft(t)
}

// TestSIGTERMDuringConnectWritesNothing: SIGTERM while 2000 clients are
// being connected stops the set-up (connect() launches no more, the dials
// follow the cancellation) with exit code 143; nothing was measured, so no
// record claims anything, and nothing is left behind.
func TestSIGTERMDuringConnectWritesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs pslab (heavy: run under /tmp/pslab-heavy.lock)")
	}
	var lim syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	if lim.Cur < 8192 {
		t.Skipf("ulimit -n %d: 2000 clients need more descriptors", lim.Cur)
	}
	bin := buildPslab(t)
	suite := strings.Replace(windowHourSuite, "cases:", "  publishers: 1000\n  subscribers: 1000\n  topics: 1000\ncases:", 1)
	r := startSignalRun(t, bin, suite, "sigterm")
	r.waitFor(t, "starting nats")
	time.Sleep(300 * time.Millisecond) // into the purge or the set-up
	assert.Equal(t, 143, r.signal(t, syscall.SIGTERM), r.stderr.String())
	for _, rec := range r.records(t) {
		assert.True(t, rec.Interrupted(), "a record of an interrupted run that is no interruption: %+v", rec.Flags)
		assert.Empty(t, rec.Error)
	}
	r.checkNothingLeft(t)
}

// TestSecondSignalForcesExit: two SIGINTs in a row end the run with 130
// whatever the first one was still waiting for.
func TestSecondSignalForcesExit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs pslab (heavy: run under /tmp/pslab-heavy.lock)")
	}
	bin := buildPslab(t)
	r := startSignalRun(t, bin, windowHourSuite, "sig2")
	t.Cleanup(func() { // the forced exit may leave the lab: remove it
		if out, err := exec.Command(bin, "netem", "down", "--lab", "sig2").CombinedOutput(); err != nil {
			t.Logf("netem down: %v: %s", err, out)
		}
	})
	r.waitFor(t, "window ")
	assert.Equal(t, 130, r.signal(t, syscall.SIGINT, syscall.SIGINT), r.stderr.String())
	for _, rec := range r.records(t) {
		assert.True(t, rec.Interrupted(), rec.Flags)
	}
}
