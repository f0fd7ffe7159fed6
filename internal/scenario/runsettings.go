package scenario

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Phases are a network's warm-up, window and drain, overriding the cases'
// (a field left out keeps the case's value).
type Phases struct {
	Warmup, Window, Drain *time.Duration
}

// RepsRule is a suite's sequential-repetition rule: each case row is
// repeated beyond `reps:` until the 95 % confidence half-width of its
// subscriber throughput and of its mean latency is within CI of the mean,
// or until MaxReps repetitions.
type RepsRule struct {
	CI      float64 // fraction, e.g. 0.05; 0: no rule
	MaxReps int     // 0: not given
}

// ForNetwork returns c with the suite's phases for network net applied.
// Quick runs keep their own short phases (per_network is ignored with
// --quick, see Parse).
func (s *Suite) ForNetwork(c Case, net string) Case {
	ph, ok := s.PerNetwork[net]
	if !ok {
		return c
	}
	if ph.Warmup != nil {
		c.Warmup = *ph.Warmup
	}
	if ph.Window != nil {
		c.Window = *ph.Window
	}
	if ph.Drain != nil {
		c.Drain = *ph.Drain
	}
	return c
}

// ParsePercent reads "5%" or "0.05" as a fraction strictly between 0 and 1.
func ParsePercent(s string) (float64, error) {
	pct := strings.HasSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(s, "%")), 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a percentage (e.g. 5%%)", s)
	}
	if pct {
		v /= 100
	}
	if v <= 0 || v >= 1 {
		return 0, fmt.Errorf("%q must be between 0 and 100 %%", s)
	}
	return v, nil
}

// ci reads the suite key `ci:`.
func (p *parser) ci(e entry) float64 {
	s := p.str(e)
	if s == "" {
		return 0
	}
	v, err := ParsePercent(s)
	if err != nil {
		p.errorf(e.line, "ci: %v", err)
	}
	return v
}

// maxReps reads the suite key `max_reps:`.
func (p *parser) maxReps(e entry) int {
	n := p.int(e)
	if n < 1 {
		p.errorf(e.line, "max_reps must be at least 1, got %d", n)
	}
	return n
}

// order reads the suite key `order:` (file or random).
func (p *parser) order(e entry) bool {
	switch v := p.str(e); v {
	case "file":
		return false
	case "random":
		return true
	default:
		p.errorf(e.line, "order: %q is not file or random", v)
		return false
	}
}

// perNetwork reads `per_network:`, a mapping of network name to its
// warmup, window and drain.
func (p *parser) perNetwork(n *yaml.Node) map[string]Phases {
	out := map[string]Phases{}
	for _, ne := range p.mapping(n, "per_network") {
		var ph Phases
		for _, e := range p.mapping(ne.val, "per_network: "+ne.key) {
			var dst **time.Duration
			switch e.key {
			case "warmup":
				dst = &ph.Warmup
			case "window":
				dst = &ph.Window
			case "drain":
				dst = &ph.Drain
			default:
				p.errorf(e.line, "unknown field %q in per_network: %s (known: warmup, window, drain)", e.key, ne.key)
				continue
			}
			s := p.str(e)
			d, err := time.ParseDuration(s)
			switch {
			case err != nil:
				p.errorf(e.line, "%s: %q is not a duration (e.g. 500ms, 10s, 2m)", e.key, s)
			case d < 0 || d == 0 && e.key == "window":
				p.errorf(e.line, "%s must be positive, got %s", e.key, s)
			default:
				*dst = &d
			}
		}
		out[ne.key] = ph
	}
	return out
}

// checkPerNetwork reports per_network entries for networks the suite does
// not list (a typo would silently keep the cases' phases).
func (p *parser) checkPerNetwork(s *Suite, line int) {
	known := map[string]bool{}
	for _, n := range s.Networks {
		known[n] = true
	}
	var unknown []string
	for n := range s.PerNetwork {
		if !known[n] {
			unknown = append(unknown, n)
		}
	}
	sort.Strings(unknown)
	for _, n := range unknown {
		p.errorf(line, "per_network: %q is not one of the suite's networks (%s)", n, strings.Join(s.Networks, ", "))
	}
}
