package lab

import (
	"fmt"

	"golang.org/x/sys/unix"

	"pslab/internal/scenario"
	"pslab/netem"
)

// Checks made before anything is built: names from the file and from the
// flags (each error says which), and every case against the limits of the
// broker and of this machine. A problem found after the lab is up would
// leave namespaces, a broker and a half-written bundle behind.

// checkNames reports every unknown broker and every bad network of the
// plan, blaming the flag when the name came from one and the file's line
// otherwise.
func checkNames(s *scenario.Suite, o Options, brokers, networks []string) []string {
	var problems []string
	where := func(flag string, fromFlag bool, line int, key string) string {
		if fromFlag {
			return flag
		}
		if line > 0 {
			return fmt.Sprintf("%s:%d: %s:", s.File, line, key)
		}
		return fmt.Sprintf("%s: %s:", s.File, key)
	}
	for _, b := range brokers {
		if _, err := o.registry().Get(b); err != nil {
			problems = append(problems, fmt.Sprintf("%s %v", where("--broker", len(o.Brokers) > 0, s.BrokersLine, "brokers"), err))
		}
	}
	for _, n := range networks {
		if _, err := netem.LoadProfile(n); err != nil {
			problems = append(problems, fmt.Sprintf("%s %v", where("--network", len(o.Networks) > 0, s.NetworksLine, "networks"), err))
		}
	}
	return problems
}

// CheckLab reports a lab name that is bad or that another run holds now.
func CheckLab(name string) error {
	if name == "" {
		name = "pslab"
	}
	if err := netem.CheckOptions(netem.Options{Prefix: name}); err != nil {
		return fmt.Errorf("--lab %s: %w", name, err)
	}
	if held, pid := netem.LabHeld(name); held {
		return fmt.Errorf("--lab %s: the lab is held by a running pslab (pid %d); wait for it, or give another --lab NAME", name, pid)
	}
	return nil
}

// descriptorsBase is what the client process holds besides its broker
// connections (the bundle, the broker's pipes, /proc, admin connections).
const descriptorsBase = 64

// checkLimits checks each case that runs on a broker against that broker's
// connection limit and the descriptors this process may open (ulimit -n;
// one per client connection, and as many in an embedded broker child).
func checkLimits(p Plan, o Options) []string {
	var lim unix.Rlimit
	_ = unix.Getrlimit(unix.RLIMIT_NOFILE, &lim)
	var problems []string
	for _, b := range p.Brokers {
		_, external := o.URLs[b]
		d, _ := o.registry().Lookup(b)
		for _, c := range p.Cases {
			if !c.ForBroker(b) {
				continue
			}
			conns := c.Publishers + c.Subscribers
			if d.MaxConns > 0 && !external && conns > d.MaxConns-descriptorsBase {
				problems = append(problems, fmt.Sprintf("%s: case %s on %s: %d connections (%d publishers + %d subscribers); the %s broker pslab starts accepts at most %d",
					c.Where(), c.ID, b, conns, c.Publishers, c.Subscribers, b, d.MaxConns-descriptorsBase))
				continue
			}
			if need := uint64(conns + descriptorsBase); lim.Cur > 0 && need > lim.Cur {
				problems = append(problems, fmt.Sprintf("%s: case %s on %s: %d connections need about %d open files, and ulimit -n is %d (raise it, e.g. ulimit -n %d)",
					c.Where(), c.ID, b, conns, need, lim.Cur, max(2*need, 4096)))
			}
		}
	}
	return problems
}
