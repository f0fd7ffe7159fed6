package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"pslab/internal/load"
	"pslab/internal/metrics"
	"pslab/internal/results"
)

func rec(caseID, network string, sub float64, err string) results.Record {
	r := results.Record{Suite: "s", CaseID: caseID, Broker: "nats", Network: results.Network{Profile: network}, Error: err}
	if err == "" {
		r.Result = &load.Result{PubTput: sub, SubTput: sub, Latency: metrics.LatencySummary{Count: 1, MeanMs: 2, P99Ms: 3}}
	}
	return r
}

func TestSummarySideBySideWithRatio(t *testing.T) {
	var b bytes.Buffer
	WriteSummary(&b, []results.Record{
		rec("01", "wireline", 1000, ""), rec("01", "wireline", 1200, ""),
		rec("01", "wifi-paper", 11, ""),
		rec("02", "wireline", 500, ""), rec("02", "wifi-paper", 0, "boom"),
	})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	assert.Len(t, lines, 3)
	assert.Contains(t, lines[0], "wifi-paper/wireline")
	assert.Contains(t, lines[1], "1100.0±1270.6", "two reps: mean ± 95 % half-width")
	assert.Contains(t, lines[1], "0.010", "11 / 1100")
	assert.Contains(t, lines[2], "FAILED")
}
