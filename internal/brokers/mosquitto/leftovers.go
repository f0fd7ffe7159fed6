package mosquitto

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
)

// Run directories. Mosquitto started as root drops to the user
// "mosquitto" before it opens its files, so its directory must be
// reachable by that user: under Debian's /var/lib/mosquitto (owned by it)
// then; pslab's cache otherwise. Each is named pslab-<random> and holds
// owner.pid, the pid of the pslab that started it.
const (
	runPrefix = "pslab-"
	ownerFile = "owner.pid"
	// detachedFile marks a broker left running on purpose (`pslab broker
	// start`), which leftover clean-up does not stop.
	detachedFile = "detached"
	varLib       = "/var/lib/mosquitto"
)

// runBases are the directories run directories are made in.
func runBases() []string {
	return []string{varLib, filepath.Join(broker.CacheDir(), "mosquitto")}
}

// newRunDir makes a run directory for a broker that runs as runAs.
func newRunDir(runAs string, detached bool) (string, error) {
	base := filepath.Join(broker.CacheDir(), "mosquitto")
	if runAs == "mosquitto" {
		if st, err := os.Stat(varLib); err == nil && st.IsDir() {
			base = varLib
		} else if err := os.MkdirAll(varLib, 0o755); err == nil {
			base = varLib
		}
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(base, runPrefix)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	if detached {
		_ = os.WriteFile(filepath.Join(dir, detachedFile), nil, 0o600)
	}
	if err := chown(dir, runAs); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// Leftovers stops the Mosquitto brokers of pslab runs that ended without
// stopping them (a killed pslab: Mosquitto does not watch its parent) and
// removes their run directories. It never touches a broker whose pslab
// lives, nor one left running on purpose by `pslab broker start`. It
// returns a line per item removed.
func Leftovers() ([]string, error) {
	var removed []string
	var errs []error
	for _, dir := range staleDirs() {
		what := "Mosquitto run directory " + dir + " of a run that ended without stopping its broker"
		if pid := readPID(filepath.Join(dir, "mosquitto.pid")); pid > 0 && runsIn(pid, dir) {
			if err := broker.StopDetached(context.Background(), pid, 5*time.Second); err != nil {
				errs = append(errs, err)
				continue
			}
			what = fmt.Sprintf("Mosquitto (pid %d) and its run directory %s, left by a run that ended without stopping it", pid, dir)
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, what)
	}
	return removed, errors.Join(errs...)
}

// staleDirs are the run directories whose pslab is gone, except those
// of brokers left running on purpose.
func staleDirs() []string {
	var out []string
	for _, base := range runBases() {
		dirs, _ := filepath.Glob(filepath.Join(base, runPrefix+"*"))
		for _, dir := range dirs {
			if _, err := os.Stat(filepath.Join(dir, detachedFile)); err == nil {
				continue
			}
			if owner := readPID(filepath.Join(dir, ownerFile)); owner > 0 && broker.ProcessAlive(owner) {
				continue
			}
			out = append(out, dir)
		}
	}
	return out
}

// runsIn tells whether process pid is a Mosquitto started with the
// configuration of run directory dir.
func runsIn(pid int, dir string) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && broker.ProcessAlive(pid) && strings.Contains(string(b), filepath.Join(dir, "mosquitto.conf"))
}

func readPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0
	}
	return pid
}
