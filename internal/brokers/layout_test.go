package brokers_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Each broker lives in its own package: outside internal/brokers/NAME no
// non-test Go code names broker NAME (a string that is its name or starts
// with its URL scheme, an identifier that contains it), imports its
// package (but internal/brokers/all) or its client library. The one
// exceptions are the scenario default (scenario.DefaultBroker) and
// internal/testbroker, which exists to start each broker for tests.
// Comments and prose in help texts are not looked at.

// protocolWords are words that name a broker's protocol or parts of it,
// by the package that owns them, beside the package's own name (every
// package under internal/brokers but all/ is a broker: a new one is
// checked with no line here).
var protocolWords = map[string][]string{
	"nats":    {"jetstream"},
	"artemis": {"stomp"},
}

// brokerClients are the client libraries only a broker package imports.
var brokerClients = map[string][]string{
	"nats":    {"github.com/nats-io/"},
	"artemis": {"github.com/go-stomp/"},
}

// testSupport are packages that exist for tests and start brokers by
// name.
var testSupport = map[string]bool{"internal/testbroker": true}

// allowed are the places a broker's name may appear: file (from the
// module root) and the declared name.
var allowed = map[string]string{
	"internal/scenario/case.go": "DefaultBroker",
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

func TestNoBrokerNameOutsideItsPackage(t *testing.T) {
	root := moduleRoot(t)
	dirs, err := os.ReadDir(filepath.Join(root, "internal", "brokers"))
	if err != nil {
		t.Fatal(err)
	}
	brokerWords := map[string][]string{}
	for _, d := range dirs {
		if d.IsDir() && d.Name() != "all" {
			brokerWords[d.Name()] = append([]string{d.Name()}, protocolWords[d.Name()]...)
		}
	}
	for _, b := range []string{"nats", "artemis", "fake"} {
		if _, ok := brokerWords[b]; !ok {
			t.Fatalf("no internal/brokers/%s: the test looks in the wrong place", b)
		}
	}
	var problems []string
	err = filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if e.IsDir() {
			if strings.HasPrefix(e.Name(), ".") || rel == "results" || rel == "runs" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || testSupport[filepath.ToSlash(filepath.Dir(rel))] {
			return nil
		}
		problems = append(problems, brokerNamesIn(t, root, rel, brokerWords)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
}

// brokerNamesIn lists where the file rel names a broker other than the
// one whose package it is in.
func brokerNamesIn(t *testing.T, root, rel string, brokerWords map[string][]string) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(root, rel), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.ToSlash(filepath.Dir(rel))
	var problems []string
	report := func(pos token.Pos, what string) {
		problems = append(problems, fset.Position(pos).String()[len(root)+1:]+": "+what)
	}
	for broker, words := range brokerWords {
		own := "internal/brokers/" + broker
		if dir == own || strings.HasPrefix(dir, own+"/") {
			continue
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if (p == "pslab/"+own || strings.HasPrefix(p, "pslab/"+own+"/")) && dir != "internal/brokers/all" {
				report(imp.Pos(), "imports "+p)
			}
			for _, c := range brokerClients[broker] {
				if strings.HasPrefix(p, c) {
					report(imp.Pos(), "imports "+p+", the client library of "+broker)
				}
			}
		}
		exempt := map[ast.Node]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			if vs, ok := n.(*ast.ValueSpec); ok {
				for _, id := range vs.Names {
					if allowed[filepath.ToSlash(rel)] == id.Name {
						for _, v := range vs.Values {
							exempt[v] = true
						}
					}
				}
			}
			if exempt[n] {
				return false
			}
			switch n := n.(type) {
			case *ast.BasicLit:
				if n.Kind != token.STRING {
					return true
				}
				v, err := strconv.Unquote(n.Value)
				if err != nil {
					return true
				}
				v = strings.ToLower(v)
				for _, w := range words {
					if v == w || strings.HasPrefix(v, w+"://") {
						report(n.Pos(), "the string "+n.Value+" names "+broker)
					}
				}
			case *ast.Ident:
				for _, w := range words {
					if namesWord(n.Name, w) {
						report(n.Pos(), "the identifier "+n.Name+" names "+broker)
					}
				}
			}
			return true
		})
	}
	return problems
}

// namesWord tells whether identifier id has w as one of its words, or as
// two adjacent ones (JetStream): NATSMaxConn and natsRoot do,
// ChainPriorityNATSource (NAT, Source) does not.
func namesWord(id, w string) bool {
	parts := identWords(id)
	for i, p := range parts {
		if p == w || (i+1 < len(parts) && p+parts[i+1] == w) {
			return true
		}
	}
	return false
}

// identWords splits an identifier into its lower-case words at
// underscores and case changes: "NATSMaxConn" is nats, max, conn.
func identWords(id string) []string {
	var out []string
	r := []rune(id)
	start := 0
	isUp := func(c rune) bool { return c >= 'A' && c <= 'Z' }
	isLow := func(c rune) bool { return c >= 'a' && c <= 'z' }
	flush := func(end int) {
		if end > start {
			out = append(out, strings.ToLower(string(r[start:end])))
		}
		start = end
	}
	for i := 0; i < len(r); i++ {
		switch {
		case r[i] == '_':
			flush(i)
			start = i + 1
		case i > start && isUp(r[i]) && isLow(r[i-1]):
			flush(i) // natsRoot: nats | Root
		case i > start && isUp(r[i]) && i+1 < len(r) && isLow(r[i+1]) && isUp(r[i-1]):
			flush(i) // NATSMax: NATS | Max
		}
	}
	flush(len(r))
	return out
}

func TestIdentWords(t *testing.T) {
	for id, want := range map[string]string{
		"NATSMaxConn":            "nats max conn",
		"natsRoot":               "nats root",
		"ChainPriorityNATSource": "chain priority nat source",
		"DefaultArtemisVersion":  "default artemis version",
		"stomp_conn":             "stomp conn",
		"JetStream":              "jet stream",
	} {
		if got := strings.Join(identWords(id), " "); got != want {
			t.Errorf("identWords(%q) = %q, want %q", id, got, want)
		}
	}
	if !namesWord("JetStream", "jetstream") || namesWord("ChainPriorityNATSource", "nats") {
		t.Error("namesWord")
	}
}
