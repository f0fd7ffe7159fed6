package report

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/load"
	"pslab/internal/metrics"
	"pslab/internal/results"
	"pslab/internal/scenario"
)

// set builds records of case ids with per-repetition sub throughputs
// (latency = 1000/sub ms).
func set(rows map[string][]float64) []results.Record {
	f := scenario.Factors{Publishers: 1, Subscribers: 1, Topics: 1, Model: scenario.OneToOne, Subscription: scenario.NonDurable,
		Delivery: scenario.NonPersistent, Ack: scenario.AckAuto, Body: scenario.BodyBytes, Size: 100}
	var out []results.Record
	for id, subs := range rows {
		for i, s := range subs {
			res := resultWith(s, s)
			res.Latency.MeanMs = 1000 / s
			out = append(out, results.Record{Schema: 1, Suite: "s", CaseID: id, Rep: i + 1, Broker: "b",
				Network: results.Network{Profile: Wireline}, Factors: f, Result: res})
		}
	}
	return out
}

func TestCompareVerdicts(t *testing.T) {
	a := Build(set(map[string][]float64{
		"same": {100, 101, 99, 100}, "double": {100, 101, 99, 100}, "noisy": {100, 101, 99, 100},
		"one": {100}, "onlyA": {1, 2},
	}))
	b := Build(set(map[string][]float64{
		"same": {100.5, 100, 99.5, 101}, "double": {200, 202, 198, 201}, "noisy": {50, 160, 90, 200},
		"one": {100, 100}, "onlyB": {1, 2},
	}))
	c := Compare(a, b, 0.10)
	got := map[string]CompareRow{}
	for _, r := range c.Rows {
		got[r.Key.Case] = r
	}
	require.Len(t, got, 4)
	assert.Equal(t, Same, got["same"].Sub.Verdict)
	assert.Equal(t, Differs, got["double"].Sub.Verdict)
	assert.InDelta(t, 2, got["double"].Sub.Ratio, 0.02)
	assert.Less(t, got["double"].Sub.Lo, 2.0)
	assert.Greater(t, got["double"].Sub.Hi, 2.0)
	assert.Equal(t, Differs, got["double"].Lat.Verdict) // latency halves
	assert.InDelta(t, 0.5, got["double"].Lat.Ratio, 0.01)
	assert.Equal(t, CompareUndec, got["noisy"].Sub.Verdict)
	assert.Equal(t, CompareUndec, got["one"].Sub.Verdict)
	assert.Contains(t, got["one"].Sub.Reason, "at least 2")
	require.Len(t, c.OnlyA, 1)
	assert.Equal(t, "onlyA", c.OnlyA[0].Case)
	require.Len(t, c.OnlyB, 1)
	assert.Equal(t, "onlyB", c.OnlyB[0].Case)

	var md, csv bytes.Buffer
	require.NoError(t, WriteCompareMarkdown(&md, NewCompareReport(c, "A", "B", Gate{})))
	assert.Contains(t, md.String(), "1 same, 1 differ, 2 inconclusive of 4")
	assert.Contains(t, md.String(), "Only in A: s onlyA b wireline")
	require.NoError(t, WriteCompareCSV(&csv, NewCompareReport(c, "A", "B", Gate{})))
	assert.Equal(t, 5, bytes.Count(csv.Bytes(), []byte("\n")), "a header and one line per row")
}

func TestCompareRefusesDifferentFactors(t *testing.T) {
	ra, rb := set(map[string][]float64{"x": {1, 2}}), set(map[string][]float64{"x": {1, 2}})
	for i := range rb {
		rb[i].Factors.Size = 5120
	}
	c := Compare(Build(ra), Build(rb), 0.1)
	assert.Empty(t, c.Rows)
	assert.Len(t, c.FactorsDiffer, 1)
}

func TestValidityTable(t *testing.T) {
	recs := set(map[string][]float64{"tight": {100, 100.5, 99.5}, "loose": {50, 100, 150}, "single": {100}})
	recs[0].Flags = []results.Flag{results.ParseFlag("backlog: 40 messages queued"), results.ParseFlag("drain-incomplete: 40 missing")}
	recs[0].Result.Counts.Lost = 40
	vs := ValidityTable(Build(recs))
	require.Len(t, vs, 1)
	v := vs[0]
	assert.Equal(t, 3, v.Rows)
	assert.Equal(t, 1, v.SubOK)
	assert.Equal(t, 1, v.LatOK)
	assert.Equal(t, []int{1, 3}, []int{v.RepsMin, v.RepsMax})
	assert.Equal(t, 3.0, v.RepsMedian)
	assert.Equal(t, 1, v.BacklogRecords)
	assert.Equal(t, int64(40), v.Backlog)
	assert.Equal(t, 1, v.LostRecords)
	assert.Equal(t, 1, v.Flagged["drain-incomplete"])
	require.Len(t, v.Misses, 2)
	joined := v.Misses[0] + v.Misses[1]
	assert.Contains(t, joined, "1 repetition (no CI)")
	assert.Contains(t, joined, "sub throughput ±")
}

// A small but significant difference inside the margin is "same", with
// its p-value below 0.05: the margin decides, the p-value shows it.
func TestCompareSmallSignificantDifferenceIsSame(t *testing.T) {
	a := Build(set(map[string][]float64{"x": {100, 100.2, 99.8, 100}}))
	b := Build(set(map[string][]float64{"x": {103, 103.2, 102.8, 103}}))
	r := Compare(a, b, 0.10).Rows[0].Sub
	assert.Equal(t, Same, r.Verdict)
	assert.Less(t, r.P, Alpha)
	assert.Equal(t, Differs, Compare(a, b, 0.01).Rows[0].Sub.Verdict)
}

func resultWith(pub, sub float64) *load.Result {
	return &load.Result{PubTput: pub, SubTput: sub, Latency: metrics.LatencySummary{Count: 1, MeanMs: 1}}
}
