package report

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/load"
	"pslab/internal/metrics"
	"pslab/internal/record"
	"pslab/internal/results"
	"pslab/internal/scenario"
)

// A broker that measured exactly the paper's values, three repetitions at
// 0.99/1/1.01 of each, must reproduce the paper's verdicts on the claims
// added from its unevaluated conclusions, with the same items; where a
// count differs from the paper column the test says why.
func TestPaperClaimsOnMirroredPaperValues(t *testing.T) {
	s, err := scenario.Load("../../scenarios/gaddah-kunz-set1.yaml", scenario.Options{})
	require.NoError(t, err)
	var recs []results.Record
	for _, c := range s.Cases {
		for _, n := range []string{Wireline, Wireless} {
			get := func(m string) float64 {
				v, ok := LookupPaper(c.Paper, m, n)
				require.True(t, ok, "%s %s %s", c.ID, m, n)
				return v.Value()
			}
			pub, sub, lat := get(PubTput), get(SubTput), get(LatencyMs)
			late := int64(1000 * (1 - sub/pub))
			recs = append(recs, results.Record{Schema: 1, Suite: s.Name, CaseID: c.ID, Broker: "mirror",
				Network: results.Network{Profile: n}, Factors: c.Factors, Paper: c.Paper,
				Result: &load.Result{PubTput: pub, SubTput: sub, Latency: metrics.LatencySummary{Count: 1000, MeanMs: lat},
					Counts: load.Counts{Received: 1000, Late: max(late, 0), ReceivedInWindow: 1000 - max(late, 0)}}})
		}
	}
	claims := map[string]Claim{}
	for _, c := range EvaluateClaims(Build(replicate(recs))) {
		claims[c.ID] = c
	}
	want := map[string][3]int{ // hold, do not hold, items
		"latency-rises-with-connections": {23, 1, 24},
		// 21↔22 wireline: ×1.016, shown within ±10 % (does not hold, as on the paper's values).
		"large-messages-raise-latency-few-to-many": {7, 1, 8},
		// 29↔30 wifi-paper: ×1.096 is significantly above 1 and not shown within ±10 %: the test
		// holds where the paper's 10 % rule does not.
		"large-messages-raise-latency-many-to-few": {8, 0, 8},
		"many-to-few-latency-higher":               {16, 0, 16},
		"durable-publishers-ahead-wireless":        {3, 0, 3},
		"durable-arrivals-late":                    {6, 0, 6},
		"many-to-few-slight-gain-wireline":         {4, 0, 4},
		"many-to-few-much-gain-wireless":           {4, 0, 4},
		"wireless-nondurable-no-knee":              {2, 0, 2},
	}
	require.Len(t, want, len(paperClaimDefs))
	for id, w := range want {
		c, ok := claims[id]
		require.True(t, ok, id)
		o := c.ByBroker["mirror"]
		assert.Equal(t, Holds, c.Paper.Verdict, "%s on the paper's values", id)
		assert.Equal(t, Holds, o.Verdict, "%s: %s", id, o.summary())
		assert.Equal(t, w, [3]int{o.Support, o.Against, o.Total}, "%s: %s", id, o.summary())
		for _, it := range o.Items {
			assert.NotEmpty(t, it.Test, "%s %s: every measured item is tested", id, it.Label)
			assert.Contains(t, it.Evidence, "n 3", "%s %s", id, it.Label)
		}
	}
}

// One repetition per case: every measured item is inconclusive, never a
// verdict from a single number.
func TestSingleRepetitionIsInconclusive(t *testing.T) {
	recs, err := ReadRecords("testdata/claims.jsonl")
	require.NoError(t, err)
	for _, c := range EvaluateClaims(Build(recs)) {
		for b, o := range c.ByBroker {
			for _, it := range o.Items {
				assert.Equal(t, TestInconclusive, it.Test, "%s %s %s", c.ID, b, it.Label)
			}
			if o.Total > 0 {
				assert.Equal(t, Inconclusive, o.Verdict, "%s %s", c.ID, b)
			}
		}
	}
}

// The ack claim leaves out a pair whose two records ran on different
// mechanisms, and says why.
func TestAckPairsOnDifferentMechanismsLeftOut(t *testing.T) {
	f := scenario.Factors{Publishers: 1, Subscribers: 1, Topics: 1, Model: scenario.OneToOne, Subscription: scenario.NonDurable,
		Delivery: scenario.NonPersistent, Ack: scenario.AckAuto, Body: scenario.BodyBytes, Size: 2048}
	g := f
	g.Ack = scenario.AckDupsOK
	rec := func(id string, fs scenario.Factors, mech string) results.Record {
		return results.Record{Schema: 1, Suite: "s", CaseID: id, Broker: "nats", Mechanism: mech,
			Network: results.Network{Profile: Wireline}, Factors: fs, Result: resultWith(100, 100)}
	}
	d := Build(replicate([]results.Record{
		rec("1", f, "core NATS subscription (at-most-once); core publish"),
		rec("2", g, "JetStream stream per case, memory storage; ephemeral pull consumer"),
	}))
	for _, c := range EvaluateClaims(d) {
		if c.ID != "ack-modes-differ-little" {
			continue
		}
		o := c.ByBroker["nats"]
		assert.Equal(t, 0, o.Total)
		require.Len(t, o.Skipped, 1)
		assert.Contains(t, o.Skipped[0], `"core NATS subscription" against "JetStream stream per case, memory storage"`)
		return
	}
	t.Fatal("claim missing")
}

// The report states a broker's caveat (that NATS selectors are subject
// routing) when that broker's records' mechanism says so, and prints each
// tested item's p-value and evidence.
func TestMarkdownStatesNATSSelectorsAndPValues(t *testing.T) {
	f := scenario.Factors{Publishers: 1, Subscribers: 1, Topics: 1, Model: scenario.OneToOne, Subscription: scenario.NonDurable,
		Delivery: scenario.NonPersistent, Ack: scenario.AckAuto, Body: scenario.BodyBytes, Size: 2048}
	g := f
	g.Selector = true
	rec := func(id string, fs scenario.Factors, sub float64, mech string) results.Record {
		return results.Record{Schema: 1, Suite: "s", CaseID: id, Broker: "nats", Mechanism: mech,
			Network: results.Network{Profile: Wireline}, Factors: fs, Result: resultWith(sub, sub)}
	}
	write := func(mech string) string {
		d := Build(replicate([]results.Record{rec("1", f, 1000, "core NATS subscription"), rec("2", g, 100, mech)}))
		d.Caveats = []record.Caveat{{Broker: "nats", Mechanism: "selector as subject", Text: "NATS has no message selectors"}}
		var b strings.Builder
		require.NoError(t, WriteMarkdown(&b, d, EvaluateClaims(d), []string{"x"}))
		return b.String()
	}
	md := write("core NATS subscription; selector as subject per value: subscriber takes 20 subjects")
	assert.Contains(t, md, "NATS has no message selectors")
	assert.Contains(t, md, "p<0.001; n 3, ≥0 deliveries/record")
	assert.NotContains(t, write("core NATS subscription"), "NATS has no message selectors")
}
