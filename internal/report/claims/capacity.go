package claims

// Claims on capacity and on latency at equal offered load (issue 31,
// item 4): the paper's conclusions evaluated on the rows of capacity
// bundles (`pslab capacity`) instead of on saturating runs. Every claim is
// a row of capClaimDefs (defs_capacity.go) evaluated by one helper,
// capClaim: a finder forms the pairs of rows, and each pair becomes an
// item judged by the 95 % CI of its ratio against the claim's margin.

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"pslab/internal/capacity"
	"pslab/internal/metrics"
	"pslab/internal/report"
)

// CapacityBundle is one capacity bundle's rows with the parameters it ran
// with (its run.json): Stein's first stages and the resolution come from
// them.
type CapacityBundle struct {
	Source  string
	Params  capacity.Params
	Results []capacity.Result
}

// EqualLoadTolerance: two fixed loads count as the same offered load when
// they are within ±5 % of each other.
const EqualLoadTolerance = 0.05

// capRow is a capacity row as a claim sees it.
type capRow struct {
	res       *capacity.Result
	source    string
	params    capacity.Params
	mechanism string      // what the factors meant on the broker (the first record's)
	levels    []loadLevel // the fixed loads, with their runs
}

// rowsOf are the bundles' rows.
func rowsOf(bundles []CapacityBundle) []*capRow {
	var out []*capRow
	for _, b := range bundles {
		for i := range b.Results {
			r := &b.Results[i]
			row := &capRow{res: r, source: b.Source, params: b.Params, levels: levelsOf(r)}
			for _, rec := range r.Records() {
				if row.mechanism == "" {
					row.mechanism = rec.Mechanism
				}
			}
			out = append(out, row)
		}
	}
	return out
}

// logEstimate is a quantity's Stein estimate on the log scale: mean, the
// standard error s₀/√N of Stein's pivot and its degrees of freedom n₀ − 1
// (√N(x̄ − μ)/s₀ has exactly Student's t with n₀ − 1 degrees of freedom,
// whatever N the first stage chose: docs/capacity.md).
type logEstimate struct {
	mean, se float64
	df       int
	n        int
}

// steinLog is the Stein estimate of the logs of xs, whose first n0 values
// were the first stage; ok is false with fewer than two first-stage values
// or a value that is not positive.
func steinLog(xs []float64, n0 int) (logEstimate, bool) {
	ls, ok := report.Logs(xs)
	n0 = min(n0, len(ls))
	if !ok || n0 < 2 {
		return logEstimate{n: len(xs)}, false
	}
	m, h := metrics.SteinCI(ls, n0)
	if math.IsNaN(h) {
		return logEstimate{n: len(xs)}, false
	}
	return logEstimate{mean: m, se: h / metrics.T975(n0-1), df: n0 - 1, n: len(ls)}, true
}

// ratioCI is the 95 % CI of exp(b.mean − a.mean), widened on the log
// scale by widen (each side's own systematic error, e.g. half a search's
// resolution). The two pivots are independent t variables; their sum
// takes Welch-Satterthwaite's degrees of freedom, floored at the smaller
// side's (TestRatioCICovers measures the coverage).
func ratioCI(a, b logEstimate, widen float64) (est, lo, hi float64) {
	d := b.mean - a.mean
	va, vb := a.se*a.se, b.se*b.se
	df := float64(min(a.df, b.df))
	if den := va*va/float64(a.df) + vb*vb/float64(b.df); den > 0 {
		df = math.Max(df, (va+vb)*(va+vb)/den)
	}
	h := metrics.StudentT(df).Quantile(0.975)*math.Sqrt(va+vb) + widen
	return math.Exp(d), math.Exp(d - h), math.Exp(d + h)
}

// margin is how a claim judges a ratio's CI: above Lo (the CI's lower
// bound above it: "more than 10 %" is above 1.10), below Hi, or within
// [Lo, Hi] (the whole CI inside the band: "similar").
type margin struct {
	kind   string // "above", "below", "within"
	lo, hi float64
}

func marginAbove(r float64) margin       { return margin{kind: "above", lo: r} }
func marginBelow(r float64) margin       { return margin{kind: "below", hi: r} }
func marginWithin(lo, hi float64) margin { return margin{kind: "within", lo: lo, hi: hi} }

// decide is the item's verdict from the ratio's CI [lo, hi].
func (m margin) decide(lo, hi float64) report.TestVerdict {
	switch m.kind {
	case "above":
		switch {
		case lo > m.lo:
			return report.TestHolds
		case hi <= m.lo:
			return report.TestDoesNotHold
		}
	case "below":
		switch {
		case hi < m.hi:
			return report.TestHolds
		case lo >= m.hi:
			return report.TestDoesNotHold
		}
	case "within":
		switch {
		case lo >= m.lo && hi <= m.hi:
			return report.TestHolds
		case hi < m.lo || lo > m.hi:
			return report.TestDoesNotHold
		}
	}
	return report.TestInconclusive
}

