package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Options change how a file is resolved.
type Options struct {
	// Quick applies the suite's and each case's `quick:` overrides (tests, CI).
	Quick bool
}

// Errors is every problem found in a file, each prefixed with file:line.
type Errors []error

func (e Errors) Error() string {
	lines := make([]string, len(e))
	for i, err := range e {
		lines[i] = err.Error()
	}
	return strings.Join(lines, "\n")
}

// posError is an error at a position of a scenario file.
type posError struct {
	file string
	line int
	msg  string
}

func (e posError) Error() string { return fmt.Sprintf("%s:%d: %s", e.file, e.line, e.msg) }

// Load reads and validates a scenario file. On any error it returns all
// errors found (as Errors) and no suite: nothing must be run.
func Load(path string, o Options) (*Suite, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data, o)
}

// Parse is Load on bytes; file is used in error messages only.
func Parse(file string, data []byte, o Options) (*Suite, error) {
	p := &parser{file: file}
	s := p.suite(data, o)
	if len(p.errs) > 0 {
		return nil, dedupe(p.errs) // with --quick a case is resolved twice
	}
	return s, nil
}

type parser struct {
	file string
	errs Errors
}

func (p *parser) errorf(line int, format string, a ...any) {
	p.errs = append(p.errs, posError{p.file, line, fmt.Sprintf(format, a...)})
}

// entry is one key: value of a mapping, with the key's line.
type entry struct {
	key  string
	line int
	val  *yaml.Node
}

// mapping returns the entries of a mapping node, reporting duplicates.
func (p *parser) mapping(n *yaml.Node, what string) []entry {
	if n.Kind != yaml.MappingNode {
		p.errorf(n.Line, "%s must be a mapping (key: value lines)", what)
		return nil
	}
	seen := map[string]int{}
	var out []entry
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if prev, dup := seen[k.Value]; dup {
			p.errorf(k.Line, "%q given twice in %s (first at line %d)", k.Value, what, prev)
			continue
		}
		seen[k.Value] = k.Line
		out = append(out, entry{k.Value, k.Line, v})
	}
	return out
}

func (p *parser) suite(data []byte, o Options) *Suite {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if line := controlCharLine(data); line > 0 && !strings.HasPrefix(msg, "line ") {
			p.errorf(line, "%s (is it a scenario file?)", msg)
			return nil
		}
		p.errs = append(p.errs, fmt.Errorf("%s: %s", p.file, msg))
		return nil
	}
	if len(doc.Content) == 0 {
		p.errorf(1, "empty scenario file")
		return nil
	}
	s := &Suite{File: p.file, Brokers: []string{DefaultBroker}, Networks: []string{"wireline"}, Reps: 1}
	var defaults, quick []entry
	var casesNode, sweepNode *yaml.Node
	casesLine := 0
	var perNetwork map[string]Phases
	perNetworkLine := 0
	for _, e := range p.mapping(doc.Content[0], "the scenario file") {
		switch e.key {
		case "suite":
			s.Name = p.str(e)
		case "description":
			p.str(e)
		case "brokers":
			s.Brokers, s.BrokersLine = p.strList(e), e.line
		case "networks":
			s.Networks, s.NetworksLine = p.strList(e), e.line
		case "reps":
			s.Reps = p.int(e)
			if s.Reps < 1 {
				p.errorf(e.line, "reps must be at least 1, got %d", s.Reps)
			}
		case "defaults":
			defaults = p.caseFields(e.val, "defaults")
		case "quick":
			quick = p.caseFields(e.val, "quick")
		case "cases":
			casesNode, casesLine = e.val, e.line
		case "sweep":
			sweepNode = e.val
		case "ci":
			s.RepsRule.CI = p.ci(e)
		case "max_reps":
			s.RepsRule.MaxReps = p.maxReps(e)
		case "order":
			s.RandomOrder = p.order(e)
		case "per_network":
			perNetwork, perNetworkLine = p.perNetwork(e.val), e.line
		case "parallel":
			s.Parallel = p.int(e)
			if s.Parallel < 1 {
				p.errorf(e.line, "parallel must be at least 1, got %d", s.Parallel)
			}
		default:
			p.errorf(e.line, "unknown key %q (want suite, description, brokers, networks, reps, ci, max_reps, order, per_network, parallel, defaults, quick, sweep, cases)", e.key)
		}
	}
	if s.Name == "" {
		p.errorf(doc.Content[0].Line, "missing `suite:` name")
	}
	if perNetwork != nil {
		s.PerNetwork = perNetwork
		p.checkPerNetwork(s, perNetworkLine)
		if o.Quick { // quick runs keep their own short phases
			s.PerNetwork = nil
		}
	}
	if o.Quick { // a quick run exercises the pipeline: its reps are its own
		s.RepsRule = RepsRule{}
	}
	var bases []caseSource
	if casesNode != nil {
		if casesNode.Kind != yaml.SequenceNode {
			p.errorf(casesLine, "cases must be a list")
		} else {
			for i, cn := range casesNode.Content {
				bases = append(bases, p.caseSource(cn, i))
			}
		}
	}
	bases = p.caseSweeps(bases)
	if sweepNode != nil {
		bases = p.sweep(sweepNode, bases)
	}
	if len(bases) == 0 && len(p.errs) == 0 {
		p.errorf(casesLine+1, "no cases: give `cases:` or `sweep:`")
	}
	ids := map[string]int{}
	for _, b := range bases {
		layers := [][]entry{defaults, b.fields}
		c, ok := p.resolve(b, layers)
		if o.Quick {
			full := c.Factors
			c, ok = p.resolve(b, append(layers, quick, b.quick))
			if ok && full != c.Factors {
				c.Full = &full
			}
		}
		if !ok {
			continue
		}
		if prev, dup := ids[c.ID]; dup {
			p.errorf(b.line, "case id %q used twice (first at line %d)", c.ID, prev)
			continue
		}
		ids[c.ID] = b.line
		s.Cases = append(s.Cases, c)
	}
	return s
}

