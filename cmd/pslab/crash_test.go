package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/broker"
	"pslab/internal/results"
)

// buildPslab compiles the command once per test binary.
func buildPslab(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "pslab")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, string(out))
	return bin
}

const crashSuite = `suite: crash
networks: [wireline]
defaults:
  warmup: 200ms
  window: 1s
  drain: 2s
  subscription: durable
  delivery: persistent
  durable_name: "{prefix}-s{sub}"
  client_id: "{prefix}-c{sub}"
cases:
  - id: "01"
  - id: "02"
  - id: "03"
  - id: "04"
  - id: "05"
  - id: "06"
`

// lockedBuffer is a bytes.Buffer safe for the writer goroutine of exec.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// childrenOf lists the pids whose parent is pid.
func childrenOf(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}

// TestKillNineMidRunLeavesNothingBehind kills pslab with SIGKILL in the
// middle of a run and checks: the broker child exits by itself, the records
// file holds only whole records, and the next run cleans up what is left
// (namespaces, when running as root) and runs.
func TestKillNineMidRunLeavesNothingBehind(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs pslab")
	}
	bin := buildPslab(t)
	dir := t.TempDir()
	suite := filepath.Join(dir, "crash.yaml")
	require.NoError(t, os.WriteFile(suite, []byte(crashSuite), 0o644))
	out := filepath.Join(dir, "out")
	lab := "pslabcrash"
	cmd := exec.Command(bin, "run", suite, "--out", out, "--lab", lab)
	cmd.Env = append(os.Environ(), "PSLAB_CACHE="+filepath.Join(dir, "cache"))
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	// Wait until at least one record is written and a case is running.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if recs, err := results.Read(out); err == nil && len(recs) >= 1 {
			break
		}
		require.True(t, time.Now().Before(deadline), "no record within a minute:\n%s", stderr.String())
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(700 * time.Millisecond) // into the next case
	kids := childrenOf(cmd.Process.Pid)
	require.NotEmpty(t, kids, "the broker child runs")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	// The broker child notices its parent is gone and exits.
	for _, k := range kids {
		gone := false
		for i := 0; i < 100 && !gone; i++ {
			gone = !broker.ProcessAlive(k)
			time.Sleep(100 * time.Millisecond)
		}
		assert.True(t, gone, "broker child %d still running 10 s after pslab was killed", k)
	}
	// Whatever was written is whole records.
	recs, err := results.Read(out)
	require.NoError(t, err, "records file must never hold a half line")
	for _, r := range recs {
		assert.NotEmpty(t, r.CaseID)
	}
	matches, _ := filepath.Glob(filepath.Join(out, ".*tmp*"))
	// A temp file may remain if the kill hit a write; it is never the records file itself.
	for _, m := range matches {
		assert.NotEqual(t, results.RecordsFile, filepath.Base(m))
	}

	// The next run cleans up and runs.
	out2 := filepath.Join(dir, "out2")
	again := exec.Command(bin, "run", suite, "--out", out2, "--lab", lab, "--cases", "1")
	again.Env = cmd.Env
	combined, err := again.CombinedOutput()
	require.NoError(t, err, string(combined))
	if os.Geteuid() == 0 {
		assert.Contains(t, string(combined), "cleanup: removed", "the next run says what it removed")
		for _, ns := range []string{"-cli", "-rtr", "-brk"} {
			_, err := os.Stat("/run/netns/" + lab + ns)
			assert.True(t, os.IsNotExist(err), "namespace %s%s left after the second run", lab, ns)
		}
	}
	recs2, err := results.Read(out2)
	require.NoError(t, err)
	require.Len(t, recs2, 1)
	assert.Empty(t, recs2[0].Error)
	var buf bytes.Buffer
	require.NoError(t, json.NewEncoder(&buf).Encode(recs2[0].Result.Counts))
	assert.Zero(t, recs2[0].Result.Counts.Lost, buf.String())
}
