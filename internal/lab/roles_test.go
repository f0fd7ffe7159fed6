package lab

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/results"
	"pslab/internal/scenario"
)

// TestRoleNetworkSpec: pub=A+sub=B names a link per role, in either order;
// every mistake of a spec is reported at once, each saying what is wrong.
func TestRoleNetworkSpec(t *testing.T) {
	s, err := loadNetwork("pub=wifi-paper+sub=wireline")
	require.NoError(t, err)
	assert.True(t, s.perRole)
	assert.Equal(t, "wifi-paper", s.pub.Name)
	assert.Equal(t, "wireline", s.sub.Name)
	assert.True(t, s.shaped())
	assert.Equal(t, "pub=wifi-paper+sub=wireline", s.recordName())

	s, err = loadNetwork("sub=lte+pub=wireline")
	require.NoError(t, err)
	assert.Equal(t, "wireline", s.pub.Name)
	assert.Equal(t, "lte", s.sub.Name)

	s, err = loadNetwork("wifi-paper")
	require.NoError(t, err)
	assert.False(t, s.perRole)
	assert.Equal(t, "wifi-paper", s.recordName())

	for spec, want := range map[string][]string{
		"pub=wifi-paper":                       {`no sub= in`},
		"pub=wifi-paper+pub=wireline":          {"role pub given twice", "no sub="},
		"pub=wifi-paper+subs=wireline":         {`"subs=wireline" is not pub=PROFILE or sub=PROFILE`},
		"pub=wifi-moon+sub=wireline":           {`pub: unknown profile "wifi-moon"`},
		"pub=wifi-moon+sub=nowhere.yaml":       {`pub: unknown profile "wifi-moon"`, `sub: unknown profile "nowhere.yaml"`},
		"pub=a+b.yaml+sub=wireline":            {"has 3 parts"},
		"sub=wireline+pub=wifi-paper+pub=lte":  {"has 3 parts", "role pub given twice"},
		"pub=wifi-paper+sub=":                  {"sub: unknown profile"},
		"pub=wifi-paper+sub=wireline+sub=wifi": {"has 3 parts"},
	} {
		_, err := loadNetwork(spec)
		require.Error(t, err, spec)
		for _, w := range want {
			assert.Contains(t, err.Error(), w, spec)
		}
	}
}

// TestRoleNetworkProfileFiles: the profiles of a link per role may be
// files; a bad one is refused at its file and line, before anything runs.
func TestRoleNetworkProfileFiles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "slow.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(good, []byte("rate_kbit: 500\n"), 0o644))
	require.NoError(t, os.WriteFile(bad, []byte("rate_kbit: 500\nloss_pct: 150\n"), 0o644))
	s, err := loadNetwork("pub=" + good + "+sub=wireline")
	require.NoError(t, err)
	assert.Equal(t, "slow", s.pub.Name)
	_, err = loadNetwork("pub=wireline+sub=" + bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), bad+":2")
	assert.Contains(t, err.Error(), "loss_pct")
}

// TestRoleNetworkRefusedBeforeRunning: a bad spec is reported with the
// file's line like any unknown network, and a link per role is refused
// where it cannot be built (an external broker, the in-memory fake), all
// by MakePlan, before a lab or a broker exists.
func TestRoleNetworkRefusedBeforeRunning(t *testing.T) {
	s, err := scenario.Parse("r.yaml", []byte("suite: r\nbrokers: [nats]\nnetworks: [wireline, pub=wifi-moon+sub=wireline]\ncases:\n  - id: a\n"), scenario.Options{})
	require.NoError(t, err)
	_, err = MakePlan(s, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `r.yaml:3: networks: pub: unknown profile "wifi-moon"`)

	s.Networks = []string{"pub=wifi-paper+sub=wireline"}
	_, err = MakePlan(s, Options{Networks: []string{"pub=wireline+sub=wireline"}, URLs: map[string]string{"nats": "nats://127.0.0.1:1"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a link per role needs the broker pslab starts")

	s.Brokers = []string{"fake"}
	_, err = MakePlan(s, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "runs in memory inside pslab")

	s.Brokers = []string{"nats"}
	_, err = MakePlan(s, Options{Policy: refusingPolicy{}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not supported in capacity mode")
}

// refusingPolicy is a capacity policy that never runs anything.
type refusingPolicy struct{}

func (refusingPolicy) Next(PolicyRow, []results.Record) (PolicyRun, bool) { return PolicyRun{}, true }
func (refusingPolicy) Left(PolicyRow, []results.Record) (int, int)        { return 0, 0 }

// TestRoleNetworkLinkRates: on a network with a link per role the
// publishers' flow control follows their link's rate to the broker, the
// subscribers' deliveries their link's rate to the clients, and the
// drain's bound the slower of the two.
func TestRoleNetworkLinkRates(t *testing.T) {
	spec, err := loadNetwork("pub=wireline+sub=wifi-paper")
	require.NoError(t, err)
	nw := &network{profile: spec.pub, spec: spec.name, sub: &roleLink{profile: spec.sub}}
	assert.Equal(t, "pub=wireline+sub=wifi-paper", nw.name())
	assert.True(t, nw.shaped())
	assert.Equal(t, "wifi-paper", nw.subscribersProfile().Name)
	assert.InDelta(t, 1e6, nw.linkBits(), 1, "the subscribers' 1 Mbit/s bounds the drain")
	assert.Equal(t, nw.stallTolerance(), shapedStall)

	spec, err = loadNetwork("pub=wifi-paper+sub=wireline")
	require.NoError(t, err)
	nw = &network{profile: spec.pub, spec: spec.name, sub: &roleLink{profile: spec.sub}}
	assert.InDelta(t, 1e6, nw.linkBits(), 1, "the publishers' 1 Mbit/s bounds the drain")
	assert.Equal(t, "wireline", nw.subscribersProfile().Name)

	one := &network{profile: spec.pub}
	assert.Equal(t, "wifi-paper", one.name())
	assert.Equal(t, "wifi-paper", one.subscribersProfile().Name)
}
