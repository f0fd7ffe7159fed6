package cleanup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"pslab/internal/broker"
	"pslab/internal/brokers"
	"pslab/internal/procs"
	"pslab/netem"
)

// Broker processes a dead run left. pslab starts its brokers as process
// group leaders (an Artemis JVM, a nats-server child) and stops them when
// the run ends, however it ends, except by SIGKILL or a second signal. A
// nats-server child then notices its parent is gone and stops by itself;
// an Artemis JVM keeps running (512 MB-1 GB of heap), inside the lab's
// broker namespace as root. A broker process is stopped here only when it
// is provably one that pslab started for a run that is over:
//
//   - its broker says so (brokers.Descriptor.OwnProcess), by its command
//     line or environment: an Artemis JVM runs an instance under pslab's
//     cache (-Dartemis.instance=CACHE/artemis/instances/...), a
//     nats-server child is pslab's binary with PSLAB_CHILD=nats-server and
//     a store under CACHE/nats;
//   - the pslab that started it is gone (its parent is init or a
//     subreaper: no live process owns it, procs.Owner);
//   - it sees this machine's file system (its mount namespace is this
//     process's: the paths above are pslab's own, not a container's);
//   - and where it runs says whose it is: in the broker namespace of a lab
//     (/run/netns/<lab>-brk) that no live pslab holds; in a network
//     namespace no longer named (a lab's, removed while the broker ran in
//     it, as pslab clean did before it stopped brokers); or on the host's
//     own network (runs without root), unless its broker says it may have
//     been left running there on purpose (OwnProcess.KeepOnHost: the
//     default Artemis instance and a detached nats-server, what `pslab
//     broker start` leaves; `pslab broker stop` stops those, and the next
//     run of the default lab stops the former). A broker of a lab some live
//     pslab holds is never touched.
//
// Stopping is graceful first: SIGTERM to its process group (pslab starts
// each broker as the leader of one, which is checked too), up to stopGrace
// for it to exit, then SIGKILL.

// stopGrace is how long a broker has to exit after SIGTERM: Artemis shuts
// down its journal gracefully in well under that (broker.Artemis.Stop
// gives it 30 s as well).
const stopGrace = 30 * time.Second

// orphan is a broker process to stop, and why it is pslab's and left.
type orphan struct {
	pid int
	brokers.OwnProcess
	ns string // the lab namespace it runs in, "(unnamed)", or "" (the host's network)
}

// findOrphans lists the broker processes of dead runs (see above), as the
// registry's brokers recognise theirs.
func findOrphans(reg *brokers.Registry, cacheDir string) []orphan {
	if cacheDir == "" {
		return nil
	}
	labNS := labNamespaces()
	hostNS, hostOK := nsOf("self", "net")
	mountNS, mountOK := nsOf("self", "mnt")
	var out []orphan
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if mnt, ok := nsOf(e.Name(), "mnt"); !ok || !mountOK || mnt != mountNS {
			continue // another file system (a container's): its paths are not ours
		}
		if pgid, err := syscall.Getpgid(pid); err != nil || pgid != pid {
			continue // pslab starts a broker as the leader of its process group
		}
		own, ok := ownProcess(reg, cacheDir, pid)
		if !ok || procs.Owner(pid) > 0 {
			continue
		}
		ino, ok := nsOf(e.Name(), "net")
		if !ok {
			continue
		}
		o := orphan{pid: pid, OwnProcess: own}
		switch ns, inLab := labNS[ino]; {
		case inLab:
			o.ns, o.Lab = ns, strings.TrimSuffix(ns, "-brk")
		case hostOK && ino == hostNS:
			if o.KeepOnHost {
				continue
			}
		default: // a lab namespace removed while it ran (by an older clean)
			o.ns = "(unnamed)"
		}
		if held, _ := netem.LabHeld(o.Lab); o.Lab != "" && held {
			continue
		}
		out = append(out, o)
	}
	return out
}

// ownProcess asks each broker of reg whether pid is one of its processes
// pslab started with its cache in cacheDir.
func ownProcess(reg *brokers.Registry, cacheDir string, pid int) (brokers.OwnProcess, bool) {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return brokers.OwnProcess{}, false
	}
	environ, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	for _, n := range reg.Names() {
		if d, _ := reg.Lookup(n); d.OwnProcess != nil {
			if own, ok := d.OwnProcess(cacheDir, cmdline, environ); ok {
				return own, true
			}
		}
	}
	return brokers.OwnProcess{}, false
}

// labNamespaces maps the network namespace inode of every lab's broker
// namespace (/run/netns/<lab>-brk) to its name.
func labNamespaces() map[uint64]string {
	out := map[uint64]string{}
	files, _ := filepath.Glob("/run/netns/*-brk")
	for _, f := range files {
		var st unix.Stat_t
		if unix.Stat(f, &st) == nil {
			out[st.Ino] = filepath.Base(f)
		}
	}
	return out
}

// nsOf is the inode of namespace kind (net, mnt) of /proc/<pid>.
func nsOf(pid, kind string) (uint64, bool) {
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join("/proc", pid, "ns", kind), &st); err != nil {
		return 0, false
	}
	return st.Ino, true
}

// stopOrphans stops each orphan gracefully, then by force (after grace),
// and says what it did.
func stopOrphans(orphans []orphan, grace time.Duration) ([]string, error) {
	var done []string
	var errs []error
	for _, o := range orphans {
		how, err := stopOrphan(o.pid, grace)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s, pid %d: %w", o.What, o.pid, err))
			continue
		}
		where := "on the host network, its pslab gone"
		switch {
		case o.ns == "(unnamed)":
			where = "in a network namespace no longer named (a lab's, removed while it ran), its pslab gone"
		case o.ns != "":
			where = "in namespace " + o.ns + " of lab " + o.Lab + ", which no run holds"
		}
		if (o.ns == "" || o.ns == "(unnamed)") && o.Lab != "" {
			where += ", of lab " + o.Lab
		}
		done = append(done, fmt.Sprintf("broker process %s, pid %d, %s (%s)", o.What, o.pid, where, how))
	}
	return done, errors.Join(errs...)
}

// stopOrphan stops the process group pid leads (broker.StopDetached:
// SIGTERM, up to grace, SIGKILL) and says which ended it.
func stopOrphan(pid int, grace time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), grace+15*time.Second)
	defer cancel()
	start := time.Now()
	if err := broker.StopDetached(ctx, pid, grace); err != nil {
		return "", err
	}
	if time.Since(start) >= grace {
		return fmt.Sprintf("killed: still running %s after SIGTERM", grace), nil
	}
	return "stopped by SIGTERM", nil
}
