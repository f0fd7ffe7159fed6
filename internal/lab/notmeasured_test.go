package lab

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/driver"
	"pslab/internal/load"
	"pslab/internal/metrics"
	"pslab/internal/results"
	"pslab/internal/scenario"
	"pslab/netem"
)

// TestQuickOverAShapedLinkHasPhasesLongEnoughToSend: with --quick, every
// case of the smoke suite over wifi-paper gets a warm-up and a window at
// least as long as the link needs to carry the deliveries of its
// publishers' first publish window (counted here without any protocol
// overhead: a lower bound). Before, the quick phases (300 ms warm-up, 1 s
// window) held publishers behind flow control for the whole window:
// records with `pub 0.0 msg/s` and no-sends-in-window. Over the wireline
// the quick phases are unchanged.
func TestQuickOverAShapedLinkHasPhasesLongEnoughToSend(t *testing.T) {
	s, err := scenario.Load("../../scenarios/smoke.yaml", scenario.Options{Quick: true})
	require.NoError(t, err)
	p := Plan{Suite: s, Brokers: []string{"nats"}, Networks: []string{"wireline", "wifi-paper"}, Cases: s.Cases, Reps: 1}
	prof, err := netem.LoadProfile("wifi-paper")
	require.NoError(t, err)
	bytesPerS := prof.RateKbit * 1000 / 8
	o := Options{Quick: true}
	shaped := newSchedule(p, o, "nats", "wifi-paper", 1)
	wire := newSchedule(p, o, "nats", "wireline", 1)
	require.Len(t, shaped.rows, len(s.Cases))
	for i, r := range shaped.rows {
		c := r.c
		f := c.Factors
		perPub := driver.WindowFor(int(bytesPerS*0.5)/f.Publishers, f.Size)
		deliveries := float64(perPub*f.Publishers) * f.Counts().RExpected
		need := time.Duration(deliveries * float64(f.Size) / bytesPerS * float64(time.Second))
		assert.GreaterOrEqual(t, c.Warmup, need, "case %s: warm-up %v, the first publish window needs %v of the link", c.ID, c.Warmup, need)
		assert.GreaterOrEqual(t, c.Window, need, "case %s: window %v", c.ID, c.Window)
		assert.Equal(t, s.Cases[i].Warmup, wire.rows[i].c.Warmup, "wireline keeps the quick warm-up")
		assert.Equal(t, s.Cases[i].Window, wire.rows[i].c.Window, "wireline keeps the quick window")
	}
	// Without --quick the file's phases stand.
	full := newSchedule(p, Options{}, "nats", "wifi-paper", 1)
	for i, r := range full.rows {
		assert.Equal(t, s.Cases[i].Warmup, r.c.Warmup)
	}
}

// TestProgressLineSaysWhatWasNotMeasured: a record whose publishers sent
// nothing in the window, and none of whose window messages arrived, says
// "not measured" for publisher throughput and latency instead of 0.0
// msg/s and 0.00 ms; what was measured keeps its number.
func TestProgressLineSaysWhatWasNotMeasured(t *testing.T) {
	rec := &results.Record{CaseID: "17", Broker: "nats", Network: results.Network{Profile: "wifi-paper"}, Rep: 1,
		Result: &load.Result{SubTput: 158, Counts: load.Counts{Sent: 626, ReceivedInWindow: 158}}}
	rec.Flags = flagsFor(rec)
	line := progressLine(rec)
	assert.Contains(t, line, "pub not measured")
	assert.Contains(t, line, "sub 158.0 msg/s")
	assert.Contains(t, line, "latency not measured")
	assert.NotContains(t, line, "0.00 ms")
	assert.NotContains(t, line, "pub 0.0")

	rec = &results.Record{CaseID: "03", Broker: "artemis", Network: results.Network{Profile: "wifi-paper"}, Rep: 1,
		Result: &load.Result{PubTput: 156, Counts: load.Counts{Sent: 400, SentInWindow: 156, DueInWindow: 156}}}
	line = progressLine(rec)
	assert.Contains(t, line, "pub 156.0 msg/s")
	assert.Contains(t, line, "sub not measured")
	assert.Contains(t, line, "latency not measured")

	rec.Result.Latency = metrics.LatencySummary{Count: 10, MeanMs: 5.5, P99Ms: 9}
	rec.Result.Counts.ReceivedInWindow, rec.Result.SubTput = 10, 10
	line = progressLine(rec)
	assert.True(t, strings.Contains(line, "latency mean 5.50 ms p99 9.00 ms"), line)
}
