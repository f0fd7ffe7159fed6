package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/metrics"
	"pslab/internal/record"
	"pslab/internal/results"
	"pslab/internal/scenario"
	"pslab/netem/linkinfo"
)

// writeNativeAndMQTT writes one run's records of a broker over its own
// protocol (nats) and over its MQTT listener (nats-mqtt), as a run over
// both writes them: two cases, three repetitions, the link's counters,
// MQTT's promises in the MQTT records, other broker settings on each
// side; nats-mqtt's subscriber throughput is mqttScale of nats's, its
// frames take 2 bytes more each way per delivery.
func writeNativeAndMQTT(t *testing.T, path string, mqttScale float64) {
	t.Helper()
	f := scenario.Factors{Publishers: 1, Subscribers: 1, Topics: 1, Model: scenario.OneToOne, Subscription: scenario.NonDurable,
		Delivery: scenario.NonPersistent, Ack: scenario.AckAuto, Body: scenario.BodyBytes, Size: 100}
	var recs []results.Record
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, broker := range []string{"nats", "nats-mqtt"} {
		settings, mech, scale, frame := map[string]string{"jetstream": "on"}, "core NATS subscription", 1.0, uint64(0)
		var promises *record.Promises
		if broker == "nats-mqtt" {
			settings = map[string]string{"jetstream": "on", "mqtt_ack_wait": "2m0s"}
			mech, scale, frame = "MQTT QoS 0 subscription", mqttScale, 2
			promises = &record.Promises{Basis: "MQTT QoS 0 (at most once)"}
		}
		for i, id := range []string{"01", "02"} {
			for rep, k := range []float64{0.995, 1, 1.005} {
				sub := 1000 * float64(i+1) * scale * k
				r := results.Record{Schema: results.SchemaVersion, RunID: "run-mqtt", Suite: "mqtt-vs-native", CaseID: id, Rep: rep + 1,
					Broker: broker, Mechanism: mech, BrokerVersion: "2.15.2", BrokerSettings: settings, Factors: f,
					Network: results.Network{Profile: "wifi-paper", Path: "namespaces", Backend: "tbf+nftables",
						Link: &results.LinkOver{Counters: &linkinfo.Counters{
							ToBroker: linkinfo.DirCounters{TxBytes: 1000 * (138 + frame)},
							ToClient: linkinfo.DirCounters{TxBytes: 1000 * (140 + frame)}}}},
					Settings: results.Settings{WarmupS: 1, WindowS: 5, DrainS: 1},
					Versions: results.Versions{Pslab: "test"}, Started: start,
					Result: &record.Result{PubTput: sub, SubTput: sub,
						Latency:  metrics.LatencySummary{Count: 1000, MeanMs: 1e6 / sub},
						Counts:   record.Counts{Sent: 1000, Expected: 1000, Received: 1000, ReceivedInWindow: 1000},
						Promises: promises}}
				start = start.Add(10 * time.Second)
				recs = append(recs, r)
			}
		}
	}
	writeRecords(t, path, recs)
}

