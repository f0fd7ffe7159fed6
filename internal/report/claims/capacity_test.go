package claims

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/capacity"
	"pslab/internal/metrics"
	"pslab/internal/report"
	"pslab/internal/scenario"
)

// Synthetic capacity rows: the claims on capacity are a pure function of
// the rows' estimates, bounds, mechanisms and fixed loads.

const (
	coreNATS  = "core NATS subscription (at-most-once); core publish"
	jetStream = "JetStream stream per case, memory storage; durable pull consumer"
)

func unitFactors(sub scenario.Subscription, del scenario.Delivery) scenario.Factors {
	return scenario.Factors{Publishers: 1, Subscribers: 1, Topics: 1, Model: scenario.OneToOne, Subscription: sub,
		Delivery: del, Ack: scenario.AckAuto, Body: scenario.BodyBytes, Size: 100}
}

var (
	durable    = unitFactors(scenario.Durable, scenario.Persistent)
	nonDurable = unitFactors(scenario.NonDurable, scenario.NonPersistent)
)

// synthRow is a finished row of broker "b" with these counted searches'
// estimates (offered msgs/s; delivered = offered × deliveries per message).
func synthRow(caseID, network string, f scenario.Factors, mech string, estimates ...float64) *capRow {
	ls := make([]float64, len(estimates))
	for i, e := range estimates {
		ls[i] = math.Log(e)
	}
	m, _ := metrics.SteinCI(ls, 3)
	capa := math.Exp(m)
	res := &capacity.Result{RowKey: capacity.RowKey{Suite: "s", Case: caseID, Broker: "b", Network: network}, Factors: f,
		Capacity: capa, Delivered: capa * f.Counts().RExpected, Estimates: estimates, Done: true, Identities: []string{"build x, config y"},
		Bound: capacity.Bound{Name: capacity.BoundBroker, Basis: "cpu"}, HalfPct: 2}
	return &capRow{res: res, source: "synthetic", params: capacity.DefaultParams(), mechanism: mech}
}

// clientBound makes a row's capacity a client-bound lower bound.
func clientBound(r *capRow) *capRow {
	r.res.LowerBound, r.res.Bound = true, capacity.Bound{Name: capacity.BoundClient, Why: "the clients reached 60 %"}
	return r
}

// withLevel adds a fixed load with its runs' mean latencies (ms), all
// sustained unless unsustained says how many were not.
func withLevel(r *capRow, load float64, unsustained int, means ...float64) *capRow {
	r.levels = append(r.levels, loadLevel{load: load, means: means, sustained: len(means) - unsustained})
	return r
}

func capClaimsOf(t *testing.T, rows ...*capRow) map[string]Claim {
	t.Helper()
	c := checkRows(rows)
	require.Equal(t, []string{"b"}, c.Brokers)
	out := map[string]Claim{}
	for _, cl := range c.Claims {
		out[cl.ID] = cl
	}
	require.Len(t, out, len(capClaimDefs))
	return out
}

func onlyItem(t *testing.T, c Claim) Item {
	t.Helper()
	o := c.ByBroker["b"]
	require.Len(t, o.Items, 1, "%s: %s; skipped %v", c.ID, o.Summary(), o.Skipped)
	return o.Items[0]
}

// A stated margin is tested as a margin: ×1.08, significantly above 1
// (the paper-mode rule would say it holds), is not "more than 10 %".
func TestCapacityBeatsIsAMargin(t *testing.T) {
	dEst := []float64{960, 980, 1000, 1000, 1020, 1040}
	ndEst := make([]float64, len(dEst)) // ×1.08
	for i, x := range dEst {
		ndEst[i] = 1.08 * x
	}
	d := synthRow("01", report.Wireline, durable, jetStream, dEst...)
	cases := []struct {
		name string
		nd   []float64
		want report.TestVerdict
	}{
		{"×1.5: the whole CI above ×1.10", []float64{1490, 1500, 1510}, report.TestHolds},
		{"×1.08: significant, but the CI reaches ×1.10", ndEst, report.TestInconclusive},
		{"×1.0: the whole CI below ×1.10", []float64{995, 1000, 1005}, report.TestDoesNotHold},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			nd := synthRow("03", report.Wireline, nonDurable, coreNATS, c.nd...)
			it := onlyItem(t, capClaimsOf(t, d, nd)["nondurable-beats-durable"])
			assert.Equal(t, c.want, it.Test, "%s: %s", it.Text, it.Evidence)
			assert.Contains(t, it.Evidence, "95 % CI")
		})
	}
	// The same ×1.08 by significance alone (Welch's t on the logs, as
	// the paper-mode claims test "beats"): it would hold.
	ln := func(xs ...float64) []float64 { ls, _ := report.Logs(xs); return ls }
	con, err := report.NewContrast([][]float64{ln(dEst...), ln(ndEst...)}, []float64{-1, 1})
	require.NoError(t, err)
	v, _ := report.Decide(con, report.AboveRatio(1, Tolerance))
	assert.Equal(t, report.TestHolds, v, "significance alone would count ×1.08 as beating")
}

