package claims

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/load"
	"pslab/internal/metrics"
	"pslab/internal/report"
	"pslab/internal/results"
	"pslab/internal/scenario"
)

func resultWith(pub, sub float64) *load.Result {
	return &load.Result{PubTput: pub, SubTput: sub, Latency: metrics.LatencySummary{Count: 1, MeanMs: 1}}
}

// replicate turns each measured record into three repetitions at
// 0.99, 1 and 1.01 of its throughputs and latency: enough for the tests
// to tell a factor of two apart and to show ±10 % equivalence.
func replicate(recs []results.Record) []results.Record {
	var out []results.Record
	for _, r := range recs {
		if r.Result == nil {
			out = append(out, r)
			continue
		}
		for i, k := range []float64{0.99, 1, 1.01} {
			c := r
			res := *r.Result
			res.PubTput *= k
			res.SubTput *= k
			res.Latency.MeanMs *= k
			c.Result, c.Rep = &res, i+1
			out = append(out, c)
		}
	}
	return out
}

func claimsOf(t *testing.T, path string) map[string]Claim {
	t.Helper()
	recs, err := report.ReadRecords(path)
	require.NoError(t, err)
	out := map[string]Claim{}
	for _, c := range Evaluate(report.Build(replicate(recs))) {
		out[c.ID] = c
	}
	return out
}

// testdata/claims.jsonl: broker "good" has numbers that agree with every
// claim, "bad" numbers that contradict them, "wired" only wireline
// records; each record is replicated into three repetitions. The claims
// added from the paper's unevaluated conclusions are tested in
// claims_paper_test.go.
func TestClaimsOnFixture(t *testing.T) {
	cs := claimsOf(t, "testdata/claims.jsonl")
	require.Len(t, cs, len(claimDefs))
	type want struct {
		verdict        report.Verdict
		support, total int
	}
	cases := map[string]map[string]want{
		"nondurable-beats-durable":               {"good": {report.Holds, 4, 4}, "bad": {report.DoesNotHold, 0, 4}, "wired": {report.Holds, 4, 4}},
		"durability-gap-shrinks-wireless":        {"good": {report.Holds, 4, 4}, "bad": {report.DoesNotHold, 0, 4}, "wired": {report.NotMeasurable, 0, 0}},
		"durability-similar-wireless-large":      {"good": {report.Holds, 1, 1}, "bad": {report.DoesNotHold, 0, 1}, "wired": {report.NotMeasurable, 0, 0}},
		"large-messages-cut-throughput-wireline": {"good": {report.Holds, 2, 2}, "bad": {report.DoesNotHold, 0, 2}, "wired": {report.Holds, 2, 2}},
		"large-messages-cut-throughput-wireless": {"good": {report.Holds, 2, 2}, "bad": {report.DoesNotHold, 0, 2}, "wired": {report.NotMeasurable, 0, 0}},
		"large-messages-hurt-more-wireless":      {"good": {report.Holds, 2, 2}, "bad": {report.DoesNotHold, 0, 2}, "wired": {report.NotMeasurable, 0, 0}},
		"durable-knee-earlier":                   {"good": {report.Holds, 1, 1}, "bad": {report.DoesNotHold, 0, 1}, "wired": {report.Holds, 1, 1}},
		"nondurable-keeps-up":                    {"good": {report.Holds, 2, 2}, "bad": {report.DoesNotHold, 0, 2}, "wired": {report.Holds, 2, 2}},
		"durable-falls-behind":                   {"good": {report.Holds, 2, 2}, "bad": {report.DoesNotHold, 0, 2}, "wired": {report.Holds, 2, 2}},
		"nondurable-lower-latency":               {"good": {report.Holds, 4, 4}, "bad": {report.DoesNotHold, 0, 4}, "wired": {report.Holds, 4, 4}},
		// set 2's three non-durable cases agree for both brokers.
		"wireless-raises-nondurable-latency": {"good": {report.Holds, 7, 7}, "bad": {report.DoesNotHold, 3, 7}, "wired": {report.NotMeasurable, 0, 0}},
		// bad: set 1 all disagree (8), set 2 all agree (8): a tie does not hold.
		"wireless-cuts-throughput":          {"good": {report.Holds, 16, 16}, "bad": {report.DoesNotHold, 8, 16}, "wired": {report.NotMeasurable, 0, 0}},
		"selectors-cut-sub-throughput":      {"good": {report.Holds, 3, 4}, "bad": {report.DoesNotHold, 2, 4}, "wired": {report.NotMeasurable, 0, 0}},
		"selector-overhead-nondurable":      {"good": {report.Holds, 2, 2}, "bad": {report.DoesNotHold, 0, 2}},
		"selectors-help-durable-wireline":   {"good": {report.Holds, 1, 1}, "bad": {report.DoesNotHold, 0, 1}},
		"object-slower-wireline":            {"good": {report.Holds, 1, 1}, "bad": {report.DoesNotHold, 0, 1}},
		"object-similar-wireless":           {"good": {report.Holds, 1, 1}, "bad": {report.DoesNotHold, 0, 1}},
		"ack-modes-differ-little":           {"good": {report.Holds, 4, 4}, "bad": {report.DoesNotHold, 0, 4}},
		"persistent-costs-durable-wireline": {"good": {report.Holds, 2, 2}, "bad": {report.DoesNotHold, 0, 2}},
		"delivery-modes-similar-wireless":   {"good": {report.Holds, 2, 2}, "bad": {report.DoesNotHold, 0, 2}},
	}
	require.Len(t, cases, len(claimDefs)-len(paperClaimDefs), "every claim is covered by the fixture test")
	for id, byBroker := range cases {
		c, ok := cs[id]
		require.True(t, ok, id)
		for b, w := range byBroker {
			o := c.ByBroker[b]
			assert.Equal(t, w.verdict, o.Verdict, "%s on %s: %s", id, b, o.Summary())
			assert.Equal(t, w.support, o.Support, "%s on %s support", id, b)
			assert.Equal(t, w.total, o.Total, "%s on %s total", id, b)
			if o.Verdict == report.NotMeasurable {
				assert.NotEmpty(t, o.Reason, "%s on %s: a not-measurable verdict says why", id, b)
			}
		}
	}
	// The corrected reading of case 17 is used, not the printed 46731.
	paper := cs["object-slower-wireline"].Paper
	require.Equal(t, report.Holds, paper.Verdict, paper.Summary())
	assert.InDelta(t, 467.31/777.21, paper.Items[0].Value, 1e-9)
}

