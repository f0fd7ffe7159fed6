package lab

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"pslab/internal/broker"
	"pslab/internal/brokers"
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
		spec, err := loadNetwork(n)
		if err == nil {
			err = spec.checkRoles(o)
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s %v", where("--network", len(o.Networks) > 0, s.NetworksLine, "networks"), err))
		}
	}
	return problems
}

// CheckLab reports a lab name that is bad or that another run holds now.
func CheckLab(name string) error {
	if name == "" {
		return fmt.Errorf("--lab '': a lab needs a name, 1-10 characters a-z0-9 (default pslab)")
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

// checkRepsRule refuses a repetition rule that contradicts itself: with a
// CI target a row runs at least reps and at most max reps, so reps above
// an explicit max reps (flag or file) is no rule.
func (p Plan) checkRepsRule(o Options) []string {
	if p.CITarget <= 0 || p.MaxReps <= 0 || p.Reps <= p.MaxReps {
		return nil
	}
	reps := fmt.Sprintf("%s: reps: %d", p.Suite.File, p.Reps)
	if o.Reps > 0 {
		reps = fmt.Sprintf("--reps %d", p.Reps)
	}
	maxReps := fmt.Sprintf("%s: max_reps: %d", p.Suite.File, p.MaxReps)
	if o.MaxReps > 0 {
		maxReps = fmt.Sprintf("--max-reps %d", p.MaxReps)
	}
	return []string{fmt.Sprintf("%s is more than %s: with a CI target each row runs at least reps and at most max reps repetitions", reps, maxReps)}
}

// checkURLSchemes refuses a --url whose scheme is not one its broker
// speaks (the registry's Schemes): http://… for nats would be dialled as
// NATS and fail, or reach something else.
func checkURLSchemes(reg *brokers.Registry, urls map[string]string) []string {
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(urls)) {
		d, ok := reg.Lookup(name)
		if !ok || len(d.Schemes) == 0 {
			continue // an unknown broker is reported by MakePlan
		}
		u, err := url.Parse(urls[name])
		if err != nil {
			continue // NewExternal says what is wrong with it
		}
		if !slices.Contains(d.Schemes, u.Scheme) {
			problems = append(problems, fmt.Sprintf("--url %s=%s: scheme %s is not one of %s's (%s)", name, broker.Redact(urls[name]), u.Scheme, name, strings.Join(d.Schemes, ", ")))
		}
	}
	return problems
}