// A client-bound row is no evidence about the broker: inconclusive, and
// the item says so, however large the ratio.
func TestCapacityClientBoundIsInconclusive(t *testing.T) {
	d := synthRow("01", report.Wireline, durable, jetStream, 990, 1000, 1010)
	nd := clientBound(synthRow("03", report.Wireline, nonDurable, coreNATS, 4900, 5000, 5100))
	c := capClaimsOf(t, d, nd)["nondurable-beats-durable"]
	it := onlyItem(t, c)
	assert.Equal(t, report.TestInconclusive, it.Test)
	assert.False(t, it.Supports)
	assert.Contains(t, it.Evidence, "client-bound")
	assert.Contains(t, it.Evidence, "no evidence about the broker")
	assert.Contains(t, it.Text, "≥ ", "the table shows the capacity as a lower bound")
	assert.Equal(t, report.Inconclusive, c.ByBroker["b"].Verdict)
}

// A pair on different mechanisms is left out of a claim about another
// factor (ack mode), with the reason; for durability on NATS the
// mechanism is the factor and the pair counts.
func TestCapacityMechanismSplit(t *testing.T) {
	dupsOK := nonDurable
	dupsOK.Ack = scenario.AckDupsOK
	auto := synthRow("05", report.Wireline, nonDurable, coreNATS, 990, 1000, 1010)
	jsDupsOK := synthRow("06", report.Wireline, dupsOK, jetStream, 990, 1000, 1010)
	c := capClaimsOf(t, auto, jsDupsOK)["ack-modes-differ-little"]
	o := c.ByBroker["b"]
	assert.Empty(t, o.Items)
	assert.Equal(t, report.NotMeasurable, o.Verdict)
	require.Len(t, o.Skipped, 1)
	assert.Contains(t, o.Skipped[0], "different mechanisms")
	assert.Contains(t, o.Skipped[0], `"core NATS subscription"`)
	assert.Contains(t, o.Skipped[0], `"JetStream stream per case, memory storage"`)
	assert.Contains(t, capacityRenderedMarkdown(t, auto, jsDupsOK), "different mechanisms", "the report shows the reason")

	coreDupsOK := synthRow("06", report.Wireline, dupsOK, coreNATS, 995, 1000, 1005)
	it := onlyItem(t, capClaimsOf(t, auto, coreDupsOK)["ack-modes-differ-little"])
	assert.Equal(t, report.TestHolds, it.Test, "%s: %s", it.Text, it.Evidence)

	d := synthRow("01", report.Wireline, durable, jetStream, 990, 1000, 1010)
	nd := synthRow("03", report.Wireline, nonDurable, coreNATS, 1990, 2000, 2010)
	assert.Equal(t, report.TestHolds, onlyItem(t, capClaimsOf(t, d, nd)["nondurable-beats-durable"]).Test)
}

