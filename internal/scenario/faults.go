package scenario

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// FaultKind is what a fault does.
type FaultKind string

// Fault kinds.
const (
	// LinkOutage drops every packet in both directions: the mobile host is
	// out of range.
	LinkOutage FaultKind = "link-outage"
	// LinkLoss raises the link's loss to LossPct (total) while it lasts: a
	// degradation step.
	LinkLoss FaultKind = "link-loss"
	// SubscriberDisconnect closes subscribers' connections (durable
	// subscriptions stay) and connects them again when it ends.
	SubscriberDisconnect FaultKind = "subscriber-disconnect"
	// BrokerRestart kills the broker process (SIGKILL) and starts it again,
	// with the same store, when it ends.
	BrokerRestart FaultKind = "broker-restart"
)

// FaultKinds lists the kinds a scenario may name.
var FaultKinds = []FaultKind{LinkOutage, LinkLoss, SubscriberDisconnect, BrokerRestart}

// IsLink reports whether the fault acts on the emulated link.
func (k FaultKind) IsLink() bool { return k == LinkOutage || k == LinkLoss }

// Fault is one entry of a case's fault schedule, applied during the
// measurement window: it starts At after the window opens and lasts For.
type Fault struct {
	Kind FaultKind     `json:"kind"`
	At   time.Duration `json:"-"`
	For  time.Duration `json:"-"`
	// LossPct is the link's total loss during a link-loss step, in percent.
	LossPct float64 `json:"loss_pct,omitempty"`
	// Subscribers is how many subscribers a subscriber-disconnect takes
	// away (the first ones by index); 0 means all.
	Subscribers int `json:"subscribers,omitempty"`
	// AtS and ForS mirror At and For in records.
	AtS  float64 `json:"at_s"`
	ForS float64 `json:"for_s"`

	Line int `json:"-"` // scenario line of the entry
}

// End is when the fault ends, from the window's start.
func (f Fault) End() time.Duration { return f.At + f.For }

func (f Fault) String() string {
	at, dur := f.At, f.For
	if at == 0 && dur == 0 { // read from a record: only the seconds were kept
		at, dur = time.Duration(f.AtS*float64(time.Second)), time.Duration(f.ForS*float64(time.Second))
	}
	s := fmt.Sprintf("%s at %s for %s", f.Kind, at, dur)
	switch {
	case f.Kind == LinkLoss:
		s += fmt.Sprintf(" (%g %% loss)", f.LossPct)
	case f.Kind == SubscriberDisconnect && f.Subscribers > 0:
		s += fmt.Sprintf(" (%d subscribers)", f.Subscribers)
	}
	return s
}

// HasFault reports whether the case's schedule has a fault of kind k.
func (c Case) HasFault(k FaultKind) bool {
	for _, f := range c.Faults {
		if f.Kind == k {
			return true
		}
	}
	return false
}

// lineError is a setter error that belongs to a line other than the
// field's own (an entry of a list).
type lineError struct {
	line int
	msg  string
}

func (e *lineError) Error() string { return e.msg }

// setFaults parses `faults:`, a list of mappings such as
// {kind: link-outage, at: 1s, for: 3s}.
func setFaults(c *Case, n *yaml.Node) error {
	if n.Kind != yaml.SequenceNode {
		return fmt.Errorf("must be a list of faults, e.g. - {kind: link-outage, at: 1s, for: 3s}")
	}
	c.Faults = nil
	for i, item := range n.Content {
		f, err := parseFault(item)
		if err != nil {
			return &lineError{err.line, fmt.Sprintf("fault %d: %s", i+1, err.msg)}
		}
		c.Faults = append(c.Faults, f)
	}
	return nil
}

func parseFault(n *yaml.Node) (Fault, *lineError) {
	f := Fault{Line: n.Line}
	if n.Kind != yaml.MappingNode {
		return f, &lineError{n.Line, "must be a mapping with kind, at, for (and loss or subscribers)"}
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		bad := func(format string, a ...any) *lineError {
			return &lineError{v.Line, k.Value + ": " + fmt.Sprintf(format, a...)}
		}
		if seen[k.Value] {
			return f, &lineError{k.Line, fmt.Sprintf("%q given twice", k.Value)}
		}
		seen[k.Value] = true
		s, err := scalar(v)
		if err != nil {
			return f, bad("%v", err)
		}
		switch k.Value {
		case "kind":
			if err := oneOf(FaultKind(s), FaultKinds); err != nil {
				return f, bad("%v", err)
			}
			f.Kind = FaultKind(s)
		case "at", "for":
			d, err := time.ParseDuration(s)
			if err != nil {
				return f, bad("%q is not a duration (e.g. 500ms, 2s)", s)
			}
			if k.Value == "at" {
				f.At = d
			} else {
				f.For = d
			}
		case "loss":
			x, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
			if err != nil {
				return f, bad("%q is not a percentage (e.g. 20 or 20%%)", s)
			}
			f.LossPct = x
		case "subscribers":
			x, err := strconv.Atoi(s)
			if err != nil {
				return f, bad("%q is not a whole number", s)
			}
			f.Subscribers = x
		default:
			return f, &lineError{k.Line, fmt.Sprintf("unknown fault field %q (known: kind, at, for, loss, subscribers)", k.Value)}
		}
	}
	if f.Kind == "" {
		return f, &lineError{n.Line, "kind is missing (one of " + kindNames() + ")"}
	}
	if !seen["at"] || !seen["for"] {
		return f, &lineError{n.Line, "at and for are required (when after the window opens, and for how long)"}
	}
	f.AtS, f.ForS = f.At.Seconds(), f.For.Seconds()
	return f, nil
}

func kindNames() string {
	s := make([]string, len(FaultKinds))
	for i, k := range FaultKinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// validateFaults checks the schedule against the case: every fault inside
// the window, link faults not overlapping each other, fields that belong
// to the kind.
func (c *Case) validateFaults(add func(line int, format string, a ...any)) {
	var lastLinkEnd time.Duration = -1
	for i, f := range c.Faults {
		where := fmt.Sprintf("fault %d (%s)", i+1, f.Kind)
		if f.At < 0 {
			add(f.Line, "%s: at must not be negative, got %s", where, f.At)
		}
		if f.For <= 0 {
			add(f.Line, "%s: for must be positive, got %s", where, f.For)
		}
		if f.End() > c.Window {
			add(f.Line, "%s: ends at %s after the window opens, after the %s window: faults must end inside the window so recovery is measured",
				where, f.End(), c.Window)
		}
		if f.Kind == LinkLoss && !(f.LossPct > 0 && f.LossPct < 100) {
			add(f.Line, "%s: loss must be between 0 and 100 %% (exclusive; 100 %% is a link-outage), got %g", where, f.LossPct)
		}
		if f.Kind != LinkLoss && f.LossPct != 0 {
			add(f.Line, "%s: loss only applies to link-loss", where)
		}
		if f.Kind != SubscriberDisconnect && f.Subscribers != 0 {
			add(f.Line, "%s: subscribers only applies to subscriber-disconnect", where)
		}
		if f.Subscribers < 0 || f.Subscribers > c.Subscribers {
			add(f.Line, "%s: subscribers must be 0 (all) to %d, got %d", where, c.Subscribers, f.Subscribers)
		}
		if f.Kind.IsLink() {
			if f.At < lastLinkEnd {
				add(f.Line, "%s: overlaps the previous link fault (ends at %s); give degradation steps one after another", where, lastLinkEnd)
			}
			lastLinkEnd = f.End()
		}
	}
}
