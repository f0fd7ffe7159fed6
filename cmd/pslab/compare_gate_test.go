package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/load"
	"pslab/internal/metrics"
	"pslab/internal/results"
	"pslab/internal/scenario"
)

// writeSet writes a records file of three cases with three repetitions
// each (±0.5 % around sub throughputs of 1000, 2000 and 3000 msgs/s,
// latency 1000/sub ms), case "02" scaled by scale02, the run settings
// given by window (seconds).
func writeSet(t *testing.T, path, runID string, scale02, window float64) {
	t.Helper()
	f := scenario.Factors{Publishers: 1, Subscribers: 1, Topics: 1, Model: scenario.OneToOne, Subscription: scenario.NonDurable,
		Delivery: scenario.NonPersistent, Ack: scenario.AckAuto, Body: scenario.BodyBytes, Size: 100}
	var recs []results.Record
	for i, id := range []string{"01", "02", "03"} {
		base := float64(1000 * (i + 1))
		if id == "02" {
			base *= scale02
		}
		for rep, k := range []float64{0.995, 1, 1.005} {
			sub := base * k
			r := results.Record{Schema: results.SchemaVersion, RunID: runID, Suite: "gate", CaseID: id, Rep: rep + 1,
				Broker: "nats", Network: results.Network{Profile: "wireline"}, Factors: f,
				Settings: results.Settings{WarmupS: 1, WindowS: window, DrainS: 1},
				Versions: results.Versions{Pslab: "test"},
				Result: &load.Result{PubTput: sub, SubTput: sub,
					Latency: metrics.LatencySummary{Count: 1000, MeanMs: 1e6 / sub},
					Counts:  load.Counts{Sent: 1000, Expected: 1000, Received: 1000, ReceivedInWindow: 1000}}}
			recs = append(recs, r)
		}
	}
	writeRecords(t, path, recs)
}

// writeRecords writes records as a records file, one JSON line each.
func writeRecords(t *testing.T, path string, recs []results.Record) {
	t.Helper()
	var b strings.Builder
	for _, r := range recs {
		line, err := json.Marshal(r)
		require.NoError(t, err)
		b.Write(line)
		b.WriteByte('\n')
	}
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
}

// compare as a gate: an unchanged pair passes --fail-on differs and a
// threshold; a pair whose case 02 lost half its throughput fails both
// with exit 99, after writing its output.
func TestCompareGateFailsAChangedPairAndPassesAnUnchangedOne(t *testing.T) {
	dir := t.TempDir()
	a, same, changed := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "same.jsonl"), filepath.Join(dir, "changed.jsonl")
	writeSet(t, a, "run-a", 1, 5)
	writeSet(t, same, "run-b", 1, 5)
	writeSet(t, changed, "run-c", 0.5, 5)
	gate := func(b, out string, extra ...string) int {
		return executeFresh(append([]string{"compare", a, b, "-o", out}, extra...)...)
	}
	out := filepath.Join(dir, "cmp.md")
	for _, g := range [][]string{
		{"--fail-on", "differs", "--threshold", "sub_tput:ratio>0.95"},
		{"--fail-on", "differs,settings", "--threshold", "sub_tput:ci_lo>0.9"},
	} {
		assert.Equal(t, exitOK, gate(same, out, g...), "unchanged pair, %v", g)
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		assert.Contains(t, string(b), "**Gate passed**")
	}
	for _, g := range [][]string{
		{"--fail-on", "differs", "--threshold", "sub_tput:ratio>0"},
		{"--fail-on", "inconclusive", "--threshold", "sub_tput:ratio>0.95"},
	} {
		require.NoError(t, os.Remove(out))
		assert.Equal(t, exitGateFailed, gate(changed, out, g...), "changed pair, %v", g)
		b, err := os.ReadFile(out)
		require.NoError(t, err, "the output is written when the gate fails")
		assert.Contains(t, string(b), "**Gate failed**")
		assert.Contains(t, string(b), "gate 02 nats wireline")
		assert.NotContains(t, string(b), "gate 01 nats wireline:")
	}
	assert.Equal(t, exitOK, gate(changed, out), "no gate: the comparison is written, exit 0")
}

// Sets made with other settings say so, and --fail-on settings fails
// them; a set compared with itself is said to be the same records.
func TestCompareWarnsAboutSettingsAndIdenticalInputs(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	writeSet(t, a, "run-a", 1, 4)
	writeSet(t, b, "run-b", 1, 5)
	out := filepath.Join(dir, "cmp.md")
	var code int
	stderr := captureStderr(t, func() {
		code = executeFresh("compare", a, b, "-o", out, "--fail-on", "settings")
	})
	assert.Equal(t, exitGateFailed, code)
	assert.Contains(t, stderr, "run window_s: A 4, B 5 (3 rows)")
	md, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(md), "| run window_s | 4 (9) | 5 (9) | 3 |")

	stderr = captureStderr(t, func() {
		code = executeFresh("compare", a, a, "-o", out)
	})
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stderr, "A and B are the same 9 records")
}
