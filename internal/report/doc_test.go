package report

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The JSON report carries every row with its stats (null where there is
// no value, never NaN), the validity table, provenance and flags with
// their meanings; it is valid JSON.
func TestReportJSON(t *testing.T) {
	d := tableDataset(t)
	var buf bytes.Buffer
	require.NoError(t, WriteJSON(&buf, BuildDoc(d, ClaimsCheck{Tolerance: 0.1, Alpha: 0.05}, []string{"testdata/table.jsonl"})))
	assert.NotContains(t, buf.String(), "NaN")
	var doc map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &doc))
	assert.Equal(t, DocSchema, doc["schema"])
	rows := doc["rows"].([]any)
	assert.Len(t, rows, len(d.Groups))
	first := rows[0].(map[string]any)
	for _, k := range []string{"suite", "case", "broker", "network", "reps", "pub_tput", "sub_tput", "latency_ms", "latency_p99_ms", "counts", "flags"} {
		assert.Contains(t, first, k)
	}
	sub := first["sub_tput"].(map[string]any)
	assert.InDelta(t, 1040, sub["mean"], 1)
	// A row of one repetition has no CI: null.
	var one map[string]any
	for _, r := range rows {
		m := r.(map[string]any)
		if m["reps"].(float64) == 1 {
			one = m
		}
	}
	require.NotNil(t, one)
	assert.Nil(t, one["sub_tput"].(map[string]any)["ci95"])
	assert.NotEmpty(t, doc["validity"])
	flags := doc["flags"].([]any)
	require.NotEmpty(t, flags)
	assert.NotEmpty(t, flags[0].(map[string]any)["meaning"])
	prov := doc["provenance"].(map[string]any)
	assert.NotEmpty(t, prov["settings"])
}

func TestParseThreshold(t *testing.T) {
	th, err := ParseThreshold("sub_tput:ratio>0.95")
	require.NoError(t, err)
	assert.Equal(t, Threshold{Text: "sub_tput:ratio>0.95", Metric: "sub_tput", Stat: "ratio", Op: ">", Value: 0.95}, th)
	th, err = ParseThreshold(" latency_ms : ci_hi <= 1.5 ")
	require.NoError(t, err)
	assert.Equal(t, "<=", th.Op)
	for _, bad := range []string{"sub_tput>0.9", "tput:ratio>0.9", "sub_tput:mean>0.9", "sub_tput:ratio=0.9", "sub_tput:ratio>x"} {
		_, err := ParseThreshold(bad)
		assert.Error(t, err, bad)
	}
	_, err = ParseFailOn([]string{"differs", "settings"})
	assert.NoError(t, err)
	_, err = ParseFailOn([]string{"slower"})
	assert.Error(t, err)
}

// A threshold on a value a row does not have is violated: a gate never
// passes on what it could not check.
func TestGateOnMissingValues(t *testing.T) {
	a := Build(set(map[string][]float64{"one": {100}, "two": {100, 101}}))
	b := Build(set(map[string][]float64{"one": {100}, "two": {100, 101}}))
	c := Compare(a, b, 0.1)
	lo, err := ParseThreshold("sub_tput:ci_lo>0.5")
	require.NoError(t, err)
	vs := Gate{Thresholds: []Threshold{lo}}.Check(c)
	require.Len(t, vs, 1)
	assert.Equal(t, "one", vs[0].Row.Case)
	assert.Contains(t, vs[0].Why, "no ci_lo")
	ratio, err := ParseThreshold("sub_tput:ratio>=1")
	require.NoError(t, err)
	assert.Empty(t, Gate{Thresholds: []Threshold{ratio}}.Check(c))
}
