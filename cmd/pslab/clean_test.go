package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/broker"
)

const killedSuite = `suite: killed
networks: [wireline]
defaults:
  warmup: 200ms
  window: 1h
  drain: 1h
  rate: 100
cases:
  - id: "01"
`

// TestCleanStopsTheBrokerOfAKilledRun kills pslab with SIGKILL in the
// window of a run (as root: the broker runs in the lab's namespace), then
// runs pslab clean: the broker process is gone (stopped by clean, or by
// itself: a nats-server child), and so are the lab's namespaces, lock
// file and, for Artemis, its lab's instance. Mosquitto, like Artemis,
// outlives its pslab. Before, the Artemis JVM of the killed run kept
// running (512 MB-1 GB of heap) and clean said "removed network namespace
// pk-brk (processes still inside, not killed: [PID])" and kept the
// instance.
func TestCleanStopsTheBrokerOfAKilledRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds pslab, runs brokers in a lab (root; heavy: run under /tmp/pslab-heavy.lock)")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: the broker of a killed run is left in its lab's namespace")
	}
	bin := buildPslab(t)
	for _, tc := range []struct {
		broker, lab string
		outlives    bool // its process outlives a SIGKILLed pslab (a nats-server child watches its parent)
	}{{"artemis", "pkart", true}, {"nats", "pknats", false}, {"mosquitto", "pkmos", true}} {
		t.Run(tc.broker, func(t *testing.T) {
			// The user's cache (an installed Artemis; what clean looks at).
			dir := t.TempDir()
			file := filepath.Join(dir, "killed.yaml")
			require.NoError(t, os.WriteFile(file, []byte(killedSuite), 0o644))
			r := &signalRun{stderr: &lockedBuffer{}, out: filepath.Join(dir, "out"), lab: tc.lab}
			r.cmd = exec.Command(bin, "run", file, "--out", r.out, "--lab", tc.lab, "--broker", tc.broker, "-v")
			r.cmd.Stderr = r.stderr
			require.NoError(t, r.cmd.Start())
			r.exited = make(chan error, 1)
			go func() { r.exited <- r.cmd.Wait() }()
			r.waitFor(t, "window ")
			brokers := r.kids
			require.NotEmpty(t, brokers, "the broker runs as pslab's child")
			require.NoError(t, r.cmd.Process.Signal(syscall.SIGKILL))
			<-r.exited
			if tc.outlives {
				for _, pid := range brokers {
					assert.True(t, broker.ProcessAlive(pid), "the broker %d outlives a SIGKILLed pslab (what clean is for)", pid)
				}
			}
			out, err := exec.Command(bin, "clean").CombinedOutput()
			require.NoError(t, err, string(out))
			for _, pid := range brokers {
				gone := false
				for i := 0; i < 100 && !gone; i++ {
					gone = !broker.ProcessAlive(pid)
					time.Sleep(50 * time.Millisecond)
				}
				assert.True(t, gone, "broker %d still runs after pslab clean:\n%s", pid, out)
				if tc.outlives {
					assert.Contains(t, string(out), "pid "+strconv.Itoa(pid)+",", "clean says what it stopped")
				}
			}
			assert.NotContains(t, string(out), "not killed")
			for _, ns := range []string{"-cli", "-rtr", "-brk"} {
				_, err := os.Stat("/run/netns/" + tc.lab + ns)
				assert.True(t, os.IsNotExist(err), "namespace %s%s left after clean:\n%s", tc.lab, ns, out)
			}
			_, err = os.Stat("/run/pslab-" + tc.lab + ".lock")
			assert.True(t, os.IsNotExist(err), "lock file left")
			if tc.broker == "artemis" {
				left, _ := filepath.Glob(filepath.Join(broker.CacheDir(), "artemis", "instances", "lab-"+tc.lab+"-*"))
				assert.Empty(t, left, "the lab's instance goes with clean:\n%s", out)
			}
			assert.False(t, strings.Contains(string(out), "processes still inside"), string(out))
		})
	}
}