// String says the margin in a rule.
func (m margin) String() string {
	switch m.kind {
	case "above":
		return fmt.Sprintf("wholly above ×%.2f holds, wholly at or below it does not hold", m.lo)
	case "below":
		return fmt.Sprintf("wholly below ×%.2f holds, wholly at or above it does not hold", m.hi)
	}
	return fmt.Sprintf("wholly within ×%.2f-×%.2f holds, wholly outside it does not hold", m.lo, m.hi)
}

// capPoints are one broker's capacity rows as points (a row that appears
// in two bundles counts once: the first finished one; dups says which
// were left out).
func capPoints(rows []*capRow, broker string) (ps *points, dups []string) {
	ps = &points{index: map[pointKey]*point{}}
	for _, row := range rows {
		r := row.res
		if r.Broker != broker || r.Quick {
			continue
		}
		p := &point{suite: r.Suite, caseID: r.Case, network: r.Network, f: r.Factors,
			pub: math.NaN(), sub: math.NaN(), lat: math.NaN(), mechanism: row.mechanism, row: row}
		if q := ps.find(p.suite, p.network, p.f); q != nil {
			why := "the first"
			first := q.row.source
			if !q.row.res.Done && r.Done {
				*q = *p // the index and the list keep q: it becomes this row
				why = "the other did not finish"
			} else if q.row.res.Done && !r.Done {
				why = "the other did not finish"
			}
			dups = append(dups, fmt.Sprintf("%s %s %s %s is in %s and %s: the one in %s counts (%s)", r.Suite, r.Case, broker, r.Network,
				first, row.source, q.row.source, why))
			continue
		}
		ps.add(p)
	}
	return ps, dups
}

// CheckCapacity evaluates the claims on capacity and on latency at equal
// offered load on capacity bundles' rows, per broker. It is a pure
// function of the bundles.
func CheckCapacity(bundles []CapacityBundle) report.ClaimsCheck {
	return checkRows(rowsOf(bundles))
}

func checkRows(rows []*capRow) report.ClaimsCheck {
	var brokers []string
	seen := map[string]bool{}
	for _, r := range rows {
		if !seen[r.res.Broker] {
			seen[r.res.Broker] = true
			brokers = append(brokers, r.res.Broker)
		}
	}
	sort.Strings(brokers)
	c := report.ClaimsCheck{Tolerance: Tolerance, Alpha: report.Alpha, Brokers: brokers, Anchor: "cap-claim",
		EqualLoad: EqualLoadTolerance, ShowSkipped: true}
	byBroker := map[string]*points{}
	for _, b := range brokers {
		ps, dups := capPoints(rows, b)
		byBroker[b] = ps
		c.Notes = append(c.Notes, dups...)
	}
	for _, def := range capClaimDefs {
		cl := Claim{ID: def.id, Statement: def.statement, Source: def.source, Rule: def.ruleText(), Needs: def.needs,
			Brokers: brokers, ByBroker: map[string]Outcome{}, Paper: Outcome{Verdict: report.NotMeasurable}}
		for _, b := range brokers {
			o := capClaim(def, byBroker[b])
			tally(&o)
			if o.Total == 0 {
				o.Reason = "no comparable rows in the capacity bundles (see Needs)"
				if len(o.Skipped) > 0 {
					o.Reason = "no comparison could be made (see \"Not compared\" below)"
				}
			}
			cl.ByBroker[b] = o
		}
		c.Claims = append(c.Claims, cl)
	}
	return c
}

// capClaim is the one helper every claim on capacity rows goes through:
// the finder's pairs (on the same mechanism unless the mechanism is the
// claim's factor), each judged on capacity or on latency at equal offered
// load.
func capClaim(def capClaimDef, ps *points) Outcome {
	find := def.find
	if !def.mechanismIsFactor {
		find = onSameMechanism(find, def.factor)
	}
	var o Outcome
	prs, skipped := find(ps)
	o.Skipped = append(o.Skipped, skipped...)
	for _, p := range prs {
		var it Item
		var why string
		if def.latency {
			it, why = latencyItem(def, p)
		} else {
			it, why = capacityItem(def, p)
		}
		if why != "" {
			o.Skipped = append(o.Skipped, pairLabel(p)+": "+why)
			continue
		}
		o.Items = append(o.Items, it)
	}
	return o
}

