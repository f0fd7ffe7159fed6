package report

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/metrics"
	"pslab/internal/results"
)

// TestStoppedRowsReportCorrectedIntervals: a row whose records say it was
// repeated to a CI target (Settings.Stopping) shows every interval at the
// rule's corrected level, names the method in the markdown and the JSON
// report; a row of records without it (older pslab, or fixed repetitions)
// keeps the plain 95 % interval.
func TestStoppedRowsReportCorrectedIntervals(t *testing.T) {
	subs := []float64{100, 103, 97, 100}
	rule := results.NewStopping(0.05, 3, 10)
	require.Equal(t, 8, rule.Looks)
	require.InDelta(t, 1-0.05/8, rule.Level, 1e-12)
	var recs []results.Record
	for _, s := range subs {
		a := rec("01", "wireline", s, "")
		a.Settings.Stopping = rule
		recs = append(recs, a, rec("02", "wireline", s, ""))
	}
	d := Build(recs)
	stopped, plain := d.Get("s", "01", "nats", "wireline"), d.Get("s", "02", "nats", "wireline")
	require.NotNil(t, stopped)
	require.NotNil(t, plain)
	sd := math.Sqrt((0 + 9 + 9 + 0) / 3.0)
	assert.InDelta(t, metrics.T975(3)*sd/2, plain.Sub.CI, 1e-9, "no rule: plain 95 %")
	q := metrics.TQuantile(3, 1-0.05/16)
	assert.InDelta(t, 1-0.05/16, metrics.StudentT(3).CDF(q), 1e-9)
	assert.InDelta(t, q*sd/2, stopped.Sub.CI, 1e-9, "the rule's level, two-sided")
	assert.Greater(t, stopped.Sub.CI, 1.5*plain.Sub.CI)
	assert.InDelta(t, q/metrics.T975(3)*plain.Pub.CI, stopped.Pub.CI, 1e-9, "every metric of the row")

	var md bytes.Buffer
	require.NoError(t, WriteMarkdown(&md, d, ClaimsCheck{}, nil))
	assert.Contains(t, md.String(), "1 row(s) were repeated until their CIs reached a target")
	assert.Contains(t, md.String(), "bonferroni-looks: each of the 8 looks at 99.38 % confidence")

	var js bytes.Buffer
	require.NoError(t, WriteJSON(&js, BuildDoc(d, ClaimsCheck{}, nil)))
	var doc Doc
	require.NoError(t, json.Unmarshal(js.Bytes(), &doc))
	methods := map[string]string{}
	for _, r := range doc.Rows {
		methods[r.Case] = r.CIMethod
	}
	assert.Equal(t, map[string]string{"01": metrics.CIMethodLooks, "02": ""}, methods)
}
