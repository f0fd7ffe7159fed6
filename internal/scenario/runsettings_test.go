package scenario

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunSettingsOfTheSuite(t *testing.T) {
	src := `suite: t
networks: [wireline, wifi-paper]
reps: 3
ci: 5%
max_reps: 12
order: random
per_network:
  wifi-paper: {warmup: 5s, window: 2m, drain: 15s}
  wireline: {window: 5s}
cases:
  - {window: 4s, drain: 2s}
`
	s, err := Parse("t.yaml", []byte(src), Options{})
	require.NoError(t, err)
	assert.Equal(t, RepsRule{CI: 0.05, MaxReps: 12}, s.RepsRule)
	assert.True(t, s.RandomOrder)
	w := s.ForNetwork(s.Cases[0], "wifi-paper")
	assert.Equal(t, []time.Duration{5 * time.Second, 2 * time.Minute, 15 * time.Second}, []time.Duration{w.Warmup, w.Window, w.Drain})
	l := s.ForNetwork(s.Cases[0], "wireline")
	assert.Equal(t, []time.Duration{5 * time.Second, 2 * time.Second}, []time.Duration{l.Window, l.Drain}, "drain left to the case")
	assert.Equal(t, s.Cases[0], s.ForNetwork(s.Cases[0], "other"))

	q, err := Parse("t.yaml", []byte(src), Options{Quick: true})
	require.NoError(t, err)
	assert.Nil(t, q.PerNetwork, "quick runs keep their short phases")
	assert.Zero(t, q.RepsRule, "and their own repetitions")
}

func TestRunSettingsErrorsWithLines(t *testing.T) {
	src := `suite: t
networks: [wireline]
ci: 500%
max_reps: 0
order: shuffled
per_network:
  wifi-papr: {window: 2m}
  wireline: {window: 0s, warmup: soon, limit: 3}
cases:
  - {}
`
	_, err := Parse("t.yaml", []byte(src), Options{})
	require.Error(t, err)
	for _, want := range []string{
		`t.yaml:3: ci: "500%" must be between 0 and 100 %`,
		"t.yaml:4: max_reps must be at least 1, got 0",
		`t.yaml:5: order: "shuffled" is not file or random`,
		`t.yaml:6: per_network: "wifi-papr" is not one of the suite's networks (wireline)`,
		"t.yaml:8: window must be positive, got 0s",
		`t.yaml:8: warmup: "soon" is not a duration`,
		`t.yaml:8: unknown field "limit" in per_network: wireline (known: warmup, window, drain)`,
	} {
		assert.Contains(t, err.Error(), want)
	}
}

func TestParallelKey(t *testing.T) {
	s, err := Parse("t.yaml", []byte("suite: t\nparallel: 3\ncases:\n  - {window: 4s}\n"), Options{})
	require.NoError(t, err)
	assert.Equal(t, 3, s.Parallel)
	_, err = Parse("t.yaml", []byte("suite: t\nparallel: 0\ncases:\n  - {window: 4s}\n"), Options{})
	assert.ErrorContains(t, err, "t.yaml:2")
	assert.ErrorContains(t, err, "parallel must be at least 1")
}
