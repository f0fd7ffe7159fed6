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
		baseID := fmt.Sprintf("%02d", b.index+1)
		for _, e := range b.fields {
			if e.key == "id" {
				baseID = e.val.Value
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
				entry{"name", b.line, &yaml.Node{Kind: yaml.ScalarNode, Value: Label(row), Line: b.line}})
			out = append(out, cs)
		}
	}
	return out
}
