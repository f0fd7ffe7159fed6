package artemis

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"pslab/internal/broker"
	"pslab/internal/brokers"
)

// leftovers removes, for `pslab clean` (o.Unused), the per-lab instances
// no broker runs and no run holds (Descriptor.Leftovers); a run leaves
// them, as the next run of its lab name reuses its instance.
func leftovers(o brokers.LeftoverOptions) ([]string, error) {
	if !o.Unused {
		return nil, nil
	}
	return unusedInstances(filepath.Join(NewArtemis(ArtemisConfig{CacheDir: o.CacheDir}).root(), "instances"), o.LabHeld)
}

// unusedInstances removes Artemis instances of labs other than the default
// one that no broker process runs and whose lab is not held.
func unusedInstances(dir string, labHeld func(string) bool) ([]string, error) {
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
		if labHeld(lab) || len(instanceProcesses(path)) > 0 {
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

// Processes lists the processes that run a's instance (the broker's JVM
// names it on its command line): a stopped or killed broker leaves none.
func (a *Artemis) Processes() []int { return instanceProcesses(a.InstanceDir()) }

// instanceProcesses lists the processes whose command line runs the
// instance at path.
func instanceProcesses(path string) []int {
	var pids []int
	broker.AnyProcess(func(pid int) bool {
		cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && bytes.Contains(cmd, []byte("-Dartemis.instance="+path+"\x00")) {
			pids = append(pids, pid)
		}
		return false
	})
	return pids
}
