// Package procs answers questions about other processes from /proc: who
// owns a process (a live parent, or nobody once init or a subreaper has
// adopted it), and whether it still runs.
package procs

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Owner returns the parent of pid when that parent is a live process that
// owns it (this process included), or 0: a process whose starter died is
// adopted by init or a subreaper (an init system, a container's init), and
// then nobody owns it.
func Owner(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		v, ok := strings.CutPrefix(line, "PPid:")
		if !ok {
			continue
		}
		ppid, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || ppid <= 1 {
			return 0
		}
		if ppid == os.Getpid() {
			return ppid
		}
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", ppid))
		if err != nil || isReaper(strings.TrimSpace(string(comm))) || namespaceInit(ppid) {
			return 0
		}
		return ppid
	}
	return 0
}

// isReaper names processes that adopt orphans (init systems, container
// inits): a process under one of them has lost whoever started it.
// /proc shows a child subreaper (prctl PR_SET_CHILD_SUBREAPER) in no
// field, so names are what is left.
func isReaper(comm string) bool {
	switch comm {
	case "systemd", "init", "tini", "dumb-init", "docker-init", "containerd-shim":
		return true
	}
	return false
}

// namespaceInit: pid is process 1 of its own PID namespace (a container's
// or a sandbox's init, whatever its name), which adopts that namespace's
// orphans. /proc/PID/status's NSpid lists the pid from the outermost
// namespace to the innermost.
func namespaceInit(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "NSpid:"); ok {
			f := strings.Fields(v)
			return len(f) > 0 && f[len(f)-1] == "1"
		}
	}
	return false
}

// Running is true for a live process that is not a zombie.
func Running(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(data, ')') // the state follows the command name
	return i < 0 || i+2 >= len(data) || data[i+2] != 'Z'
}
