// Package cpuset puts the broker and the load clients on disjoint CPU
// sets, so that a run measures the broker and not the contest between the
// broker and pslab's own clients for the same cores.
//
// The mechanism is sched_setaffinity: this process (the load clients) is
// confined to the clients' set, every thread of it; a broker child started
// by pslab is started through a tiny trampoline (this binary again) that
// confines its only thread to the broker's set and then execs the broker, so
// every thread the broker (nats-server, the Artemis JVM) ever starts inherits
// the set; an external broker given by PID has every thread of it moved.
package cpuset

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Set is a sorted list of distinct CPU numbers.
type Set []int

// ParseList reads a CPU list in the kernel's format ("0-2,5"), as in
// /proc/<pid>/status Cpus_allowed_list.
func ParseList(s string) (Set, error) {
	var out Set
	for part := range strings.SplitSeq(strings.TrimSpace(s), ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("CPU list %q: %q is not a CPU number", s, lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("CPU list %q: bad range %q", s, part)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// String is the set in the kernel's list format ("0-2,5").
func (s Set) String() string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(s[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(s[j]))
		}
		i = j + 1
	}
	return b.String()
}

// Plan is where the broker and the clients run. The zero Plan is Off.
type Plan struct {
	Broker  Set // empty when Off
	Clients Set // empty when Off
	// Why says how the plan was chosen (default split, the flag, or why
	// isolation is off), for the run's log.
	Why string
}

// Off reports whether the plan leaves both sides unpinned.
func (p Plan) Off() bool { return len(p.Broker) == 0 || len(p.Clients) == 0 }

// DefaultPlan splits the CPUs this process may use: the clients get the
// lower half (rounded up), the broker the rest. On 2 cores: clients 0,
// broker 1. With a single CPU there is nothing to split: Off.
func DefaultPlan(allowed Set) Plan {
	if len(allowed) < 2 {
		return Plan{Why: fmt.Sprintf("off: only CPU(s) %s available, nothing to split", allowed)}
	}
	n := (len(allowed) + 1) / 2
	return Plan{Clients: slices.Clone(allowed[:n]), Broker: slices.Clone(allowed[n:]),
		Why: "default: the CPUs this process may use, split in two"}
}

// ParseFlag reads --cpus: "" (the default split of allowed), "off", or
// "broker=LIST,clients=LIST" with LIST in the kernel's list format (a list
// with commas continues until the next key: "broker=2,3,clients=0-1").
// Both sets must be non-empty, disjoint and within allowed.
func ParseFlag(v string, allowed Set) (Plan, error) {
	switch strings.TrimSpace(v) {
	case "":
		return DefaultPlan(allowed), nil
	case "off":
		return Plan{Why: "off: --cpus off (broker and clients share every CPU)"}, nil
	}
	lists := map[string][]string{}
	key := ""
	for tok := range strings.SplitSeq(v, ",") {
		k, val, hasKey := strings.Cut(tok, "=")
		if hasKey {
			key = strings.TrimSpace(k)
			if key != "broker" && key != "clients" {
				return Plan{}, fmt.Errorf("--cpus %q: unknown side %q (want broker=LIST,clients=LIST or off)", v, key)
			}
			if _, dup := lists[key]; dup {
				return Plan{}, fmt.Errorf("--cpus %q: %s given twice", v, key)
			}
			lists[key] = nil
			tok = val
		} else if key == "" {
			return Plan{}, fmt.Errorf("--cpus %q: want broker=LIST,clients=LIST or off", v)
		}
		lists[key] = append(lists[key], tok)
	}
	var p Plan
	var problems []string
	for _, side := range []string{"broker", "clients"} {
		l, ok := lists[side]
		if !ok {
			problems = append(problems, side+" missing")
			continue
		}
		s, err := ParseList(strings.Join(l, ","))
		if err == nil && len(s) == 0 {
			err = fmt.Errorf("empty CPU list")
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", side, err))
			continue
		}
		if out := minus(s, allowed); len(out) > 0 {
			problems = append(problems, fmt.Sprintf("%s: CPU(s) %s not available (this process may use %s)", side, out, allowed))
		}
		if side == "broker" {
			p.Broker = s
		} else {
			p.Clients = s
		}
	}
	if both := minus(p.Broker, minus(p.Broker, p.Clients)); len(both) > 0 {
		problems = append(problems, fmt.Sprintf("CPU(s) %s in both sets: the sets must be disjoint", both))
	}
	if len(problems) > 0 {
		return Plan{}, fmt.Errorf("--cpus %q: %s", v, strings.Join(problems, "; "))
	}
	p.Why = "--cpus " + v
	return p, nil
}

// minus is a without the CPUs of b.
func minus(a, b Set) Set {
	var out Set
	for _, c := range a {
		if !slices.Contains(b, c) {
			out = append(out, c)
		}
	}
	return out
}