// Latency claims compare the two rows at an equal offered load (their
// fixed loads within ±5 %), never at other loads or a growing backlog.
func TestLatencyAtEqualOfferedLoad(t *testing.T) {
	d := func() *capRow {
		r := synthRow("01", report.Wireline, durable, jetStream, 390, 400, 410)
		withLevel(r, 100, 0, 4.0, 4.1, 3.9)
		withLevel(r, 200, 0, 10, 10.2, 9.8)
		return withLevel(r, 320, 0, 40, 41, 39)
	}
	t.Run("no equal load", func(t *testing.T) {
		nd := synthRow("03", report.Wireline, nonDurable, coreNATS, 990, 1000, 1010)
		withLevel(nd, 250, 0, 1, 1, 1)
		withLevel(nd, 500, 0, 2, 2, 2)
		o := capClaimsOf(t, d(), nd)["nondurable-lower-latency"].ByBroker["b"]
		assert.Empty(t, o.Items)
		require.Len(t, o.Skipped, 1)
		assert.Contains(t, o.Skipped[0], "no equal offered load")
		assert.Contains(t, o.Skipped[0], "100.0, 200.0, 320.0")
	})
	t.Run("equal load", func(t *testing.T) {
		nd := synthRow("03", report.Wireline, nonDurable, coreNATS, 990, 1000, 1010)
		withLevel(nd, 205, 0, 5, 5.1, 4.9)    // within 2.5 % of 200
		withLevel(nd, 800, 0, 900, 950, 1000) // near its capacity: not compared
		it := onlyItem(t, capClaimsOf(t, d(), nd)["nondurable-lower-latency"])
		assert.Contains(t, it.Text, "at 200.0 and 205.0 msg/s")
		assert.InDelta(t, 0.5, it.Value, 1e-9)
		assert.Equal(t, report.TestHolds, it.Test, "%s: %s", it.Text, it.Evidence)
	})
	t.Run("growing backlog", func(t *testing.T) {
		nd := synthRow("03", report.Wireline, nonDurable, coreNATS, 990, 1000, 1010)
		withLevel(nd, 200, 1, 5, 5.1, 4.9)
		o := capClaimsOf(t, d(), nd)["nondurable-lower-latency"].ByBroker["b"]
		assert.Empty(t, o.Items)
		require.Len(t, o.Skipped, 1)
		assert.Contains(t, o.Skipped[0], "sustained 2 of 3 runs")
	})
	t.Run("client-bound at the load", func(t *testing.T) {
		nd := synthRow("03", report.Wireline, nonDurable, coreNATS, 990, 1000, 1010)
		withLevel(nd, 200, 0, 5, 5.1, 4.9)
		nd.levels[0].clientPct = 75
		it := onlyItem(t, capClaimsOf(t, d(), nd)["nondurable-lower-latency"])
		assert.Equal(t, report.TestInconclusive, it.Test)
		assert.Contains(t, it.Evidence, "client-bound at this load")
	})
	t.Run("within the floor", func(t *testing.T) {
		a, nd := d(), synthRow("03", report.Wireline, nonDurable, coreNATS, 990, 1000, 1010)
		a.levels = []loadLevel{{load: 200, means: []float64{0.5, 0.6, 0.55}, sustained: 3}}
		withLevel(nd, 200, 0, 0.3, 0.31, 0.29)
		a.res.FloorMs, nd.res.FloorMs = 0.9, 0.9
		it := onlyItem(t, capClaimsOf(t, a, nd)["nondurable-lower-latency"])
		assert.Equal(t, report.TestInconclusive, it.Test)
		assert.Contains(t, it.Evidence, "latency floor")
	})
}

// The paper's two conclusions the paper-mode claims did not evaluate.
func TestCapacityNewConclusions(t *testing.T) {
	d := synthRow("01", report.Wireline, durable, jetStream, 990, 1000, 1010)
	nd := synthRow("03", report.Wireline, nonDurable, coreNATS, 995, 1005, 1010)
	it := onlyItem(t, capClaimsOf(t, d, nd)["nondurable-similar-durable-1x2"])
	assert.Equal(t, report.TestHolds, it.Test, "%s: %s", it.Text, it.Evidence)
	far := synthRow("03", report.Wireline, nonDurable, coreNATS, 1990, 2000, 2010)
	assert.Equal(t, report.TestDoesNotHold, onlyItem(t, capClaimsOf(t, d, far)["nondurable-similar-durable-1x2"]).Test)

	ftm := func(p, s, n int) scenario.Factors {
		f := nonDurable
		f.Model, f.Publishers, f.Subscribers, f.Topics = scenario.FewToMany, p, s, n
		return f
	}
	small := synthRow("19", report.Wireline, ftm(1, 50, 1), coreNATS, 990, 1000, 1010)       // ×50: 50 k delivered/s
	large := synthRow("23", report.Wireline, ftm(10, 100, 10), coreNATS, 9900, 10000, 10100) // ×10: 100 k delivered/s
	it = onlyItem(t, capClaimsOf(t, small, large)["few-to-many-nondurable-rises"])
	assert.InDelta(t, 2, it.Value, 1e-9, "compared in delivered msgs/s")
	assert.Equal(t, report.TestHolds, it.Test, "%s: %s", it.Text, it.Evidence)
}