// The rules must say what the paper's own numbers say: evaluated on the
// published values of the shipped scenario files (every case, no
// measurements), every claim holds, with these counts (checked by hand
// against Tables 1 and 2).
func TestClaimsOnPaperValues(t *testing.T) {
	var recs []results.Record
	for _, f := range []string{"../../../scenarios/gaddah-kunz-set1.yaml", "../../../scenarios/gaddah-kunz-set2.yaml"} {
		s, err := scenario.Load(f, scenario.Options{})
		require.NoError(t, err)
		for _, c := range s.Cases {
			recs = append(recs, results.Record{Schema: 1, Suite: s.Name, CaseID: c.ID, Broker: "none",
				Network: results.Network{Profile: report.Wireline}, Factors: c.Factors, Paper: c.Paper, Error: "not run"})
		}
	}
	d := report.Build(recs)
	want := map[string][2]int{
		"nondurable-beats-durable":                 {18, 20},
		"durability-gap-shrinks-wireless":          {18, 20},
		"durability-similar-wireless-large":        {7, 8},
		"large-messages-cut-throughput-wireline":   {13, 16},
		"large-messages-cut-throughput-wireless":   {16, 16},
		"large-messages-hurt-more-wireless":        {15, 16},
		"durable-knee-earlier":                     {2, 2},
		"nondurable-keeps-up":                      {6, 6},
		"durable-falls-behind":                     {6, 6},
		"latency-rises-with-connections":           {23, 24},
		"large-messages-raise-latency-few-to-many": {7, 8},
		"large-messages-raise-latency-many-to-few": {7, 8},
		"many-to-few-latency-higher":               {16, 16},
		"durable-publishers-ahead-wireless":        {3, 3},
		"durable-arrivals-late":                    {6, 6},
		"many-to-few-slight-gain-wireline":         {4, 4},
		"many-to-few-much-gain-wireless":           {4, 4},
		"wireless-nondurable-no-knee":              {2, 2},
		"nondurable-lower-latency":                 {20, 20},
		"wireless-raises-nondurable-latency":       {22, 25},
		"wireless-cuts-throughput":                 {48, 50},
		"selectors-cut-sub-throughput":             {12, 16},
		"selector-overhead-nondurable":             {8, 8},
		"selectors-help-durable-wireline":          {4, 4},
		"object-slower-wireline":                   {1, 1},
		"object-similar-wireless":                  {1, 1},
		"ack-modes-differ-little":                  {14, 16},
		"persistent-costs-durable-wireline":        {2, 2},
		"delivery-modes-similar-wireless":          {2, 2},
	}
	claims := Evaluate(d)
	require.Len(t, claims, len(want))
	for _, c := range claims {
		w, ok := want[c.ID]
		require.True(t, ok, c.ID)
		assert.Equal(t, report.Holds, c.Paper.Verdict, "%s: %s %s", c.ID, c.Paper.Summary(), c.Paper.Reason)
		assert.Equal(t, w[0], c.Paper.Support, "%s support", c.ID)
		assert.Equal(t, w[1], c.Paper.Total, "%s total", c.ID)
		// Nothing was measured: every broker verdict is not measurable.
		assert.Equal(t, report.NotMeasurable, c.ByBroker["none"].Verdict, c.ID)
	}
}

