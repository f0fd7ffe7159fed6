package cpuset

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Allowed is the set of CPUs this process may run on.
func Allowed() (Set, error) {
	var m unix.CPUSet
	if err := unix.SchedGetaffinity(0, &m); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	return fromMask(&m), nil
}

func fromMask(m *unix.CPUSet) Set {
	var s Set
	for c := 0; c < len(m)*64; c++ {
		if m.IsSet(c) {
			s = append(s, c)
		}
	}
	return s
}

func (s Set) mask() *unix.CPUSet {
	var m unix.CPUSet
	for _, c := range s {
		m.Set(c)
	}
	return &m
}

// SetThreads confines every thread of process pid to s. Threads started
// while it works inherit the set of the thread that starts them, so it
// passes over /proc/<pid>/task until a pass finds no thread it has not
// set yet.
func SetThreads(pid int, s Set) error {
	if len(s) == 0 {
		return errors.New("sched_setaffinity: empty CPU set")
	}
	m := s.mask()
	done := map[int]bool{}
	for pass := 0; pass < 100; pass++ {
		tids, err := tasks(pid)
		if err != nil {
			return err
		}
		fresh := 0
		for _, tid := range tids {
			if done[tid] {
				continue
			}
			fresh++
			if err := unix.SchedSetaffinity(tid, m); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("sched_setaffinity(thread %d of PID %d, CPUs %s): %w", tid, pid, s, err)
			}
			done[tid] = true
		}
		if fresh == 0 {
			return nil
		}
	}
	return fmt.Errorf("PID %d kept starting threads while being confined to CPUs %s", pid, s)
}

// tasks lists the thread ids of process pid.
func tasks(pid int) ([]int, error) {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil, fmt.Errorf("threads of PID %d: %w", pid, err)
	}
	var out []int
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, tid)
		}
	}
	return out, nil
}

// ThreadSets reads back, from /proc/<pid>/task/<tid>/status
// (Cpus_allowed_list), the CPUs each thread of pid may run on, by thread id.
func ThreadSets(pid int) (map[int]Set, error) {
	tids, err := tasks(pid)
	if err != nil {
		return nil, err
	}
	out := map[int]Set{}
	for _, tid := range tids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/status", pid, tid))
		if errors.Is(err, os.ErrNotExist) {
			continue // ended meanwhile
		}
		if err != nil {
			return nil, err
		}
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				s, err := ParseList(v)
				if err != nil {
					return nil, fmt.Errorf("thread %d of PID %d: %w", tid, pid, err)
				}
				out[tid] = s
			}
		}
	}
	return out, nil
}

// PinSelf confines every thread of this process to s and sets GOMAXPROCS
// to its size. The returned function puts back the CPUs the process had
// and the runtime's default GOMAXPROCS.
func PinSelf(s Set) (restore func() error, err error) {
	before, err := Allowed()
	if err != nil {
		return nil, err
	}
	if err := SetThreads(os.Getpid(), s); err != nil {
		_ = SetThreads(os.Getpid(), before)
		return nil, err
	}
	runtime.GOMAXPROCS(len(s))
	return func() error {
		err := SetThreads(os.Getpid(), before)
		runtime.SetDefaultGOMAXPROCS()
		return err
	}, nil
}

// execEnv carries the broker's CPU set to the trampoline (see PinCmd).
const execEnv = "PSLAB_EXEC_ON_CPUS"

// PinCmd rewrites cmd, before it is started, to start through this binary
// as a trampoline: the trampoline confines its only running thread to s
// and execs cmd's program with cmd's arguments, so the program and every
// thread it ever starts run on s (a JVM starts its threads long after the
// process starts; moving them afterwards would race with it). Directory,
// environment, files and process attributes of cmd are kept. The binary
// must call ExecIfRequested first thing (main and TestMain do, through
// broker.RunChildIfRequested).
func PinCmd(cmd *exec.Cmd, s Set) error {
	if cmd.Err != nil {
		return nil // Start reports it
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("pin %s to CPUs %s: %w", filepath.Base(cmd.Path), s, err)
	}
	env := cmd.Environ()
	cmd.Env = append(env, execEnv+"="+s.String())
	cmd.Args = append([]string{"pslab-on-cpus-" + s.String(), cmd.Path}, cmd.Args...)
	cmd.Path = self
	return nil
}

// ExecIfRequested is the trampoline of PinCmd: when this process was
// started by a pinned command it confines itself to the set and execs the
// real program (and never returns); otherwise it returns at once.
func ExecIfRequested() {
	v, ok := os.LookupEnv(execEnv)
	if !ok {
		return
	}
	runtime.LockOSThread() // exec keeps only this thread, with its set
	fail := func(err error) {
		fmt.Fprintf(os.Stderr, "pslab: start on CPUs %s: %v\n", v, err)
		os.Exit(126)
	}
	s, err := ParseList(v)
	if err == nil && len(s) == 0 {
		err = errors.New("empty CPU set")
	}
	if err != nil {
		fail(err)
	}
	if len(os.Args) < 3 {
		fail(fmt.Errorf("want PROGRAM ARGV0 [ARGS...], got %q", os.Args))
	}
	if err := unix.SchedSetaffinity(0, s.mask()); err != nil {
		fail(err)
	}
	os.Unsetenv(execEnv)
	fail(syscall.Exec(os.Args[1], os.Args[2:], os.Environ()))
}
