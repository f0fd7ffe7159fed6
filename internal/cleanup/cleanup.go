// Package cleanup finds and removes what pslab runs leave when they are
// killed or when their lab name is not used again: broker processes of
// dead runs (stopped gracefully, then killed; brokers.go says how they are
// told from anything else), embedded NATS stores of dead runs, per-lab
// Artemis instances no broker runs, and lab lock files and namespaces no
// live lab holds. It never touches what a live pslab uses: a broker whose
// pslab lives or whose lab is held, a store whose owner process or
// nats-server child lives, an instance a broker process runs or whose lab
// is held, a held lock.
package cleanup

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"pslab/internal/broker"
	"pslab/internal/brokers"
	"pslab/netem"
)

// OwnerFile, inside a NATS store, holds the pid of the pslab process that
// created the store (broker.StoreOwnerFile).
const OwnerFile = broker.StoreOwnerFile

// Options say where to look and what to remove.
type Options struct {
	CacheDir string // pslab's cache (broker.CacheDir())
	// Instances also removes per-lab Artemis instances no broker runs
	// (pslab clean); a run only removes stores and lock files.
	Instances bool
	// Registry holds the brokers whose processes of dead runs are stopped
	// (nil: brokers.Default, every broker the program registered).
	Registry *brokers.Registry
}

// Leftovers removes what dead runs left and returns a line per removed
// item; errors of single items are joined, the rest goes on.
func Leftovers(o Options) (removed []string, err error) {
	var errs []error
	reg := o.Registry
	if reg == nil {
		reg = brokers.Default
	}
	r, e := stopOrphans(findOrphans(reg, o.CacheDir), stopGrace) // first: their stores, instances and namespaces go next
	removed, errs = append(removed, r...), append(errs, e)
	r, e = staleStores(filepath.Join(o.CacheDir, "nats"))
	removed, errs = append(removed, r...), append(errs, e)
	if o.Instances {
		r, e = unusedInstances(filepath.Join(o.CacheDir, "artemis", "instances"))
		removed, errs = append(removed, r...), append(errs, e)
	}
	if os.Geteuid() == 0 { // labs (and their lock files in /run) need root
		r, e = staleLocks()
		removed, errs = append(removed, r...), append(errs, e)
	}
	return removed, errors.Join(errs...)
}

// staleStores removes NATS stores (dir/store-*) whose owner pslab is gone
// and that no nats-server child uses.
func staleStores(dir string) ([]string, error) {
	stores, _ := filepath.Glob(filepath.Join(dir, "store-*"))
	var removed []string
	var errs []error
	for _, s := range stores {
		if storeInUse(s) {
			continue
		}
		if err := os.RemoveAll(s); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, "NATS store "+s+" of a run that ended without stopping its broker")
	}
	return removed, errors.Join(errs...)
}

func storeInUse(store string) bool {
	if b, err := os.ReadFile(filepath.Join(store, OwnerFile)); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && alive(pid) {
			return true
		}
	}
	return anyProcess(func(pid int) bool {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		return err == nil && bytes.Contains(env, []byte("PSLAB_NATS_STORE="+store+"\x00"))
	})
}

// unusedInstances removes Artemis instances of labs other than the default
// one that no broker process runs and whose lab is not held.
func unusedInstances(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || !strings.HasPrefix(name, "lab-") {
			continue // the default instance is reused by every default run
		}
		path := filepath.Join(dir, name)
		lab := name[len("lab-"):]
		if i := strings.LastIndex(lab, "-"); i > 0 {
			lab = lab[:i] // lab-<name>-<version>
		}
		if held, _ := netem.LabHeld(lab); held || instanceRunning(path) {
			continue
		}
		if err := os.RemoveAll(path); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, fmt.Sprintf("Artemis instance %s of lab %s (no broker runs it)", path, lab))
	}
	return removed, errors.Join(errs...)
}

func instanceRunning(path string) bool {
	return anyProcess(func(pid int) bool {
		cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		return err == nil && bytes.Contains(cmd, []byte("-Dartemis.instance="+path+"\x00"))
	})
}

// staleLocks removes the namespaces and lock files of labs no live run
// holds.
func staleLocks() ([]string, error) {
	var removed []string
	var errs []error
	for _, name := range netem.StaleLockNames() {
		r, err := netem.Cleanup(name)
		removed = append(removed, r...)
		if err != nil {
			if !errors.Is(err, netem.ErrInUse) { // taken meanwhile: not stale
				errs = append(errs, err)
			}
			continue
		}
		ok, err := netem.RemoveStaleLock(name)
		if err != nil && !errors.Is(err, netem.ErrInUse) {
			errs = append(errs, err)
		}
		if ok {
			removed = append(removed, "lock file of lab "+name+" (no run holds it)")
		}
	}
	return removed, errors.Join(errs...)
}

func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// anyProcess reports whether match holds for some process.
func anyProcess(match func(pid int) bool) bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && match(pid) {
			return true
		}
	}
	return false
}
