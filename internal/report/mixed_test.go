package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/results"
)

// TestBuildSplitsRowsThatMixConfigurations: a row whose repetitions came
// from two builds, or two broker configurations, is not pooled: each part
// is a row of its own, labelled, and the report lists them; records of
// the capacity modes are left out and counted; a row of one identity is
// untouched.
func TestBuildSplitsRowsThatMixConfigurations(t *testing.T) {
	a1, a2 := rec("01", "wireline", 1000, ""), rec("01", "wireline", 1100, "")
	b := rec("01", "wireline", 2400, "")
	for _, r := range []*results.Record{&a1, &a2} {
		r.Versions.Pslab, r.BrokerConfig = "aaaaaaaaaaaa", "c1"
	}
	b.Versions.Pslab, b.BrokerConfig = "aaaaaaaaaaaa", "c2" // another broker configuration
	same1, same2 := rec("02", "wireline", 500, ""), rec("02", "wireline", 510, "")
	probe := rec("02", "wireline", 700, "")
	probe.Mode = results.ModeCapacityProbe
	d := Build([]results.Record{a1, a2, b, same1, same2, probe})

	assert.Equal(t, 1, d.Mixing.OtherModes[results.ModeCapacityProbe])
	require.Len(t, d.Mixing.Rows, 1)
	mr := d.Mixing.Rows[0]
	assert.Equal(t, "01", mr.Case)
	require.Len(t, mr.Parts, 2)
	assert.Equal(t, 2, mr.Parts[0].Records)
	assert.Equal(t, "c1", mr.Parts[0].Identity.Config)
	assert.Nil(t, d.Get("s", "01", "nats", "wireline"), "the mixed row is not pooled")
	g1 := d.Get("s", "01 ⟨1 of 2⟩", "nats", "wireline")
	g2 := d.Get("s", "01 ⟨2 of 2⟩", "nats", "wireline")
	require.NotNil(t, g1)
	require.NotNil(t, g2)
	assert.Equal(t, 2, g1.Reps)
	assert.InDelta(t, 1050, g1.Sub.Mean, 1e-9)
	assert.Equal(t, 1, g2.Reps)
	g := d.Get("s", "02", "nats", "wireline")
	require.NotNil(t, g)
	assert.Equal(t, 2, g.Reps, "one identity: pooled, the probe left out")

	var md bytes.Buffer
	require.NoError(t, WriteMarkdown(&md, d, ClaimsCheck{}, []string{"x"}))
	s := md.String()
	assert.Contains(t, s, "## Rows that mix builds or broker configurations")
	assert.Contains(t, s, "build aaaaaaaaaaaa, broker config c2")
	assert.Contains(t, s, "1 capacity-probe")
	assert.True(t, strings.Index(s, "Rows that mix") < strings.Index(s, "01 ⟨1 of 2⟩ "), "the list comes first")
}

// Records of one build and broker configuration made under two TCP
// congestion controls are two rows, not one pooled.
func TestBuildSplitsRowsThatMixCongestionControls(t *testing.T) {
	bbr1, bbr2, cubic := rec("01", "wifi-paper", 300, ""), rec("01", "wifi-paper", 310, ""), rec("01", "wifi-paper", 200, "")
	for _, r := range []*results.Record{&bbr1, &bbr2, &cubic} {
		r.Versions.Pslab, r.BrokerConfig, r.Network.TCPCongestion = "aaaaaaaaaaaa", "c1", "bbr"
	}
	cubic.Network.TCPCongestion = "cubic"
	d := Build([]results.Record{bbr1, bbr2, cubic})
	require.Len(t, d.Mixing.Rows, 1)
	assert.Nil(t, d.Get("s", "01", "nats", "wifi-paper"), "not pooled")
	g1 := d.Get("s", "01 ⟨1 of 2⟩", "nats", "wifi-paper")
	require.NotNil(t, g1)
	assert.Equal(t, 2, g1.Reps, "the bbr part (sorted first)")
	assert.Equal(t, "bbr", d.Mixing.Rows[0].Parts[0].Identity.TCP)
	assert.Contains(t, d.Mixing.Rows[0].Parts[1].Identity.String(), "TCP cubic")
}
