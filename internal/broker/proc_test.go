package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// procTestListen makes the test binary a child that listens on the
// address it names (and prints a line to its log), until killed.
const procTestListen = "PSLAB_PROC_TEST_LISTEN"

func TestMain(m *testing.M) {
	if addr := os.Getenv(procTestListen); addr != "" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			os.Stderr.WriteString("listen: " + err.Error() + "\n")
			os.Exit(3)
		}
		os.Stdout.WriteString("listening\n")
		for {
			c, err := l.Accept()
			if err == nil {
				c.Close()
			}
		}
	}
	os.Exit(m.Run())
}

func testProc(t *testing.T, addr string) *Proc {
	exe, err := os.Executable()
	require.NoError(t, err)
	return &Proc{What: "test-broker", Host: LoopbackHost{}, Addr: addr, Timeout: 10 * time.Second,
		Log: filepath.Join(t.TempDir(), "log"),
		Command: func() *exec.Cmd {
			cmd := exec.Command(exe, "-test.run", "^$")
			cmd.Env = append(os.Environ(), procTestListen+"="+addr)
			return cmd
		}}
}

// TestProcLaunchKillRelaunchStop: a child that listens is ready once its
// address accepts connections; Kill ends it (Exited says nothing of a kill
// on purpose), Relaunch starts it again on the same address, Stop ends it
// and Relaunch refuses after.
func TestProcLaunchKillRelaunchStop(t *testing.T) {
	port, err := FreePort()
	require.NoError(t, err)
	p := testProc(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	ctx := context.Background()
	assert.Error(t, p.Relaunch(ctx), "never launched")
	require.NoError(t, p.Launch(ctx))
	pid := p.PID()
	assert.Positive(t, pid)
	assert.NoError(t, p.Exited())
	assert.Error(t, p.Launch(ctx), "already running")
	require.NoError(t, p.Kill())
	assert.Zero(t, p.PID())
	assert.NoError(t, p.Exited())
	assert.Error(t, p.Kill(), "not running")
	require.NoError(t, p.Relaunch(ctx))
	assert.NotEqual(t, pid, p.PID())
	require.NoError(t, p.Stop(ctx, 5*time.Second))
	assert.Zero(t, p.PID())
	assert.Error(t, p.Relaunch(ctx), "stopped")
	assert.NoError(t, p.Stop(ctx, time.Second), "stopping again does nothing")
	log, _ := os.ReadFile(p.Log)
	assert.Equal(t, "listening\nlistening\n", string(log), "each launch appends to the log")
}

// TestProcLaunchOfAChildThatExitsFails: a child that exits before it
// listens fails Launch with the end of its log, and is not running.
func TestProcLaunchOfAChildThatExitsFails(t *testing.T) {
	// The child is told to listen on an address that is taken: it exits 3.
	blocker, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer blocker.Close()
	p := testProc(t, blocker.Addr().String())
	p.Addr = "127.0.0.1:1" // never accepts: only the child's exit ends the wait
	err = p.Launch(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "listen:")
	assert.Zero(t, p.PID())
}

// TestDetachedStartRefusesTwiceAndStopCleansUp: the state of a broker
// left running refuses a second start while it lives; stop ends it,
// removes its directories and its state, and refuses when nothing was
// started.
func TestDetachedStartRefusesTwiceAndStopCleansUp(t *testing.T) {
	t.Setenv("PSLAB_CACHE", t.TempDir())
	port, err := FreePort()
	require.NoError(t, err)
	p := testProc(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	require.NoError(t, p.Launch(context.Background()))
	t.Cleanup(func() { _ = p.Stop(context.Background(), time.Second) })
	dir, store := t.TempDir(), t.TempDir()
	st := Detached{Name: "test-broker", PID: p.PID(), URL: "x://" + p.Addr, Dir: dir, Store: store}
	data, err := json.Marshal(st)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(DetachedPath("test-broker"), data, 0o600))
	assert.ErrorContains(t, CheckNoDetached("test-broker"), "already running")

	var out strings.Builder
	require.NoError(t, StopDetachedBroker(context.Background(), "test-broker", &out))
	assert.Equal(t, fmt.Sprintf("test-broker stopped (pid %d)\n", st.PID), out.String())
	for _, f := range []string{dir, store, DetachedPath("test-broker")} {
		_, err := os.Stat(f)
		assert.ErrorIs(t, err, os.ErrNotExist, f)
	}
	assert.NoError(t, CheckNoDetached("test-broker"))
	assert.ErrorContains(t, StopDetachedBroker(context.Background(), "test-broker", &out), "no test-broker started")
}
