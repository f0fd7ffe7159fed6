package report

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/results"
)

// flagConstants are the values of every constant of type FlagName in the
// package that declares it: every flag the code can set.
func flagConstants(t *testing.T) []string {
	t.Helper()
	typ := reflect.TypeOf(results.FlagName(""))
	dir := filepath.Join("..", "..", strings.TrimPrefix(typ.PkgPath(), "pslab/"))
	pkgs, err := parser.ParseDir(token.NewFileSet(), dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	require.NoError(t, err)
	var out []string
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != typ.Name() {
						continue
					}
					for _, v := range vs.Values {
						lit, ok := v.(*ast.BasicLit)
						require.True(t, ok, "a flag constant that is not a literal")
						name, err := strconv.Unquote(lit.Value)
						require.NoError(t, err)
						out = append(out, name)
					}
				}
			}
		}
	}
	require.NotEmpty(t, out)
	return out
}

// Every flag the code can set is in README.md's flag table, and has a
// meaning for the reports; the table names no flag the code does not
// have.
func TestEveryFlagIsDocumented(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	text := string(readme)
	start := strings.Index(text, "### Flags\n")
	require.GreaterOrEqual(t, start, 0)
	end := strings.Index(text[start+1:], "\n#")
	table := text[start : start+1+end]
	inTable := map[string]bool{}
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range regexp.MustCompile("`([a-z-]+)`").FindAllStringSubmatch(cells[1], -1) {
			inTable[m[1]] = true
		}
	}
	consts := flagConstants(t)
	for _, name := range consts {
		assert.True(t, inTable[name], "flag %q is not in README.md's flag table", name)
		assert.NotEmpty(t, FlagMeaning(name), "flag %q has no meaning in FlagMeanings", name)
	}
	known := map[string]bool{}
	for _, c := range consts {
		known[c] = true
	}
	for name := range inTable {
		assert.True(t, known[name], "README.md's flag table names %q, which no code sets", name)
	}
	assert.Len(t, FlagMeanings, len(consts))
}
