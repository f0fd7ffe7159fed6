package plot

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/load"
	"pslab/internal/metrics"
	"pslab/internal/report"
	"pslab/internal/results"
	"pslab/internal/scenario"
)

// sweepRecords: a sweep of size (100, 1000) × subscription, two
// repetitions each, on one broker over the wireline; paper values when
// asked.
func sweepRecords(paper bool) []results.Record {
	var out []results.Record
	id := 0
	for _, size := range []int{100, 1000} {
		for _, sub := range []scenario.Subscription{scenario.Durable, scenario.NonDurable} {
			id++
			f := scenario.Factors{Publishers: 1, Subscribers: 1, Topics: 1, Model: scenario.OneToOne, Subscription: sub,
				Delivery: scenario.NonPersistent, Ack: scenario.AckAuto, Body: scenario.BodyBytes, Size: size}
			for rep := 1; rep <= 2; rep++ {
				tput := 1e5 / float64(size) * float64(rep)
				r := results.Record{Schema: 1, Suite: "sw", CaseID: fmt.Sprintf("%02d", id), Rep: rep, Broker: "nats",
					Network: results.Network{Profile: report.Wireline}, Factors: f,
					Varied: []string{fmt.Sprintf("size=%d", size), "subscription=" + string(sub)},
					Result: &load.Result{PubTput: tput, SubTput: tput, Latency: metrics.LatencySummary{Count: 10, MeanMs: float64(size) / 100, P50Ms: 1, P90Ms: 2, P99Ms: 3, P999Ms: 4, MaxMs: 5}}}
				if paper {
					r.Paper = map[string]float64{"latency_ms_wireline": 2}
				}
				out = append(out, r)
			}
		}
	}
	return out
}

// A sweep over two factors draws each metric against each factor, a line
// per value of the other, its cases labelled by their values.
func TestSweepFigures(t *testing.T) {
	dir := t.TempDir()
	out, err := Generate(report.Build(sweepRecords(false)), Options{OutDir: dir, Figures: []string{Sweep}, DPI: 40})
	require.NoError(t, err)
	require.Empty(t, out.Skipped)
	for _, key := range []string{"size", "subscription"} {
		svg := filepath.Join(dir, "sweep-sw-nats-wireline-"+key+".svg")
		checkSVG(t, svg)
		checkPNG(t, filepath.Join(dir, "sweep-sw-nats-wireline-"+key+".png"))
		b, err := os.ReadFile(svg)
		require.NoError(t, err)
		text := string(b)
		assert.Contains(t, text, "Sweep of "+key)
		assert.Contains(t, text, "01 size=100 subscription=durable", "cases labelled by their values")
		other := map[string]string{"size": "subscription=non-durable", "subscription": "size=1000"}[key]
		assert.Contains(t, text, other, "a line per value of the other factor")
	}
	assert.Len(t, out.Files, 4)
}

// Without paper values there is no paper legend or note; with them there is.
func TestNoPaperLegendWithoutPaperValues(t *testing.T) {
	for _, paper := range []bool{false, true} {
		dir := t.TempDir()
		_, err := Generate(report.Build(sweepRecords(paper)), Options{OutDir: dir, Figures: []string{Latency}, DPI: 40})
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(dir, "latency-sw-nats.svg"))
		require.NoError(t, err)
		assert.Equal(t, paper, strings.Contains(string(b), "paper mean"), "paper values %v", paper)
		assert.Equal(t, paper, strings.Contains(string(b), "Diamonds"), "paper values %v", paper)
	}
}