// unusable says why a row cannot be compared at all ("" if it can).
func unusable(p *point) string {
	r := p.row.res
	switch {
	case len(r.Identities) > 1:
		return fmt.Sprintf("%s mixes builds or broker configurations (%s)", p.caseID, strings.Join(r.Identities, ", "))
	case r.Capacity <= 0:
		return fmt.Sprintf("%s has no capacity (%s)", p.caseID, r.Text)
	}
	return ""
}

// capacityItem judges the ratio b/a of the two rows' capacities (in
// delivered messages per second). A row whose capacity is a lower bound
// (client-bound, or no load failed) says nothing about the broker: the
// item is inconclusive, and says why.
func capacityItem(def capClaimDef, p pair) (Item, string) {
	for _, q := range []*point{p.a, p.b} {
		if why := unusable(q); why != "" {
			return Item{}, why
		}
	}
	ra, rb := p.a.row.res, p.b.row.res
	label := pairLabel(p)
	it := Item{Key: label, Label: label, Value: report.Ratio(rb.Delivered, ra.Delivered), Flags: capFlags(p)}
	it.Text = fmt.Sprintf("%s %s / %s %s = %s", def.nameB, capText(rb), def.nameA, capText(ra), report.FormatRatio(it.Value))
	it.P = math.NaN()
	for _, r := range []*capacity.Result{ra, rb} {
		if r.LowerBound {
			why := fmt.Sprintf("%s's capacity is a lower bound (bound: %s)", r.Case, r.Bound.Name)
			if r.Bound.Name == capacity.BoundClient {
				why = fmt.Sprintf("%s is client-bound (capacity ≥ %s: the load clients reached %.0f %% CPU), no evidence about the broker", r.Case, report.FormatNum(r.Capacity), capacity.ClientBusyPct)
			}
			setTest(&it, report.TestInconclusive, math.NaN(), why)
			return it, ""
		}
	}
	ea, oka := steinLog(ra.Estimates, p.a.row.params.MinSearches)
	eb, okb := steinLog(rb.Estimates, p.b.row.params.MinSearches)
	if !oka || !okb {
		setTest(&it, report.TestInconclusive, math.NaN(), fmt.Sprintf("no CI: searches %d/%d (a CI needs 2 in the first stage)", len(ra.Estimates), len(rb.Estimates)))
		return it, ""
	}
	// Each estimate is its search's bracket middle, within half the
	// resolution of the search's edge: the CI widens by that on each side.
	widen := math.Log(1+p.a.row.params.Resolution)/2 + math.Log(1+p.b.row.params.Resolution)/2
	// The capacities are offered loads; the delivered ones are fixed
	// multiples of them, so the ratio's relative CI is the offered one's.
	_, lo, hi := ratioCI(ea, eb, widen)
	scale := it.Value / math.Exp(eb.mean-ea.mean)
	lo, hi = lo*scale, hi*scale
	setTest(&it, def.margin.decide(lo, hi), math.NaN(), fmt.Sprintf("95 %% CI %s-%s; searches %d/%d", report.FormatRatio(lo), report.FormatRatio(hi), ea.n, eb.n))
	return it, ""
}

// capText is a row's capacity in delivered msgs/s with its bound.
func capText(r *capacity.Result) string {
	s := report.FormatNum(r.Delivered)
	if r.LowerBound {
		s = "≥ " + s
	}
	if !math.IsNaN(r.HalfPct) && r.HalfPct > 0 && !r.LowerBound {
		s += fmt.Sprintf(" ±%.1f %%", r.HalfPct)
	}
	return s + " (" + r.Bound.Name + ")"
}

// capFlags are the pair's rows' notes worth a †: a row not finished, a
// row whose capacity missed its CI target.
func capFlags(p pair) []string {
	var out []string
	for _, q := range []*point{p.a, p.b} {
		if !q.row.res.Done {
			out = append(out, q.caseID+" not finished")
		}
	}
	return out
}

// loadLevel is a row's fixed load with its runs' mean latencies.
type loadLevel struct {
	load      float64
	fraction  float64
	means     []float64
	sustained int
	clientPct float64 // the highest client CPU set use (%) of its runs
}

// levelsOf are a row's fixed loads with their runs' mean latencies.
func levelsOf(r *capacity.Result) []loadLevel {
	var out []loadLevel
	for _, lv := range r.Replayed().Fixed {
		l := loadLevel{load: lv.Load, fraction: lv.Fraction}
		for _, run := range lv.Runs {
			if run.Result == nil || run.Result.Latency.Count == 0 {
				continue
			}
			l.means = append(l.means, run.Result.Latency.MeanMs)
			if run.Probe != nil && run.Probe.Sustained {
				l.sustained++
			}
			if run.Probe != nil {
				l.clientPct = math.Max(l.clientPct, run.Probe.ClientSetPct)
			}
		}
		if len(l.means) > 0 {
			out = append(out, l)
		}
	}
	return out
}