// compare --pair of a broker's own protocol against its MQTT listener:
// the brokers' settings differ on purpose, so they are listed (JSON:
// on_purpose) but neither warned about nor a --fail-on settings
// violation; the pairs are in the output; --fail-on differs still fails a
// pair whose throughput differs, and passes one whose does not.
func TestComparePairOfMQTTAndNative(t *testing.T) {
	dir := t.TempDir()
	half, same := filepath.Join(dir, "half.jsonl"), filepath.Join(dir, "same.jsonl")
	writeNativeAndMQTT(t, half, 0.5)
	writeNativeAndMQTT(t, same, 1)
	out := filepath.Join(dir, "cmp.json")

	var code int
	stderr := captureStderr(t, func() {
		code = executeFresh("compare", half, half, "--pair", "nats=nats-mqtt", "--format", "json", "-o", out, "--fail-on", "settings")
	})
	assert.Equal(t, exitOK, code, stderr)
	assert.NotContains(t, stderr, "not made the same way")
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var doc struct {
		Pairs          []struct{ A, B string }
		SettingsDiffer []struct {
			Kind, Key string
			OnPurpose bool `json:"on_purpose"`
		} `json:"settings_differ"`
		Identical bool
		Warnings  []string
		Rows      []struct {
			Broker string
			Sub    struct {
				Ratio   float64
				Verdict string
			} `json:"sub_tput"`
		}
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	require.Len(t, doc.Pairs, 1)
	assert.Equal(t, "nats", doc.Pairs[0].A)
	assert.Equal(t, "nats-mqtt", doc.Pairs[0].B)
	assert.False(t, doc.Identical, "nats's records against nats-mqtt's")
	assert.Empty(t, doc.Warnings)
	require.NotEmpty(t, doc.SettingsDiffer, "mqtt_ack_wait is set on one side only")
	for _, d := range doc.SettingsDiffer {
		assert.Equal(t, "broker", d.Kind, d.Key)
		assert.True(t, d.OnPurpose, d.Key)
	}
	require.Len(t, doc.Rows, 2)
	for _, r := range doc.Rows {
		assert.Equal(t, "nats", r.Broker, "a row is named by A's broker")
		assert.InDelta(t, 0.5, r.Sub.Ratio, 0.01)
		assert.Equal(t, "differs", r.Sub.Verdict)
	}

	md := filepath.Join(dir, "cmp.md")
	assert.Equal(t, exitGateFailed, executeFresh("compare", half, half, "--pair", "nats=nats-mqtt", "-o", md, "--fail-on", "differs,settings"))
	text, err := os.ReadFile(md)
	require.NoError(t, err)
	assert.Contains(t, string(text), "Paired (--pair): B's nats-mqtt against A's nats.")
	assert.Contains(t, string(text), "| broker (--pair) mqtt_ack_wait |")
	assert.Equal(t, exitOK, executeFresh("compare", same, same, "--pair", "nats=nats-mqtt", "-o", md, "--fail-on", "differs,settings"))

	// Without --pair the same records are the same on both sides.
	stderr = captureStderr(t, func() {
		code = executeFresh("compare", half, half, "-o", md, "--fail-on", "settings")
	})
	assert.Equal(t, exitGateFailed, code)
	assert.Contains(t, stderr, "A and B are the same 12 records")

	html := filepath.Join(dir, "cmp.html")
	require.Equal(t, exitOK, executeFresh("compare", half, half, "--pair", "nats=nats-mqtt", "--format", "html", "-o", html))
	page, err := os.ReadFile(html)
	require.NoError(t, err)
	assert.Contains(t, string(page), "Paired (--pair): B&#39;s nats-mqtt against A&#39;s nats.")
	assert.Contains(t, string(page), "<td>broker (--pair)</td>")
}

// report of MQTT records: JSON rows and the HTML page carry the MQTT
// broker's rows with their bytes on the wire per delivery.
func TestReportOfMQTTRecords(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "records.jsonl")
	writeNativeAndMQTT(t, in, 0.5)
	out := filepath.Join(dir, "report.json")
	require.Equal(t, exitOK, executeFresh("report", in, "--format", "json", "-o", out))
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var doc struct {
		Brokers []string
		Rows    []struct {
			Broker   string
			WireUp   struct{ Mean float64 } `json:"wire_up_bytes_per_delivery"`
			WireDown struct{ Mean float64 } `json:"wire_down_bytes_per_delivery"`
		}
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	assert.ElementsMatch(t, []string{"nats", "nats-mqtt"}, doc.Brokers)
	require.Len(t, doc.Rows, 4)
	mqttRows := 0
	for _, r := range doc.Rows {
		up, down := 138.0, 140.0
		if r.Broker == "nats-mqtt" {
			up, down = 140, 142
			mqttRows++
		}
		assert.InDelta(t, up, r.WireUp.Mean, 1e-9, r.Broker)
		assert.InDelta(t, down, r.WireDown.Mean, 1e-9, r.Broker)
	}
	assert.Equal(t, 2, mqttRows)

	html := filepath.Join(dir, "report.html")
	require.Equal(t, exitOK, executeFresh("report", in, "--format", "html", "-o", html))
	page, err := os.ReadFile(html)
	require.NoError(t, err)
	assert.Contains(t, string(page), `<td class="nw">nats-mqtt</td>`)
	assert.Contains(t, string(page), "140/142")
}