// Without the erratum's reading, the printed 46731 would contradict the
// paper's own text.
func TestPrintedErratumWouldContradict(t *testing.T) {
	f6 := scenario.Factors{Publishers: 1, Subscribers: 1, Topics: 1, Model: scenario.OneToOne, Subscription: scenario.NonDurable,
		Delivery: scenario.Persistent, Ack: scenario.AckAuto, Body: scenario.BodyBytes, Size: 2048}
	f17 := f6
	f17.Body = scenario.BodyObject
	mk := func(paper17 map[string]float64) []results.Record {
		return []results.Record{
			{Schema: 1, Suite: "s", CaseID: "06", Broker: "x", Network: results.Network{Profile: report.Wireline}, Factors: f6,
				Paper: map[string]float64{"sub_tput_wireline": 777.21}, Error: "not run"},
			{Schema: 1, Suite: "s", CaseID: "17", Broker: "x", Network: results.Network{Profile: report.Wireline}, Factors: f17,
				Paper: paper17, Error: "not run"},
		}
	}
	find := func(cs []Claim) Claim {
		for _, c := range cs {
			if c.ID == "object-slower-wireline" {
				return c
			}
		}
		t.Fatal("claim missing")
		return Claim{}
	}
	printed := find(Evaluate(report.Build(mk(map[string]float64{"sub_tput_wireline": 46731}))))
	assert.Equal(t, report.DoesNotHold, printed.Paper.Verdict)
	corrected := find(Evaluate(report.Build(mk(map[string]float64{"sub_tput_wireline": 46731, "sub_tput_wireline_corrected": 467.31}))))
	assert.Equal(t, report.Holds, corrected.Paper.Verdict)
}

func TestClaimsFlagAndQuickMarks(t *testing.T) {
	f := func(sub scenario.Subscription, del scenario.Delivery) scenario.Factors {
		return scenario.Factors{Publishers: 1, Subscribers: 1, Topics: 1, Model: scenario.OneToOne, Subscription: sub,
			Delivery: del, Ack: scenario.AckAuto, Body: scenario.BodyBytes, Size: 100}
	}
	rec := func(id string, fs scenario.Factors, sub float64, flags []results.Flag) results.Record {
		return results.Record{Schema: 1, Suite: "s", CaseID: id, Broker: "b", Quick: true,
			Network: results.Network{Profile: report.Wireline}, Factors: fs, Flags: flags,
			Result: resultWith(sub, sub)}
	}
	d := report.Build(replicate([]results.Record{
		rec("1", f(scenario.Durable, scenario.Persistent), 10, []results.Flag{results.NewFlag(results.FlagCPUSaturated, "x")}),
		rec("2", f(scenario.NonDurable, scenario.NonPersistent), 100, nil),
	}))
	var c Claim
	for _, x := range Evaluate(d) {
		if x.ID == "nondurable-beats-durable" {
			c = x
		}
	}
	o := c.ByBroker["b"]
	assert.Equal(t, report.Holds, o.Verdict)
	assert.Equal(t, 1, o.Flagged)
	assert.True(t, o.Quick)
	assert.Equal(t, []string{"cpu-saturated"}, o.Items[0].Flags)
	assert.Contains(t, o.Summary(), "1 flagged")
	assert.Contains(t, o.Summary(), "quick")
}
