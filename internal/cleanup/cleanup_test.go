package cleanup

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	_ "pslab/internal/brokers/all"
	"pslab/internal/brokers/nats"
	"pslab/internal/testbroker"
)

// deadPID is the pid of a process that has ended.
func deadPID(t *testing.T) int {
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	return cmd.Process.Pid
}

// holder starts a process that stays while the test runs (sh -c 'sleep')
// with the given environment and extra arguments in its command line.
func holder(t *testing.T, env []string, args ...string) {
	cmd := exec.Command("sh", append([]string{"-c", "sleep 60"}, args...)...)
	cmd.Env = env
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
}

func mkdir(t *testing.T, parts ...string) string {
	p := filepath.Join(parts...)
	require.NoError(t, os.MkdirAll(p, 0o700))
	return p
}

// TestLeftoversRemovesOnlyWhatNoLivePslabUses: stores of dead owners and
// instances of labs no broker runs go; the live owner's store, a store a
// nats-server child uses, the default instance and a running instance stay
// (before: every killed run left its store, and every lab name its 23 MB
// instance, for good).
func TestLeftoversRemovesOnlyWhatNoLivePslabUses(t *testing.T) {
	cache := t.TempDir()
	dead := mkdir(t, cache, "nats", "store-dead")
	require.NoError(t, os.WriteFile(filepath.Join(dead, nats.StoreOwnerFile), []byte(strconv.Itoa(deadPID(t))), 0o600))
	orphan := mkdir(t, cache, "nats", "store-orphan") // no owner file, no child
	mine := mkdir(t, cache, "nats", "store-mine")
	require.NoError(t, os.WriteFile(filepath.Join(mine, nats.StoreOwnerFile), []byte(strconv.Itoa(os.Getpid())), 0o600))
	child := mkdir(t, cache, "nats", "store-child")
	holder(t, []string{"PSLAB_NATS_STORE=" + child})

	inst := filepath.Join(cache, "artemis", "instances")
	def := mkdir(t, inst, "default-2.44.0")
	unused := mkdir(t, inst, "lab-gone-2.44.0")
	running := mkdir(t, inst, "lab-busy-2.44.0")
	holder(t, nil, "-Dartemis.instance="+running)

	removed, err := Leftovers(Options{CacheDir: cache, Instances: true})
	require.NoError(t, err)
	all := strings.Join(removed, "\n")
	for _, gone := range []string{dead, orphan, unused} {
		assert.NoDirExists(t, gone)
		assert.Contains(t, all, gone, "what was removed is said")
	}
	for _, kept := range []string{mine, child, def, running} {
		assert.DirExists(t, kept)
		assert.NotContains(t, all, kept)
	}

	removed, err = Leftovers(Options{CacheDir: cache})
	require.NoError(t, err)
	for _, r := range removed {
		assert.NotContains(t, r, "Artemis instance", "a run leaves instances to pslab clean")
	}
}

// TestStaleLockFilesGoHeldOnesStay: a lock file no lab holds is removed;
// a held one stays.
func TestStaleLockFilesGoHeldOnesStay(t *testing.T) {
	testbroker.RequireRoot(t) // lab locks live in /run
	stale := "/run/pslab-cleanst.lock"
	require.NoError(t, os.WriteFile(stale, []byte("1\n"), 0o600))
	t.Cleanup(func() { os.Remove(stale) })
	held := "/run/pslab-cleanhe.lock"
	f, err := os.OpenFile(held, os.O_RDWR|os.O_CREATE, 0o600)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close(); os.Remove(held) })
	lk := unix.Flock_t{Type: unix.F_WRLCK}
	require.NoError(t, unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk))

	removed, err := staleLocks()
	require.NoError(t, err)
	assert.NoFileExists(t, stale)
	assert.FileExists(t, held)
	assert.Contains(t, strings.Join(removed, "\n"), "lock file of lab cleanst")
}
