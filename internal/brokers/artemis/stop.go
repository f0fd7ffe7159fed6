package artemis

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"pslab/internal/broker"
	"pslab/internal/procs"
)

// Stop implements Broker: SIGTERM to the broker's process group (Artemis
// shuts down gracefully), SIGKILL after 30 s or when ctx ends, and wait for
// the exit. No java process outlives Stop.
func (a *Artemis) Stop(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	err := a.stopLocked(ctx)
	if a.tlsKeystore != "" { // the lab's keystore goes with the session: no acceptor left pointing at it
		a.tlsKeystore = ""
		if e := a.syncTLSAcceptor(filepath.Join(a.InstanceDir(), "etc", "broker.xml")); err == nil {
			err = e
		}
	}
	return err
}

func (a *Artemis) stopLocked(ctx context.Context) error {
	if a.run == nil {
		return nil
	}
	err := broker.StopProcessGroup(ctx, a.run.cmd.Process.Pid, a.run.exited, 30*time.Second)
	a.run, a.version = nil, ""
	os.Remove(a.pidFile())
	return err
}

// leftover returns the PID of a broker still running this instance from an
// earlier (killed) pslab process, or 0.
func (a *Artemis) leftover() int {
	b, err := os.ReadFile(a.pidFile())
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.Contains(string(cmdline), "-Dartemis.instance="+a.InstanceDir()+"\x00") {
		os.Remove(a.pidFile()) // stale: that process is gone or is not ours
		return 0
	}
	return pid
}

// StopLeftover stops a broker of this instance left running by a killed
// pslab process (found through the instance's PID file and checked against
// its command line). It returns the PID it stopped, or 0.
func (a *Artemis) StopLeftover(ctx context.Context) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.run != nil {
		return 0, errors.New("artemis is running under this process: use Stop")
	}
	pid := a.leftover()
	if pid == 0 {
		return 0, nil
	}
	if owner := liveParent(pid); owner > 0 {
		return 0, fmt.Errorf("artemis instance %s is in use by another running process (broker pid %d, started by pid %d): "+
			"it is not a leftover; runs at the same time need their own instance (pslab run --lab NAME)", a.InstanceDir(), pid, owner)
	}
	err := broker.StopDetached(ctx, pid, 30*time.Second)
	os.Remove(a.pidFile())
	return pid, err
}

// liveParent returns the parent PID of pid when that parent is a live
// process other than this one and init (or a subreaper): the broker's
// owner (a running pslab) is still there. A broker orphaned by a killed
// pslab is adopted by init (or a subreaper), and then 0 is returned.
func liveParent(pid int) int {
	if owner := procs.Owner(pid); owner != os.Getpid() {
		return owner
	}
	return 0
}
