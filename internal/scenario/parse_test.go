package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const good = `suite: t
brokers: [nats]
defaults:
  window: 2s
  durable_name: "{prefix}-s{sub}"
  client_id: "{prefix}-c{sub}"
quick:
  window: 500ms
cases:
  - id: a
    publishers: 10
    subscribers: 100
    topics: 10
    subscription: durable
    quick:
      publishers: 2
      subscribers: 4
      topics: 2
  - publishers: 4
    subscribers: 4
    topics: 4
    selector: on
    body: map
    size: 2048
`

func TestParseResolvesLayers(t *testing.T) {
	s, err := Parse("t.yaml", []byte(good), Options{})
	require.NoError(t, err)
	require.Len(t, s.Cases, 2)
	a := s.Cases[0]
	assert.Equal(t, "a", a.ID)
	assert.Equal(t, FewToMany, a.Model)
	assert.Equal(t, 2*time.Second, a.Window)
	assert.Equal(t, 10, a.Publishers)
	assert.Equal(t, "p-s3", a.DurableNameFor("p", 3))
	b := s.Cases[1]
	assert.Equal(t, "02", b.ID)
	assert.Equal(t, OneToOne, b.Model)
	assert.True(t, b.Selector)
	assert.Equal(t, BodyMap, b.Body)
	assert.Equal(t, "t.yaml:19", b.Where())

	q, err := Parse("t.yaml", []byte(good), Options{Quick: true})
	require.NoError(t, err)
	assert.Equal(t, 500*time.Millisecond, q.Cases[0].Window)
	assert.Equal(t, 2, q.Cases[0].Publishers)
	assert.Equal(t, 4, q.Cases[1].Publishers, "a case without quick overrides keeps its counts")
}

// errorLines parses src and returns each error line.
func errorLines(t *testing.T, src string) []string {
	t.Helper()
	_, err := Parse("bad.yaml", []byte(src), Options{})
	require.Error(t, err)
	var errs Errors
	require.True(t, errors.As(err, &errs), "want Errors, got %T: %v", err, err)
	return strings.Split(err.Error(), "\n")
}

func TestValidationErrorsCarryFileAndLine(t *testing.T) {
	src := `suite: bad
cases:
  - publishers: -1
    subscription: sometimes
  - subscription: durable
  - window: 0s
    colour: blue
  - topics: 3
`
	lines := errorLines(t, src)
	want := []string{
		"bad.yaml:3: publishers must be at least 1, got -1",
		`bad.yaml:4: subscription: unknown value "sometimes" (want one of durable, non-durable)`,
		"bad.yaml:5: a durable subscription needs a name source",
		"bad.yaml:6: window must be positive, got 0s",
		`bad.yaml:7: unknown field "colour"`,
		"bad.yaml:8: topics (3) must not exceed publishers (1) or subscribers (1)",
	}
	joined := strings.Join(lines, "\n")
	for _, w := range want {
		assert.Contains(t, joined, w)
	}
}

func TestModelMustMatchCounts(t *testing.T) {
	lines := errorLines(t, "suite: m\ncases:\n  - publishers: 50\n    model: one-to-one\n")
	assert.Contains(t, lines[0], "bad.yaml:4: model one-to-one does not match 50 publishers / 1 subscribers / 1 topics (that is many-to-few)")
}

func TestYAMLSyntaxErrorHasLine(t *testing.T) {
	_, err := Parse("x.yaml", []byte("suite: x\ncases:\n  - id: [\n"), Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "x.yaml: line")
}

func TestDuplicateIDsAndKeys(t *testing.T) {
	lines := errorLines(t, "suite: d\ncases:\n  - id: a\n  - id: a\n    id: b\n")
	joined := strings.Join(lines, "\n")
	assert.Contains(t, joined, `bad.yaml:5: "id" given twice in a case (first at line 4)`)
}

func TestSweepBlockExpandsGrid(t *testing.T) {
	src := `suite: s
sweep:
  size: [100, 2048]
  subscription: [durable, non-durable]
defaults:
  durable_name: d{sub}
  client_id: c{sub}
`
	s, err := Parse("s.yaml", []byte(src), Options{})
	require.NoError(t, err)
	require.Len(t, s.Cases, 4)
	assert.Equal(t, "01.01", s.Cases[0].ID)
	assert.Equal(t, "size=100 subscription=durable", s.Cases[0].Name)
	assert.Equal(t, 2048, s.Cases[3].Size)
	assert.Equal(t, NonDurable, s.Cases[3].Subscription)
	assert.Equal(t, []Setting{{"size", "2048"}, {"subscription", "non-durable"}}, s.Cases[3].Varied, "what the sweep gave the case")

	// A case's own sweep inside a suite sweep: both sweeps' values, the case's first.
	nested, err := Parse("n.yaml", []byte(`suite: n
sweep:
  size: [100, 200]
cases:
  - id: a
    sweep: {publishers: [1, 2]}
  - id: b
`), Options{})
	require.NoError(t, err)
	require.Len(t, nested.Cases, 6)
	assert.Equal(t, []string{"publishers=2", "size=200"}, Strings(nested.Cases[3].Varied))
	assert.Equal(t, []string{"size=100"}, Strings(nested.Cases[4].Varied))

	_, err = Parse("s.yaml", []byte("suite: s\nsweep:\n  size: [100, x]\n"), Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `s.yaml:3: size: "x" is not a whole number`)
}

