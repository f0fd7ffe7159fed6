package linkinfo

import (
	"errors"
	"fmt"
	"strconv"

	"gopkg.in/yaml.v3"
)

// ParseProfile decodes one profile document, reporting file:line for
// every problem. defaultName is used when the file has no name key.
func ParseProfile(file string, data []byte, defaultName string) (Profile, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return Profile{}, fmt.Errorf("%w: %s: %v", ErrBadProfile, file, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return Profile{}, fmt.Errorf("%w: %s: empty file", ErrBadProfile, file)
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return Profile{}, posErr(file, root, "a profile must be a mapping of keys to values")
	}
	p := Profile{Duplex: DuplexFull}
	line := map[string]int{}
	var errs []error // every problem of the file, each with its line
	refused := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		f, ok := fieldByKey(k.Value)
		if !ok {
			errs = append(errs, posErr(file, k, "unknown field %q (known: %s)", k.Value, fieldKeys()))
			continue
		}
		if _, dup := line[k.Value]; dup {
			errs = append(errs, posErr(file, k, "field %q given twice (first at line %d)", k.Value, line[k.Value]))
			continue
		}
		line[k.Value] = k.Line
		val, err := scalar(v, f.str)
		if err != nil {
			errs = append(errs, posErr(file, v, "%s: %v", k.Value, err))
			refused[k.Value] = true
			continue
		}
		f.set(&p, val)
	}
	if p.Name == "" {
		p.Name = defaultName
	}
	for _, f := range profileFields {
		if refused[f.key] {
			continue
		}
		if err := f.check(p); err != nil {
			n := root
			if l, ok := line[f.key]; ok {
				n = &yaml.Node{Line: l}
			}
			errs = append(errs, posErr(file, n, "%s: %v", f.key, err))
		}
	}
	if len(errs) > 0 {
		return Profile{}, errors.Join(errs...)
	}
	return p, nil
}

// scalar decodes a string or a number node.
func scalar(n *yaml.Node, wantString bool) (any, error) {
	if n.Kind != yaml.ScalarNode {
		return nil, fmt.Errorf("want a single value, got a %s", kindName(n.Kind))
	}
	if wantString {
		if n.Tag != "!!str" {
			return nil, fmt.Errorf("want a string, got %q", n.Value)
		}
		return n.Value, nil
	}
	if n.Tag != "!!int" && n.Tag != "!!float" {
		return nil, fmt.Errorf("want a number, got %q", n.Value)
	}
	v, err := strconv.ParseFloat(n.Value, 64)
	if err != nil {
		return nil, fmt.Errorf("want a number, got %q", n.Value)
	}
	return v, nil
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	}
	return "node"
}

func posErr(file string, n *yaml.Node, format string, a ...any) error {
	return fmt.Errorf("%w: %s:%d: %s", ErrBadProfile, file, n.Line, fmt.Sprintf(format, a...))
}
