package cleanup

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

	"pslab/internal/brokers"
	artemisbroker "pslab/internal/brokers/artemis"
	mosquittobroker "pslab/internal/brokers/mosquitto"
	natsbroker "pslab/internal/brokers/nats"
	"pslab/internal/mqtt"
	"pslab/internal/procs"
)

// TestSleeper is the stand-in broker process of the orphan tests: it
// sleeps when asked to (PSLAB_TEST_SLEEPER), and skips otherwise.
func TestSleeper(t *testing.T) {
	if os.Getenv("PSLAB_TEST_SLEEPER") == "" {
		t.Skip("a helper process of TestOrphanBrokersAreStopped")
	}
	time.Sleep(5 * time.Minute)
}

// orphanProcess starts this test binary as a sleeper with env and args
// through a shell that exits at once: the sleeper is orphaned, as a
// broker is when its pslab is killed. It returns the sleeper's pid.
func orphanProcess(t *testing.T, env []string, args ...string) int {
	t.Helper()
	script := `setsid "$0" -test.run='^TestSleeper$' -- "$@" >/dev/null 2>&1 & echo $!` // a group of its own, as pslab starts brokers
	cmd := exec.Command("sh", append([]string{"-c", script, os.Args[0]}, args...)...)
	cmd.Env = append(os.Environ(), append(env, "PSLAB_TEST_SLEEPER=1")...)
	out, err := cmd.Output()
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscallKill(pid) })
	for i := 0; i < 100 && procs.Owner(pid) != 0; i++ { // adopted by now?
		time.Sleep(20 * time.Millisecond)
	}
	if p := procs.Owner(pid); p != 0 {
		comm, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/comm")
		t.Skipf("the orphan was adopted by pid %d (%s), which cleanup does not know as a reaper", p, strings.TrimSpace(string(comm)))
	}
	return pid
}

// TestOrphanBrokersAreStopped: broker processes whose pslab is gone and
// that are provably pslab's (an Artemis of a named lab's instance under
// pslab's cache, a nats-server child with its store there, a Mosquitto of
// a run directory there) are stopped by SIGTERM and said; a detached
// nats-server or Mosquitto (`pslab broker start`), the default instance
// on the host network, a process under another cache and a broker whose
// parent lives are left alone. Before, pslab clean left
// every broker process running.
func TestOrphanBrokersAreStopped(t *testing.T) {
	cache := t.TempDir()
	inst := filepath.Join(cache, "artemis", "instances")
	store := filepath.Join(cache, "nats", "store-x")
	artemis := orphanProcess(t, nil, "-Dartemis.instance="+filepath.Join(inst, "lab-gone-2.44.0"))
	nats := orphanProcess(t, []string{"PSLAB_CHILD=nats-server", "PSLAB_NATS_STORE=" + store})
	detached := orphanProcess(t, []string{"PSLAB_CHILD=nats-server", "PSLAB_NATS_STORE=" + store, "PSLAB_NATS_DETACHED=true"})
	def := orphanProcess(t, nil, "-Dartemis.instance="+filepath.Join(inst, "default-2.44.0"))
	elsewhere := orphanProcess(t, nil, "-Dartemis.instance="+filepath.Join(t.TempDir(), "artemis", "instances", "lab-gone-2.44.0"))
	// Mosquitto does not watch its parent: one of a killed run runs on.
	// pslab starts it as `mosquitto -c RUNDIR/mosquitto.conf`; a run
	// directory marked detached is `pslab broker start mosquitto`'s.
	runDir, keptDir := filepath.Join(cache, "mosquitto", "pslab-run"), filepath.Join(cache, "mosquitto", "pslab-kept")
	require.NoError(t, os.MkdirAll(runDir, 0o700))
	require.NoError(t, os.MkdirAll(keptDir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(keptDir, "detached"), nil, 0o600))
	mosquitto := orphanProcess(t, nil, "-c", filepath.Join(runDir, "mosquitto.conf"))
	kept := orphanProcess(t, nil, "-c", filepath.Join(keptDir, "mosquitto.conf"))
	holder(t, append(os.Environ(), "PSLAB_CHILD=nats-server", "PSLAB_NATS_STORE="+store)) // its parent (this test) lives

	reg := &brokers.Registry{}
	reg.Register(natsbroker.Descriptor())
	reg.Register(artemisbroker.Descriptor())
	mos := mosquittobroker.Descriptor(mqtt.V311)
	mos.Leftovers = nil // its run directories under /var/lib/mosquitto are not the test's
	reg.Register(mos)
	removed, err := Leftovers(Options{CacheDir: cache, Registry: reg})
	require.NoError(t, err)
	all := strings.Join(removed, "\n")
	for _, pid := range []int{artemis, nats, mosquitto} {
		assert.False(t, procs.Running(pid), "pid %d still runs", pid)
		assert.Contains(t, all, "pid "+strconv.Itoa(pid)+",")
	}
	assert.Contains(t, all, "stopped by SIGTERM")
	assert.Contains(t, all, "lab gone")
	assert.Contains(t, all, "Mosquitto (run directory "+runDir+")")
	for _, pid := range []int{detached, def, elsewhere, kept} {
		assert.True(t, procs.Running(pid), "pid %d was stopped", pid)
		assert.NotContains(t, all, "pid "+strconv.Itoa(pid)+",")
	}
}

// TestStopOrphanKillsWhatIgnoresSIGTERM: a broker process that ignores
// SIGTERM is killed after the grace, and that is said.
func TestStopOrphanKillsWhatIgnoresSIGTERM(t *testing.T) {
	cmd := exec.Command("sh", "-c", `trap "" TERM; echo ready; while :; do sleep 0.1; done`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	buf := make([]byte, 6)
	_, err = out.Read(buf)
	require.NoError(t, err)
	go func() { _ = cmd.Wait() }() // reap it: a zombie counts as running
	how, err := stopOrphan(cmd.Process.Pid, 300*time.Millisecond)
	require.NoError(t, err)
	assert.Contains(t, how, "killed")
	assert.False(t, procs.Running(cmd.Process.Pid))
}

func syscallKill(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
