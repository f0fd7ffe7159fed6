package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/load"
	"pslab/internal/metrics"
	"pslab/internal/results"
	"pslab/internal/scenario"
	"pslab/netem"
)

// Bytes on the wire per delivered message come from the link's counters:
// each direction's forwarded bytes over the deliveries; a record without
// counters has none.
func TestWirePerDelivery(t *testing.T) {
	f := scenario.Factors{Publishers: 1, Subscribers: 1, Topics: 1, Model: scenario.OneToOne, Subscription: scenario.NonDurable,
		Delivery: scenario.NonPersistent, Ack: scenario.AckAuto, Body: scenario.BodyBytes, Size: 100}
	rec := func(rep int, up, down uint64) results.Record {
		r := results.Record{Schema: 1, Suite: "w", CaseID: "01", Rep: rep, Broker: "artemis", Factors: f,
			Network: results.Network{Profile: Wireless},
			Result:  &load.Result{PubTput: 10, SubTput: 10, Latency: metrics.LatencySummary{Count: 1, MeanMs: 1}, Counts: load.Counts{Received: 100}}}
		if up > 0 {
			r.Network.Link = &results.LinkOver{Counters: &netem.Counters{ToBroker: netem.DirCounters{TxBytes: up}, ToClient: netem.DirCounters{TxBytes: down}}}
		}
		return r
	}
	r := rec(1, 29000, 43000)
	up, down, ok := WirePerDelivery(&r)
	require.True(t, ok)
	assert.Equal(t, 290.0, up)
	assert.Equal(t, 430.0, down)
	bare := rec(1, 0, 0)
	_, _, ok = WirePerDelivery(&bare)
	assert.False(t, ok, "no link counters (loopback, an older record)")

	recs := []results.Record{rec(1, 29000, 43000), rec(2, 31000, 43000), rec(3, 0, 0)}
	d := Build(recs)
	g := d.Groups[0]
	assert.Equal(t, 2, g.WireUp.N, "the repetitions with counters")
	assert.InDelta(t, 300, g.WireUp.Mean, 1e-9)

	var sum bytes.Buffer
	WriteSummary(&sum, recs)
	assert.Contains(t, sum.String(), "B/msg up/down")
	assert.Contains(t, sum.String(), "300/430")
	var md bytes.Buffer
	require.NoError(t, WriteMarkdown(&md, d, ClaimsCheck{}, nil))
	assert.Contains(t, md.String(), "| wire B/msg up/down |")
	assert.Contains(t, md.String(), "| 300/430 |")
	var js bytes.Buffer
	require.NoError(t, WriteJSON(&js, BuildDoc(d, ClaimsCheck{}, nil)))
	var doc struct {
		Rows []struct {
			Up DocStat `json:"wire_up_bytes_per_delivery"`
		} `json:"rows"`
	}
	require.NoError(t, json.Unmarshal(js.Bytes(), &doc))
	assert.InDelta(t, 300, float64(doc.Rows[0].Up.Mean), 1e-9)
	var csv bytes.Buffer
	require.NoError(t, WriteCSV(&csv, d))
	assert.True(t, strings.HasSuffix(strings.TrimSpace(csv.String()), ",300,430"), csv.String())
}
