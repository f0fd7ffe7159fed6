package report

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/load"
	"pslab/internal/metrics"
	"pslab/internal/record"
	"pslab/internal/results"
	"pslab/internal/scenario"
)

// TestTLSCost: the report's TLS table sums the handshakes of a tls: on
// case's records and puts the same case without TLS beside it; a suite
// without TLS has no such table. The TLS block reads back as written.
func TestTLSCost(t *testing.T) {
	f := scenario.Factors{Publishers: 1, Subscribers: 1, Topics: 1, Model: scenario.OneToOne, Subscription: scenario.NonDurable,
		Delivery: scenario.NonPersistent, Ack: scenario.AckAuto, Body: scenario.BodyBytes, Size: 100}
	rec := func(id string, rep int, tls bool) results.Record {
		ff := f
		ff.TLS = tls
		r := results.Record{Schema: 1, Suite: "t", CaseID: id, Rep: rep, Broker: "nats", Factors: ff,
			Network: results.Network{Profile: Wireless},
			Result:  &load.Result{PubTput: 10, SubTput: 10, Latency: metrics.LatencySummary{Count: 1, MeanMs: 1}, Counts: load.Counts{Received: 100}}}
		if tls {
			r.Result.TLS = record.TLSOf([]record.Handshake{{Took: 40e6, Version: "TLS 1.3", Cipher: "TLS_AES_128_GCM_SHA256"},
				{Took: 60e6, Version: "TLS 1.3", Cipher: "TLS_AES_128_GCM_SHA256"}, {Took: 90e6, Reconnect: true, Version: "TLS 1.3", Cipher: "TLS_AES_128_GCM_SHA256"}}, 1, nil)
		}
		return r
	}
	recs := []results.Record{rec("off", 1, false), rec("on", 1, true), rec("on", 2, true)}
	d := Build(recs)
	var on *Group
	for _, g := range d.Groups {
		if g.Case == "on" {
			on = g
		}
	}
	require.NotNil(t, on)
	c, ok := d.TLSCostOf(on)
	require.True(t, ok)
	assert.Equal(t, 4, c.Handshakes, "two first handshakes a record")
	assert.Equal(t, 2, c.Reconnects)
	assert.Equal(t, 2, c.Failed)
	assert.InDelta(t, 50, c.MeanMs, 1e-9)
	assert.InDelta(t, 60, c.MaxMs, 1e-9)
	require.NotNil(t, c.Plain)
	assert.Equal(t, "off", c.Plain.Case)
	var md bytes.Buffer
	require.NoError(t, WriteMarkdown(&md, d, ClaimsCheck{}, nil))
	assert.Contains(t, md.String(), "### TLS")
	assert.Contains(t, md.String(), "| on | nats | "+Wireless+" | 2 | 4 | 2 | 2 | 50.0 / 40.0 / 60.0 | TLS 1.3, TLS_AES_128_GCM_SHA256 | off |")

	_, ok = d.TLSCostOf(d.Groups[0])
	assert.False(t, ok || d.Groups[0].Case == "on")
	md.Reset()
	require.NoError(t, WriteMarkdown(&md, Build(recs[:1]), ClaimsCheck{}, nil))
	assert.NotContains(t, md.String(), "### TLS")

	b, err := json.Marshal(recs[1].Result.TLS)
	require.NoError(t, err)
	var back record.TLS
	require.NoError(t, json.Unmarshal(b, &back))
	b2, err := json.Marshal(&back)
	require.NoError(t, err)
	assert.JSONEq(t, string(b), string(b2))
	assert.Contains(t, string(b), `"connections":2`)
	assert.Contains(t, string(b), `"reconnect_handshake_ms"`)
}
