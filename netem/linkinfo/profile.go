// Package linkinfo holds the plain types of the emulated link that a
// result record carries: the profile as configured (and its YAML form),
// the router's counters over a case, the verification of the profile.
// It imports no netlink or nftables, so the analysis side reads records
// without them; package netem uses these types as its own.
package linkinfo

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Duplex modes.
const (
	DuplexFull = "full" // each direction has its own rate budget
	DuplexHalf = "half" // both directions share one budget, like a radio channel
)

// DefaultQueueMs is the router queue, in milliseconds at the profile's rate,
// used when a profile does not set queue_ms. See netem's tbfPlan for why.
const DefaultQueueMs = 500

// Profile says what the emulated link does. Percentages are 0..100, times are
// milliseconds, the rate is kbit/s (1 kbit = 1000 bit) of Ethernet frames on
// the wire; a zero rate means unshaped.
type Profile struct {
	Name               string  `json:"name"`
	Description        string  `json:"description,omitempty"`
	RateKbit           float64 `json:"rate_kbit"`
	LossPct            float64 `json:"loss_pct"`
	LossCorrelationPct float64 `json:"loss_correlation_pct"`
	DelayMs            float64 `json:"delay_ms"`
	JitterMs           float64 `json:"jitter_ms"`
	DuplicatePct       float64 `json:"duplicate_pct"`
	Duplex             string  `json:"duplex"` // "full" or "half"
	// QueueMs is the router's queue as time at the profile's rate: it bounds
	// the queueing delay a full queue adds. 0 means DefaultQueueMs.
	QueueMs float64 `json:"queue_ms,omitempty"`
}

// ErrBadProfile is returned (wrapped) for a profile file that does not parse
// or has bad values.
var ErrBadProfile = errors.New("bad profile")

// Shaped reports whether the profile changes the link at all (wireline is
// not shaped).
func (p Profile) Shaped() bool {
	return p.RateKbit > 0 || p.LossPct > 0 || p.DelayMs > 0 || p.JitterMs > 0 || p.DuplicatePct > 0
}

// NeedsNetem lists the impairments only the netem qdisc can do (empty if the
// tbf+nftables fallback can run the profile).
func (p Profile) NeedsNetem() []string {
	var need []string
	if p.DelayMs > 0 {
		need = append(need, fmt.Sprintf("delay_ms=%g", p.DelayMs))
	}
	if p.JitterMs > 0 {
		need = append(need, fmt.Sprintf("jitter_ms=%g", p.JitterMs))
	}
	if p.DuplicatePct > 0 {
		need = append(need, fmt.Sprintf("duplicate_pct=%g", p.DuplicatePct))
	}
	if p.LossCorrelationPct > 0 {
		need = append(need, fmt.Sprintf("loss_correlation_pct=%g", p.LossCorrelationPct))
	}
	return need
}

// SameLink reports whether p and q put the same impairments on the link
// (names and descriptions aside; all unshaped profiles are the same link).
func (p Profile) SameLink(q Profile) bool {
	if !p.Shaped() && !q.Shaped() {
		return true
	}
	p.Name, p.Description, q.Name, q.Description = "", "", "", ""
	p.QueueMs, q.QueueMs = p.EffectiveQueueMs(), q.EffectiveQueueMs()
	return p == q
}

// EffectiveQueueMs is QueueMs or its default.
func (p Profile) EffectiveQueueMs() float64 {
	if p.QueueMs > 0 {
		return p.QueueMs
	}
	return DefaultQueueMs
}

// Validate checks the values (the file loader reports the same problems with
// file:line).
func (p Profile) Validate() error {
	for _, f := range profileFields {
		if err := f.check(p); err != nil {
			return fmt.Errorf("%w %q: %s: %v", ErrBadProfile, p.Name, f.key, err)
		}
	}
	return nil
}

// String is a one-line summary.
func (p Profile) String() string {
	if !p.Shaped() {
		return p.Name + ": unshaped, no loss, no delay"
	}
	rate := "unshaped"
	if p.RateKbit > 0 {
		rate = fmt.Sprintf("%g kbit/s %s duplex, queue %g ms", p.RateKbit, p.Duplex, p.EffectiveQueueMs())
	}
	s := fmt.Sprintf("%s: %s, loss %g %%", p.Name, rate, p.LossPct)
	if p.LossCorrelationPct > 0 {
		s += fmt.Sprintf(" (corr %g %%)", p.LossCorrelationPct)
	}
	return s + fmt.Sprintf(", delay %g ms, jitter %g ms, dup %g %%", p.DelayMs, p.JitterMs, p.DuplicatePct)
}

