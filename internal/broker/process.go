package broker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Helpers for the broker packages (internal/brokers/NAME) that run their
// broker as a child process in its own process group.

// ExitedOnItsOwn is Watched.Exited for cmd, whose reaping closes exited:
// nil while it runs, else how it ended and the end of its log.
func ExitedOnItsOwn(what string, cmd *exec.Cmd, exited <-chan struct{}, log string) error {
	select {
	case <-exited:
		return fmt.Errorf("%s (PID %d) exited on its own (%v); last output: %s (full log: %s)",
			what, cmd.Process.Pid, cmd.ProcessState, TailFile(log, 3), log)
	default:
		return nil
	}
}

// KillProcessGroup sends SIGKILL to the group led by pid and waits (up to
// 10 s) until exited is closed.
func KillProcessGroup(pid int, exited <-chan struct{}) error {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	select {
	case <-exited:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("broker process %d did not exit after SIGKILL", pid)
	}
}

// StopProcessGroup signals the group led by pid (SIGTERM, SIGKILL after
// grace or when ctx ends) and waits for exited. Every broker uses it.
func StopProcessGroup(ctx context.Context, pid int, exited <-chan struct{}, grace time.Duration) error {
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-exited:
		return nil
	case <-time.After(grace):
	case <-ctx.Done():
	}
	return KillProcessGroup(pid, exited)
}

// StopDetached stops the process group led by pid, a process this one did
// not start and so cannot wait for (a broker left running by `pslab broker
// start` or by a killed run): as StopProcessGroup, polling until it is gone.
func StopDetached(ctx context.Context, pid int, grace time.Duration) error {
	exited := make(chan struct{})
	go func() {
		for syscall.Kill(pid, 0) == nil {
			time.Sleep(50 * time.Millisecond)
		}
		close(exited)
	}()
	return StopProcessGroup(ctx, pid, exited, grace)
}

// FreePort is a TCP port free on loopback now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// TailFile returns the last n non-empty lines of a file, joined by " | ".
func TailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no output)"
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return "(no output)"
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// AnyProcess reports whether match holds for some process (by pid).
func AnyProcess(match func(pid int) bool) bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && match(pid) {
			return true
		}
	}
	return false
}

// PIDExists tells whether a process pid exists, this user's or another's
// (a zombie included; ProcessAlive leaves those out).
func PIDExists(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
