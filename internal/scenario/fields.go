package scenario

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// setter applies one field value to a case.
type setter func(c *Case, n *yaml.Node) error

// caseSetters lists every field a case (or defaults/quick/sweep) may set.
var caseSetters = map[string]setter{
	"id":           strField(func(c *Case) *string { return &c.ID }),
	"name":         strField(func(c *Case) *string { return &c.Name }),
	"note":         strField(func(c *Case) *string { return &c.Note }),
	"durable_name": strField(func(c *Case) *string { return &c.DurableName }),
	"client_id":    strField(func(c *Case) *string { return &c.ClientID }),
	"publishers":   intField(func(c *Case) *int { return &c.Publishers }),
	"subscribers": func(c *Case, n *yaml.Node) error {
		v, err := parseInt(n)
		c.Subscribers, c.subscribersGiven = v, err == nil
		return err
	},
	"topics":            intField(func(c *Case) *int { return &c.Topics }),
	"size":              intField(func(c *Case) *int { return &c.Size }),
	"publish_window":    intField(func(c *Case) *int { return &c.PublishWindow }),
	"in_flight":         intField(func(c *Case) *int { return &c.InFlight }),
	"ack_every":         intField(func(c *Case) *int { return &c.AckEvery }),
	"warmup":            durField(func(c *Case) *time.Duration { return &c.Warmup }),
	"window":            durField(func(c *Case) *time.Duration { return &c.Window }),
	"drain":             durField(func(c *Case) *time.Duration { return &c.Drain }),
	"ack_interval":      durField(func(c *Case) *time.Duration { return &c.AckInterval }),
	"model":             enumField(Models, func(c *Case) *Model { return &c.Model }),
	"subscription":      enumField(Subscriptions, func(c *Case) *Subscription { return &c.Subscription }),
	"delivery":          enumField(Deliveries, func(c *Case) *Delivery { return &c.Delivery }),
	"ack":               enumField(AckModes, func(c *Case) *AckMode { return &c.Ack }),
	"body":              enumField(BodyTypes, func(c *Case) *BodyType { return &c.Body }),
	"selector":          boolField(func(c *Case) *bool { return &c.Selector }),
	"capacity":          boolField(func(c *Case) *bool { return &c.Capacity }),
	"topic_round_robin": boolField(func(c *Case) *bool { return &c.TopicRoundRobin }),
	"tls":               boolField(func(c *Case) *bool { return &c.TLS }),
	"connect_unshaped":  boolField(func(c *Case) *bool { return &c.ConnectUnshaped }),
	"filter":            enumField(FilterKinds, func(c *Case) *FilterKind { return &c.Filter }),
	"filter_form":       enumField(FilterForms, func(c *Case) *FilterForm { return &c.FilterForm }),
	"extra_values":      enumField(ExtraKinds, func(c *Case) *ExtraValues { return &c.ExtraValues }),
	"and_position":      enumField(AndPositions, func(c *Case) *AndPosition { return &c.AndPosition }),
	"values":            intField(func(c *Case) *int { return &c.Values }),
	"matching":          intField(func(c *Case) *int { return &c.Matching }),
	"extra_filters":     intField(func(c *Case) *int { return &c.ExtraFilters }),
	"or_values":         intField(func(c *Case) *int { return &c.OrValues }),
	"and_terms":         intField(func(c *Case) *int { return &c.AndTerms }),
	"and_properties":    intField(func(c *Case) *int { return &c.AndProperties }),
	"brokers": func(c *Case, n *yaml.Node) error {
		vals, err := scalarList(n)
		if err != nil {
			return err
		}
		if len(vals) == 1 && strings.Contains(vals[0], ",") { // --vary/--set give one string
			vals = strings.Split(vals[0], ",")
		}
		c.Brokers = vals
		return nil
	},
	"rate": func(c *Case, n *yaml.Node) error {
		s, err := scalar(n)
		if err != nil {
			return err
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number (msgs/s per publisher, 0 = saturate)", s)
		}
		c.Rate = v
		return nil
	},
	"pace_tick": func(c *Case, n *yaml.Node) error {
		s, err := scalar(n)
		if err != nil {
			return err
		}
		if s == "auto" {
			c.PaceTick, c.PaceTickSet = 0, false
			return nil
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("%q is not auto or a duration (e.g. 1ms, 250us; 0 = wake for every message)", s)
		}
		c.PaceTick, c.PaceTickSet = d, true
		return nil
	},
	"faults": setFaults,
	"paper": func(c *Case, n *yaml.Node) error {
		if n.Kind != yaml.MappingNode {
			return errors.New("must be a mapping of metric: value")
		}
		c.Paper = map[string]float64{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, n.Content[i+1].Value
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("%s: %q is not a number", k, v)
			}
			c.Paper[k] = f
		}
		return nil
	},
}

func boolField(get func(*Case) *bool) setter {
	return func(c *Case, n *yaml.Node) error {
		s, err := scalar(n)
		if err != nil {
			return err
		}
		switch s {
		case "true", "on", "yes":
			*get(c) = true
		case "false", "off", "no":
			*get(c) = false
		default:
			return fmt.Errorf("%q is not on/off (true/false)", s)
		}
		return nil
	}
}

