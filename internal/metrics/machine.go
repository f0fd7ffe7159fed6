package metrics

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// MachinePID, given to ProcSampler.Watch, samples the whole machine's busy
// CPU (all processes, from /proc/stat) instead of one process: with the
// run's own processes subtracted, it is the load from outside the run
// (another pslab lab, any other process) that competes for the cores.
const MachinePID = -1

// machineBusyTicks is the time all CPUs spent running processes (user,
// nice, system) from the first line of /proc/stat. Not counted: idle and
// iowait; irq and softirq, which on a lab run are mostly the run's own
// packets (the emulating router forwards in softirq, attributed to no
// process: counting it made every shaped case "machine-busy"); and steal,
// the hypervisor's other guests, which no process here can be blamed for.
func machineBusyTicks() (uint64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	return parseMachineStat(b)
}

func parseMachineStat(b []byte) (uint64, error) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 9 || string(f[0]) != "cpu" {
		return 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var busy uint64
	for _, v := range f[1:4] { // user nice system (then idle iowait irq softirq steal)
		n, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat: %w", err)
		}
		busy += n
	}
	return busy, nil
}

// cpuTicksOf is the CPU time of pid, or of the machine for MachinePID.
func cpuTicksOf(pid int) (uint64, error) {
	if pid == MachinePID {
		return machineBusyTicks()
	}
	return procCPUTicks(pid)
}

// rssOf is the resident set of pid (0 for the machine).
func rssOf(pid int) (int64, error) {
	if pid == MachinePID {
		return 0, nil
	}
	return procRSS(pid)
}