func TestParseVaryAndSetField(t *testing.T) {
	v, err := ParseVary("size=100,2048")
	require.NoError(t, err)
	assert.Equal(t, Vary{"size", []string{"100", "2048"}}, v)
	_, err = ParseVary("colour=red")
	assert.Error(t, err)
	_, err = ParseVary("size")
	assert.Error(t, err)
	c := Defaults()
	require.NoError(t, SetField(&c, "ack", "dups-ok"))
	assert.Equal(t, AckDupsOK, c.Ack)
	assert.Error(t, SetField(&c, "ack", "maybe"))
	assert.Len(t, Grid([]Vary{{"a", []string{"1", "2"}}, {"b", []string{"x", "y", "z"}}}), 6)
}

func TestShippedScenariosParse(t *testing.T) {
	files, err := filepath.Glob("../../scenarios/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		for _, quick := range []bool{false, true} {
			_, err := Load(f, Options{Quick: quick})
			assert.NoError(t, err, "%s quick=%v", f, quick)
		}
	}
	_, err = os.Stat("../../scenarios/smoke.yaml")
	assert.NoError(t, err)
}

func TestSweepSuiteFromCommandLine(t *testing.T) {
	s, err := SweepSuite("cli", []Setting{{"window", "2s"}}, []Vary{{"size", []string{"100", "5120"}}, {"subscription", []string{"durable", "non-durable"}}})
	require.NoError(t, err)
	require.Len(t, s.Cases, 4)
	assert.Equal(t, 2*time.Second, s.Cases[3].Window)
	assert.Equal(t, "size=5120 subscription=non-durable", s.Cases[3].Name)
	assert.Equal(t, []string{"size=5120", "subscription=non-durable"}, Strings(s.Cases[3].Varied))

	_, err = SweepSuite("cli", []Setting{{"window", "0s"}}, []Vary{{"size", []string{"100", "-5"}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "window must be positive")
	assert.Contains(t, err.Error(), "size must be at least 1 byte, got -5")
	assert.Equal(t, 1, strings.Count(err.Error(), "window must be positive"), "a bad base value is reported once")
}

func TestQuickKeepsTheFullFactors(t *testing.T) {
	q, err := Parse("t.yaml", []byte(good), Options{Quick: true})
	require.NoError(t, err)
	require.NotNil(t, q.Cases[0].Full, "case a's counts are reduced by quick")
	assert.Equal(t, 10, q.Cases[0].Full.Publishers)
	assert.Equal(t, 2, q.Cases[0].Publishers)
	assert.Nil(t, q.Cases[1].Full, "only phases change: no full factors")
}

// TestEmptyFileSaysSoWithALine: a file with nothing in it, or only blanks
// and comments, is "file:1: empty scenario file". Before, it was
// "empty.yaml: EOF", with no line.
func TestEmptyFileSaysSoWithALine(t *testing.T) {
	for name, data := range map[string]string{"empty": "", "blank": "\n  \n", "comments": "# nothing yet\n# still nothing\n"} {
		_, err := Parse("e.yaml", []byte(data), Options{})
		if err == nil || !strings.HasPrefix(err.Error(), "e.yaml:1: empty scenario file") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestPaceTick: pace_tick is auto (the default: the pacer chooses), 0 (a
// wake-up per message) or a duration; anything else is refused with its
// line.
func TestPaceTick(t *testing.T) {
	src := `suite: t
defaults: {rate: 1000}
cases:
  - id: a
  - id: b
    pace_tick: 0
  - id: c
    pace_tick: 250us
  - id: d
    pace_tick: 3ms
    quick: {pace_tick: auto}
`
	s, err := Parse("t.yaml", []byte(src), Options{})
	require.NoError(t, err)
	got := map[string][2]any{}
	for _, c := range s.Cases {
		got[c.ID] = [2]any{c.PaceTickSet, c.PaceTick}
	}
	assert.Equal(t, map[string][2]any{
		"a": {false, time.Duration(0)}, "b": {true, time.Duration(0)},
		"c": {true, 250 * time.Microsecond}, "d": {true, 3 * time.Millisecond},
	}, got)
	q, err := Parse("t.yaml", []byte(src), Options{Quick: true})
	require.NoError(t, err)
	assert.False(t, q.Cases[3].PaceTickSet, "quick's auto undoes the case's tick")

	lines := strings.Join(errorLines(t, "suite: bad\ncases:\n  - pace_tick: soon\n  - pace_tick: -1ms\n"), "\n")
	assert.Contains(t, lines, `bad.yaml:3: pace_tick: "soon" is not auto or a duration`)
	assert.Contains(t, lines, "bad.yaml:4: pace_tick must not be negative")
}
