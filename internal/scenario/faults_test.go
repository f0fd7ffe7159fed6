package scenario

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFaultScheduleParses(t *testing.T) {
	src := `suite: f
defaults:
  window: 10s
cases:
  - faults:
      - {kind: link-outage, at: 1s, for: 2s}
      - kind: link-loss
        at: 4s
        for: 1s
        loss: 20%
      - {kind: subscriber-disconnect, at: 2s, for: 3s, subscribers: 1}
      - {kind: broker-restart, at: 6s, for: 2s}
`
	s, err := Parse("f.yaml", []byte(src), Options{})
	require.NoError(t, err)
	fs := s.Cases[0].Faults
	require.Len(t, fs, 4)
	assert.Equal(t, Fault{Kind: LinkOutage, At: time.Second, For: 2 * time.Second, AtS: 1, ForS: 2, Line: 6}, fs[0])
	assert.Equal(t, 20.0, fs[1].LossPct)
	assert.Equal(t, 7, fs[1].Line)
	assert.Equal(t, 1, fs[2].Subscribers)
	assert.True(t, s.Cases[0].HasFault(BrokerRestart))
	assert.Equal(t, "link-loss at 4s for 1s (20 % loss)", fs[1].String())
}

func TestFaultScheduleErrorsHaveTheEntryLine(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"  - faults:\n      - {kind: earthquake, at: 1s, for: 1s}\n", `bad.yaml:4: faults: fault 1: kind: unknown value "earthquake"`},
		{"  - faults:\n      - {kind: link-outage, at: 1s}\n", "bad.yaml:4: faults: fault 1: at and for are required"},
		{"  - faults:\n      - {kind: link-outage, at: 1s, for: 1s}\n      - {kind: link-outage, at: 1s, for: x}\n", `bad.yaml:5: faults: fault 2: for: "x" is not a duration`},
		{"  - faults:\n      - {kind: link-outage, at: 1s, for: 1s, colour: red}\n", `bad.yaml:4: faults: fault 1: unknown fault field "colour"`},
		{"  - faults: {kind: link-outage}\n", "bad.yaml:3: faults: must be a list"},
		{"  - faults:\n      - {kind: link-outage, at: 8s, for: 3s}\n", "bad.yaml:4: fault 1 (link-outage): ends at 11s after the window opens, after the 10s window"},
		{"  - faults:\n      - {kind: link-loss, at: 1s, for: 1s}\n", "bad.yaml:4: fault 1 (link-loss): loss must be between 0 and 100"},
		{"  - faults:\n      - {kind: link-outage, at: 1s, for: 2s}\n      - {kind: link-loss, at: 2s, for: 1s, loss: 10}\n", "bad.yaml:5: fault 2 (link-loss): overlaps the previous link fault"},
		{"  - faults:\n      - {kind: subscriber-disconnect, at: 1s, for: 1s, subscribers: 3}\n", "bad.yaml:4: fault 1 (subscriber-disconnect): subscribers must be 0 (all) to 1, got 3"},
		{"  - faults:\n      - {kind: broker-restart, at: 1s, for: 1s, loss: 5}\n", "bad.yaml:4: fault 1 (broker-restart): loss only applies to link-loss"},
		{"  - in_flight: 100\n    faults:\n      - {kind: link-outage, at: 1s, for: 1s}\n", "bad.yaml:3: in_flight cannot be combined with faults"},
		{"  - in_flight: -1\n", "bad.yaml:3: in_flight must not be negative"},
	} {
		lines := errorLines(t, "suite: b\ncases:\n"+c.src)
		assert.Contains(t, strings.Join(lines, "\n"), c.want, c.src)
	}
}

// TestFaultStringFromARecord: a fault read back from a record keeps its
// schedule in at_s/for_s only; its text says that schedule, not 0s.
func TestFaultStringFromARecord(t *testing.T) {
	var f Fault
	require.NoError(t, json.Unmarshal([]byte(`{"kind":"broker-restart","at_s":3,"for_s":4.5}`), &f))
	assert.Equal(t, "broker-restart at 3s for 4.5s", f.String())
}
