package scenario

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// Vary is one swept field and its values, in order.
type Vary struct {
	Key    string
	Values []string
}

// ParseVary reads a command-line `key=v1,v2,...`.
func ParseVary(s string) (Vary, error) {
	key, vals, ok := strings.Cut(s, "=")
	if !ok || key == "" || vals == "" {
		return Vary{}, fmt.Errorf("--vary %q: want key=value1,value2", s)
	}
	if _, known := caseSetters[key]; !known || key == "paper" || key == "id" {
		return Vary{}, fmt.Errorf("--vary %q: unknown field %q (known: %s)", s, key, knownFields())
	}
	return Vary{Key: key, Values: strings.Split(vals, ",")}, nil
}

// Grid returns every combination of the varied values, first key slowest.
func Grid(vs []Vary) [][]Setting {
	grid := [][]Setting{nil}
	for _, v := range vs {
		var next [][]Setting
		for _, g := range grid {
			for _, val := range v.Values {
				row := append(append([]Setting(nil), g...), Setting{v.Key, val})
				next = append(next, row)
			}
		}
		grid = next
	}
	return grid
}

// Setting is one key=value of a grid point.
type Setting struct{ Key, Value string }

// Label is "key=value key=value".
func Label(row []Setting) string {
	parts := make([]string, len(row))
	for i, s := range row {
		parts[i] = s.Key + "=" + s.Value
	}
	return strings.Join(parts, " ")
}

// sweep expands a `sweep:` block (field: [values]) over the listed cases,
// or over the defaults when there are none.
func (p *parser) sweep(n *yaml.Node, bases []caseSource) []caseSource {
	var vs []Vary
	lines := map[string]int{}
	for _, e := range p.mapping(n, "sweep") {
		if _, ok := caseSetters[e.key]; !ok || e.key == "paper" || e.key == "id" {
			p.errorf(e.line, "sweep: cannot vary %q (known: %s)", e.key, knownFields())
			continue
		}
		vals, err := scalarList(e.val)
		if err != nil {
			p.errorf(e.line, "sweep %s: %v", e.key, err)
			continue
		}
		vs = append(vs, Vary{e.key, vals})
		lines[e.key] = e.line
	}
	if len(vs) == 0 {
		return bases
	}
	if len(bases) == 0 {
		bases = []caseSource{{line: n.Line}}
	}
	var out []caseSource
	for _, b := range bases {
		baseID, baseName := fmt.Sprintf("%02d", b.index+1), ""
		for _, e := range b.fields {
			switch e.key {
			case "id":
				baseID = e.val.Value
			case "name":
				baseName = e.val.Value + ", "
			}
		}
		for i, row := range Grid(vs) {
			cs := caseSource{line: b.line, index: len(out), quick: b.quick}
			cs.fields = append(cs.fields, b.fields...)
			for _, s := range row {
				cs.fields = append(cs.fields, entry{s.Key, lines[s.Key],
					&yaml.Node{Kind: yaml.ScalarNode, Value: s.Value, Line: lines[s.Key]}})
			}
			cs.fields = append(cs.fields,
				entry{"id", b.line, &yaml.Node{Kind: yaml.ScalarNode, Value: fmt.Sprintf("%s.%02d", baseID, i+1), Line: b.line}},
				entry{"name", b.line, &yaml.Node{Kind: yaml.ScalarNode, Value: baseName + Label(row), Line: b.line}})
			out = append(out, cs)
		}
	}
	return out
}

// SweepSuite builds a suite from the command line: base fields (key=value)
// applied over the built-in defaults, then every grid point of vs. Each
// case is validated; all problems are returned together.
func SweepSuite(name string, base []Setting, vs []Vary) (*Suite, error) {
	c := Defaults()
	c.File = "(command line)"
	c.DurableName, c.ClientID = "{prefix}-sub{sub}", "{prefix}-c{sub}"
	var errs Errors
	for _, s := range base {
		if err := SetField(&c, s.Key, s.Value); err != nil {
			errs = append(errs, fmt.Errorf("--set %s=%s: %w", s.Key, s.Value, err))
		}
	}
	s := &Suite{Name: name, File: c.File, Brokers: []string{DefaultBroker}, Networks: []string{"wireline"}, Reps: 1}
	varied := map[string]bool{}
	for _, v := range vs {
		varied[v.Key] = true
	}
	for i, row := range Grid(vs) {
		cc := c
		for _, set := range row {
			if err := SetField(&cc, set.Key, set.Value); err != nil {
				errs = append(errs, fmt.Errorf("--vary %s=%s: %w", set.Key, set.Value, err))
			}
		}
		cc.ID = fmt.Sprintf("%02d", i+1)
		cc.Name = Label(row)
		for _, v := range cc.validate() {
			if varied[v.field] {
				errs = append(errs, fmt.Errorf("case %s (%s): %s", cc.ID, cc.Name, v.msg))
			} else {
				errs = append(errs, fmt.Errorf("%s", v.msg))
			}
		}
		s.Cases = append(s.Cases, cc)
	}
	if len(errs) > 0 {
		return nil, dedupe(errs)
	}
	return s, nil
}

// dedupe drops repeated messages (a bad base value fails every grid point).
func dedupe(errs Errors) Errors {
	seen := map[string]bool{}
	var out Errors
	for _, e := range errs {
		if !seen[e.Error()] {
			seen[e.Error()] = true
			out = append(out, e)
		}
	}
	return out
}
