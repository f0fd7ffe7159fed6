package lab

import (
	"bufio"
	"os"
	"runtime"
	"strings"
	"sync"

	"pslab/internal/results"
)

var (
	machineOnce sync.Once
	machineInfo results.Machine
)

// thisMachine names the host records are measured on: hostname, cores and
// the CPU's model name from /proc/cpuinfo (empty where there is none).
func thisMachine() *results.Machine {
	machineOnce.Do(func() {
		h, err := os.Hostname()
		if err != nil {
			h = "unknown"
		}
		machineInfo = results.Machine{Hostname: h, Cores: runtime.NumCPU(), CPUModel: cpuModel("/proc/cpuinfo")}
	})
	m := machineInfo
	return &m
}

// cpuModel is the first "model name" of a cpuinfo file.
func cpuModel(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