// caseSource is one case as written: its own fields and quick overrides.
type caseSource struct {
	line   int
	index  int
	fields []entry
	quick  []entry
	sweep  *yaml.Node // the case's own sweep: block, if any
}

// caseSweeps expands each case that has its own sweep: block into one case
// per grid point (ids <id>.01, ...), in place.
func (p *parser) caseSweeps(bases []caseSource) []caseSource {
	var out []caseSource
	for _, b := range bases {
		if b.sweep == nil {
			out = append(out, b)
			continue
		}
		for _, e := range p.sweep(b.sweep, []caseSource{b}) {
			e.index = len(out)
			out = append(out, e)
		}
	}
	return out
}

func (p *parser) caseSource(n *yaml.Node, index int) caseSource {
	cs := caseSource{line: n.Line, index: index}
	for _, e := range p.mapping(n, "a case") {
		if e.key == "quick" {
			cs.quick = p.caseFields(e.val, "quick")
			continue
		}
		if e.key == "sweep" {
			cs.sweep = e.val
			continue
		}
		if _, ok := caseSetters[e.key]; !ok {
			p.errorf(e.line, "unknown field %q in a case (known: %s)", e.key, knownFields())
			continue
		}
		cs.fields = append(cs.fields, e)
	}
	return cs
}

// caseFields checks that every key of a block is a known case field.
func (p *parser) caseFields(n *yaml.Node, what string) []entry {
	es := p.mapping(n, what)
	out := es[:0]
	for _, e := range es {
		if _, ok := caseSetters[e.key]; !ok {
			p.errorf(e.line, "unknown field %q in %s (known: %s)", e.key, what, knownFields())
			continue
		}
		out = append(out, e)
	}
	return out
}

func knownFields() string {
	keys := make([]string, 0, len(caseSetters))
	for k := range caseSetters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

// Defaults are the built-in values every case starts from.
func Defaults() Case {
	return Case{
		Factors: Factors{
			Publishers: 1, Subscribers: 1, Topics: 1,
			Subscription: NonDurable, Delivery: NonPersistent, Ack: AckAuto,
			Body: BodyBytes, Size: 100,
		},
		Warmup: 2 * time.Second, Window: 10 * time.Second, Drain: 5 * time.Second,
		PublishWindow: 0, AckEvery: 100, AckInterval: 100 * time.Millisecond,
	}
}

// resolve applies layers over the built-in defaults, then validates.
func (p *parser) resolve(b caseSource, layers [][]entry) (Case, bool) {
	c := Defaults()
	c.File, c.Line = p.file, b.line
	c.ID = fmt.Sprintf("%02d", b.index+1)
	lines := map[string]int{}
	unset := map[string]bool{} // fields whose value was refused: not validated again
	before := len(p.errs)
	for _, layer := range layers {
		for _, e := range layer {
			if err := caseSetters[e.key](&c, e.val); err != nil {
				line := e.val.Line
				if le, ok := err.(*lineError); ok {
					line = le.line
				}
				p.errorf(line, "%s: %v", e.key, err)
				unset[e.key] = true
				continue
			}
			delete(unset, e.key)
			lines[e.key] = e.val.Line
		}
	}
	at := func(key string) int {
		if l, ok := lines[key]; ok {
			return l
		}
		return b.line
	}
	for _, v := range c.validate() {
		if unset[v.field] {
			continue
		}
		line := v.line
		if line == 0 {
			line = at(v.field)
		}
		p.errorf(line, "%s", v.msg)
	}
	return c, len(p.errs) == before
}

func (p *parser) str(e entry) string {
	if e.val.Kind != yaml.ScalarNode {
		p.errorf(e.line, "%s must be a plain value", e.key)
		return ""
	}
	return e.val.Value
}

func (p *parser) int(e entry) int {
	n, err := parseInt(e.val)
	if err != nil {
		p.errorf(e.line, "%s: %v", e.key, err)
	}
	return n
}

func (p *parser) strList(e entry) []string {
	vals, err := scalarList(e.val)
	if err != nil {
		p.errorf(e.line, "%s: %v", e.key, err)
	}
	return vals
}

// scalarList reads `[a, b]`, a block list, or a single scalar.
func scalarList(n *yaml.Node) ([]string, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		return []string{n.Value}, nil
	case yaml.SequenceNode:
		out := make([]string, 0, len(n.Content))
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return nil, errors.New("list items must be plain values")
			}
			out = append(out, c.Value)
		}
		if len(out) == 0 {
			return nil, errors.New("empty list")
		}
		return out, nil
	}
	return nil, errors.New("want a value or a list of values")
}

func scalar(n *yaml.Node) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", errors.New("must be a plain value")
	}
	return n.Value, nil
}

func parseInt(n *yaml.Node) (int, error) {
	s, err := scalar(n)
	if err != nil {
		return 0, err
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number", s)
	}
	return v, nil
}