func loadsText(ls []loadLevel) string {
	if len(ls) == 0 {
		return "none"
	}
	var xs []string
	for _, l := range ls {
		xs = append(xs, report.FormatNum(l.load))
	}
	return strings.Join(xs, ", ")
}

// latencyItem judges the ratio b/a of mean latency at an offered load both
// rows ran at (fixed loads within EqualLoadTolerance of each other, every
// run sustained): never a saturated backlog's age. The closest pair of
// loads counts (the higher on a tie).
func latencyItem(def capClaimDef, p pair) (Item, string) {
	for _, q := range []*point{p.a, p.b} {
		if why := unusable(q); why != "" {
			return Item{}, why
		}
	}
	la, lb := p.a.row.levels, p.b.row.levels
	var best [2]*loadLevel
	bestD := math.Inf(1)
	for i := range la {
		for j := range lb {
			d := math.Abs(math.Log(lb[j].load / la[i].load))
			if d > math.Log(1+EqualLoadTolerance) {
				continue
			}
			if d < bestD-1e-12 || (math.Abs(d-bestD) <= 1e-12 && la[i].load > best[0].load) {
				best, bestD = [2]*loadLevel{&la[i], &lb[j]}, d
			}
		}
	}
	if best[0] == nil {
		return Item{}, fmt.Sprintf("no equal offered load: %s ran at %s msg/s, %s at %s (fixed loads are fractions of each row's own capacity; a pair needs loads within ±%.0f %%)",
			p.a.caseID, loadsText(la), p.b.caseID, loadsText(lb), 100*EqualLoadTolerance)
	}
	a, b := best[0], best[1]
	for _, l := range []struct {
		c  string
		lv *loadLevel
	}{{p.a.caseID, a}, {p.b.caseID, b}} {
		if l.lv.sustained < len(l.lv.means) {
			return Item{}, fmt.Sprintf("at %s msg/s %s sustained %d of %d runs: a backlog that grows makes latency its age", report.FormatNum(l.lv.load), l.c, l.lv.sustained, len(l.lv.means))
		}
	}
	ea, oka := steinLog(a.means, p.a.row.params.LatencyMinReps)
	eb, okb := steinLog(b.means, p.b.row.params.LatencyMinReps)
	label := pairLabel(p)
	ma, mb := mean(a.means), mean(b.means)
	it := Item{Key: label, Label: label, Value: report.Ratio(mb, ma), P: math.NaN(), Flags: capFlags(p),
		Text: fmt.Sprintf("at %s msg/s: %s %s ms / %s %s ms = %s", report.FormatNum(a.load), def.nameB, report.FormatNum(mb), def.nameA, report.FormatNum(ma), report.FormatRatio(report.Ratio(mb, ma)))}
	if math.Abs(a.load-b.load) > 1e-9*a.load {
		it.Text = fmt.Sprintf("at %s and %s msg/s: %s %s ms / %s %s ms = %s", report.FormatNum(a.load), report.FormatNum(b.load), def.nameB, report.FormatNum(mb), def.nameA, report.FormatNum(ma), report.FormatRatio(it.Value))
	}
	if !oka || !okb {
		setTest(&it, report.TestInconclusive, math.NaN(), fmt.Sprintf("no CI: runs %d/%d (a CI needs 2 in the first stage)", len(a.means), len(b.means)))
		return it, ""
	}
	for _, l := range []struct {
		c  string
		lv *loadLevel
	}{{p.a.caseID, a}, {p.b.caseID, b}} {
		if l.lv.clientPct >= capacity.ClientBusyPct {
			setTest(&it, report.TestInconclusive, math.NaN(), fmt.Sprintf("%s is client-bound at this load (the load clients reached %.0f %% CPU, limit %.0f %%): no evidence about the broker", l.c, l.lv.clientPct, capacity.ClientBusyPct))
			return it, ""
		}
	}
	if fa, fb := p.a.row.res.FloorMs, p.b.row.res.FloorMs; ma <= fa && mb <= fb && fa > 0 && fb > 0 {
		setTest(&it, report.TestInconclusive, math.NaN(), fmt.Sprintf("both means within the latency floor (%s/%s ms): scheduling, not the broker", report.FormatNum(fa), report.FormatNum(fb)))
		return it, ""
	}
	_, lo, hi := ratioCI(ea, eb, 0)
	// The CI is of the geometric means' ratio; the text's ratio is of
	// the arithmetic means.
	setTest(&it, def.margin.decide(lo, hi), math.NaN(), fmt.Sprintf("95 %% CI %s-%s of the geometric means; runs %d/%d", report.FormatRatio(lo), report.FormatRatio(hi), ea.n, eb.n))
	return it, ""
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