func strField(get func(*Case) *string) setter {
	return func(c *Case, n *yaml.Node) error {
		s, err := scalar(n)
		*get(c) = s
		return err
	}
}

func intField(get func(*Case) *int) setter {
	return func(c *Case, n *yaml.Node) error {
		v, err := parseInt(n)
		*get(c) = v
		return err
	}
}

func durField(get func(*Case) *time.Duration) setter {
	return func(c *Case, n *yaml.Node) error {
		s, err := scalar(n)
		if err != nil {
			return err
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("%q is not a duration (e.g. 500ms, 10s, 2m)", s)
		}
		*get(c) = d
		return nil
	}
}

func enumField[T ~string](allowed []T, get func(*Case) *T) setter {
	return func(c *Case, n *yaml.Node) error {
		s, err := scalar(n)
		if err != nil {
			return err
		}
		if err := oneOf(T(s), allowed); err != nil {
			return err
		}
		*get(c) = T(s)
		return nil
	}
}

// SetField sets one case field from its textual value, as `pslab sweep
// --vary` and flags do. It accepts the same keys and values as a file.
func SetField(c *Case, key, value string) error {
	set, ok := caseSetters[key]
	if !ok {
		return fmt.Errorf("unknown field %q (known: %s)", key, knownFields())
	}
	if key == "paper" || key == "faults" {
		return fmt.Errorf("%s can only be given in a scenario file", key)
	}
	return set(c, &yaml.Node{Kind: yaml.ScalarNode, Value: value})
}

// violation is a validation failure of one field (line: of an entry
// inside the field, when not 0).
type violation struct {
	field, msg string
	line       int
}

// validate checks a resolved case; each violation names the field whose
// line is reported.
func (c *Case) validate() []violation {
	var v []violation
	add := func(field, format string, a ...any) {
		v = append(v, violation{field: field, msg: fmt.Sprintf(format, a...)})
	}
	c.normalizeFilter()
	c.validateFilter(add)
	for _, f := range []struct {
		name string
		n    int
	}{{"publishers", c.Publishers}, {"subscribers", c.Subscribers}, {"topics", c.Topics}} {
		if f.n < 1 {
			add(f.name, "%s must be at least 1, got %d", f.name, f.n)
		}
	}
	if len(v) == 0 {
		if c.Topics > c.Subscribers || (c.Topics > c.Publishers && !c.TopicRoundRobin) {
			add("topics", "topics (%d) must not exceed publishers (%d) or subscribers (%d): every topic needs a publisher and a subscriber (topic_round_robin: on lets each publisher send to every topic)",
				c.Topics, c.Publishers, c.Subscribers)
		}
		derived := c.DeriveModel()
		if c.Model == "" {
			c.Model = derived
		} else if c.Model != derived {
			add("model", "model %s does not match %d publishers / %d subscribers / %d topics (that is %s)",
				c.Model, c.Publishers, c.Subscribers, c.Topics, derived)
		}
	}
	if c.Size < 1 {
		add("size", "size must be at least 1 byte, got %d", c.Size)
	}
	c.validateLimits(add)
	if c.Window <= 0 {
		add("window", "window must be positive, got %s", c.Window)
	}
	if c.Warmup < 0 {
		add("warmup", "warmup must not be negative, got %s", c.Warmup)
	}
	if c.Drain < 0 {
		add("drain", "drain must not be negative, got %s", c.Drain)
	}
	if c.Rate < 0 {
		add("rate", "rate must not be negative (0 = saturate), got %g", c.Rate)
	}
	if c.PaceTickSet && c.PaceTick < 0 {
		add("pace_tick", "pace_tick must not be negative (auto, or 0 = wake for every message), got %s", c.PaceTick)
	}
	if c.PublishWindow < 0 {
		add("publish_window", "publish_window must not be negative (0 = driver default), got %d", c.PublishWindow)
	}
	if c.InFlight < 0 {
		add("in_flight", "in_flight must not be negative (0 = no bound), got %d", c.InFlight)
	}
	if c.InFlight > 0 && len(c.Faults) > 0 {
		add("in_flight", "in_flight cannot be combined with faults: messages a fault loses are never delivered, and the bound would hold the publishers back")
	}
	if c.AckEvery < 1 {
		add("ack_every", "ack_every must be at least 1, got %d", c.AckEvery)
	}
	if c.AckInterval <= 0 {
		add("ack_interval", "ack_interval must be positive, got %s", c.AckInterval)
	}
	if c.Subscription == Durable {
		if c.DurableName == "" {
			add("subscription", "a durable subscription needs a name source: set durable_name (e.g. \"{prefix}-sub{sub}\")")
		}
		if c.ClientID == "" {
			add("subscription", "a durable subscription needs a client id source: set client_id (e.g. \"{prefix}-c{sub}\")")
		}
	}
	c.validateFaults(func(line int, format string, a ...any) {
		v = append(v, violation{field: "faults", msg: fmt.Sprintf(format, a...), line: line})
	})
	return v
}
