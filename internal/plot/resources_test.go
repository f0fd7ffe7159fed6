package plot

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/load"
	"pslab/internal/metrics"
	"pslab/internal/report"
	"pslab/internal/results"
	"pslab/internal/scenario"
)

// soakRecord is a 10-minute run whose client RSS grows by 1 MB per 100 s
// and whose goroutines stay at 205, with one outage.
func soakRecord() results.Record {
	r := results.Record{Suite: "soak", CaseID: "01", Broker: "nats", Rep: 1,
		Network:  results.Network{Profile: "wifi-paper"},
		Factors:  scenario.Factors{Publishers: 100, Subscribers: 100, Topics: 100},
		Settings: results.Settings{WarmupS: 10, WindowS: 600, DrainS: 30},
		Result: &load.Result{Connect: 3, SubTput: 100, PubTput: 100,
			Faults: []load.FaultResult{{Fault: scenario.Fault{Kind: scenario.LinkOutage}, StartS: 250, EndS: 270}}},
		Resources: &results.Resources{Cores: 2}}
	for s := 1; s <= 640; s++ {
		r.Resources.ClientSamples = append(r.Resources.ClientSamples,
			metrics.ProcSample{T: float64(s), RSSBytes: int64(50e6 + float64(s)*1e4), HeapLiveBytes: 20e6, Goroutines: 205})
	}
	return r
}

func TestResourcesFigureAndTrend(t *testing.T) {
	r := soakRecord()
	tr, ok := report.Trend(&r)
	require.True(t, ok)
	assert.InDelta(t, 36, tr.RSSSlopeMBh, 0.01, "1 MB per 100 s is 36 MB/h")
	assert.Equal(t, 205, tr.GoroutinesMin)
	assert.Equal(t, 205, tr.GoroutinesMax)
	assert.Greater(t, tr.RSSLastMB, tr.RSSFirstMB)

	dir := t.TempDir()
	out, err := Generate(report.Build([]results.Record{r}), Options{OutDir: dir, DPI: 40, Figures: []string{Resources}})
	require.NoError(t, err)
	assert.Empty(t, out.Skipped)
	checkPNG(t, filepath.Join(dir, "resources-soak-01-nats-wifi-paper-r1.png"))
	checkSVG(t, filepath.Join(dir, "resources-soak-01-nats-wifi-paper-r1.svg"))
}