// field describes one YAML key of a profile.
type field struct {
	key   string
	set   func(p *Profile, v any)
	check func(p Profile) error
	str   bool // value is a string
}

func pctCheck(get func(Profile) float64) func(Profile) error {
	return func(p Profile) error { return inRange(get(p), 0, 100, "%") }
}

func inRange(v, lo, hi float64, unit string) error {
	if math.IsNaN(v) || v < lo || v > hi {
		return fmt.Errorf("%g is out of range %g..%g %s", v, lo, hi, unit)
	}
	return nil
}

func noCheck(Profile) error { return nil }

// maxRateKbit is 10 Gbit/s, far above what veths forward through a router
// namespace on these machines.
const maxRateKbit = 10_000_000

// minRateKbit keeps a full-size frame's serialisation under 1.5 s.
const minRateKbit = 8

var profileFields = []field{
	{key: "name", str: true, set: func(p *Profile, v any) { p.Name = v.(string) }, check: func(p Profile) error {
		if p.Name == "" || strings.ContainsAny(p.Name, " \t/\\") {
			return fmt.Errorf("%q must be non-empty, without spaces or slashes", p.Name)
		}
		return nil
	}},
	{key: "description", str: true, set: func(p *Profile, v any) { p.Description = v.(string) }, check: noCheck},
	{key: "rate_kbit", set: func(p *Profile, v any) { p.RateKbit = v.(float64) }, check: func(p Profile) error {
		if p.RateKbit == 0 {
			return nil
		}
		return inRange(p.RateKbit, minRateKbit, maxRateKbit, "kbit/s (or 0 = unshaped)")
	}},
	{key: "loss_pct", set: func(p *Profile, v any) { p.LossPct = v.(float64) }, check: pctCheck(func(p Profile) float64 { return p.LossPct })},
	{key: "loss_correlation_pct", set: func(p *Profile, v any) { p.LossCorrelationPct = v.(float64) }, check: func(p Profile) error {
		if err := inRange(p.LossCorrelationPct, 0, 100, "%"); err != nil {
			return err
		}
		if p.LossCorrelationPct > 0 && p.LossPct == 0 {
			return errors.New("needs loss_pct > 0")
		}
		return nil
	}},
	{key: "delay_ms", set: func(p *Profile, v any) { p.DelayMs = v.(float64) }, check: func(p Profile) error { return inRange(p.DelayMs, 0, 60_000, "ms") }},
	{key: "jitter_ms", set: func(p *Profile, v any) { p.JitterMs = v.(float64) }, check: func(p Profile) error {
		if err := inRange(p.JitterMs, 0, 60_000, "ms"); err != nil {
			return err
		}
		if p.JitterMs > 0 && p.DelayMs == 0 {
			return errors.New("needs delay_ms > 0 (jitter varies the delay)")
		}
		return nil
	}},
	{key: "duplicate_pct", set: func(p *Profile, v any) { p.DuplicatePct = v.(float64) }, check: pctCheck(func(p Profile) float64 { return p.DuplicatePct })},
	{key: "duplex", str: true, set: func(p *Profile, v any) { p.Duplex = v.(string) }, check: func(p Profile) error {
		if p.Duplex != DuplexFull && p.Duplex != DuplexHalf {
			return fmt.Errorf("%q must be %q or %q", p.Duplex, DuplexFull, DuplexHalf)
		}
		return nil
	}},
	{key: "queue_ms", set: func(p *Profile, v any) { p.QueueMs = v.(float64) }, check: func(p Profile) error {
		if p.QueueMs == 0 {
			return nil
		}
		return inRange(p.QueueMs, 1, 10_000, "ms (or 0 = default)")
	}},
}

func fieldByKey(key string) (field, bool) {
	for _, f := range profileFields {
		if f.key == key {
			return f, true
		}
	}
	return field{}, false
}

func fieldKeys() string {
	keys := make([]string, len(profileFields))
	for i, f := range profileFields {
		keys[i] = f.key
	}
	return strings.Join(keys, ", ")
}