// The CI of a ratio of two rows' Stein estimates covers 95 %: 2,000
// seeded trials of two rows, counted, for each design pslab capacity runs
// (counted searches: first stage 3, Stein's total for the capacity target
// up to 6; fixed loads: first stage 3, up to 10, a level whose total is
// beyond the cap keeps its first stage). Adding repetitions until a naive
// CI is narrow enough (optional stopping) covers less.
func TestRatioCICovers(t *testing.T) {
	const trials = 2000
	p := capacity.DefaultParams()
	designs := []struct {
		name      string
		n0, cap   int
		d         float64 // the half-width aimed at, on the log scale
		keepFirst bool    // a total beyond the cap keeps the first stage
		seed      uint64
	}{
		{"capacity", p.MinSearches, p.MaxSearches, math.Log(1+p.Target) - math.Log(1+p.Resolution)/2, false, 31},
		{"latency at a fixed load", p.LatencyMinReps, p.LatencyMaxReps, math.Log(1 + p.LatencyTarget), true, 32},
	}
	for _, ds := range designs {
		t.Run(ds.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(ds.seed, 4))
			type row struct{ mu, sigma float64 }
			a, b := row{math.Log(1000), 0.03}, row{math.Log(1500), 0.08}
			truth := math.Exp(b.mu - a.mu)
			draw := func(r row) float64 { return math.Exp(r.mu + r.sigma*rng.NormFloat64()) }
			first := func(r row) []float64 {
				xs := make([]float64, ds.n0)
				for i := range xs {
					xs[i] = draw(r)
				}
				return xs
			}
			stein := func(r row) []float64 {
				xs := first(r)
				ls, _ := report.Logs(xs)
				n := metrics.SteinN(ls, ds.d)
				switch {
				case n > ds.cap && ds.keepFirst:
					n = ds.n0
				case n > ds.cap:
					n = ds.cap
				}
				for len(xs) < n {
					xs = append(xs, draw(r))
				}
				return xs
			}
			optional := func(r row) []float64 {
				xs := first(r)
				for len(xs) < ds.cap {
					ls, _ := report.Logs(xs)
					if _, h := metrics.MeanCI95(ls); h <= ds.d {
						break
					}
					xs = append(xs, draw(r))
				}
				return xs
			}
			covered, naive := 0, 0
			for range trials {
				ea, _ := steinLog(stein(a), ds.n0)
				eb, _ := steinLog(stein(b), ds.n0)
				if _, lo, hi := ratioCI(ea, eb, 0); lo <= truth && truth <= hi {
					covered++
				}
				// The naive CI after optional stopping: each row's t
				// interval over all its values, as if their number had
				// been fixed.
				xa, xb := optional(a), optional(b)
				na, _ := steinLog(xa, len(xa))
				nb, _ := steinLog(xb, len(xb))
				if _, lo, hi := ratioCI(na, nb, 0); lo <= truth && truth <= hi {
					naive++
				}
			}
			t.Logf("coverage of %d: Stein %d, optional stopping %d", trials, covered, naive)
			assert.GreaterOrEqual(t, covered, 1860, "at least 93 %%")
			assert.LessOrEqual(t, covered, 1940, "at most 97 %%")
			assert.Less(t, naive, covered, "optional stopping covers less")
		})
	}
}

// The report shows the claims on capacity, with their own anchors.
func capacityRenderedMarkdown(t *testing.T, rows ...*capRow) string {
	t.Helper()
	d := report.Build(nil)
	c := checkRows(rows)
	d.CapacityClaims = &c
	var sb strings.Builder
	require.NoError(t, report.WriteMarkdown(&sb, d, Check(d), []string{"synthetic"}))
	return sb.String()
}

func TestCapacityClaimsInReport(t *testing.T) {
	d := synthRow("01", report.Wireline, durable, jetStream, 990, 1000, 1010)
	nd := synthRow("03", report.Wireline, nonDurable, coreNATS, 1990, 2000, 2010)
	md := capacityRenderedMarkdown(t, d, nd)
	assert.Contains(t, md, "## Claims on capacity and on latency at equal offered load")
	assert.Contains(t, md, `<a id="cap-claim-nondurable-beats-durable"></a>`)
	assert.NotContains(t, md, "## Claims check", "no paper-mode records: no paper-mode claims section")
	dd := report.Build(nil)
	c := checkRows([]*capRow{d, nd})
	dd.CapacityClaims = &c
	doc := report.BuildDoc(dd, Check(dd), nil)
	require.NotNil(t, doc.CapacityClaims)
	assert.Equal(t, []string{"b"}, doc.CapacityClaims.Brokers)
	assert.NotEmpty(t, doc.CapacityClaims.Claims)
}
