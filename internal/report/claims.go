package report

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"pslab/internal/scenario"
)

// Verdict of a claim on one source of numbers.
type Verdict string

// Verdicts.
const (
	Holds         Verdict = "holds"
	DoesNotHold   Verdict = "does not hold"
	Inconclusive  Verdict = "inconclusive"
	NotMeasurable Verdict = "not measurable"
)

// PaperSource names the paper's own printed values as a source: every
// claim is also evaluated on them, which checks that the claim's rule
// says what the paper's numbers say.
const PaperSource = "paper"

// Tolerance is the relative difference below which two throughputs or
// latencies count as "similar" (the paper's "approximately similar",
// "differ little"), and above which one "beats" or "cuts" the other.
const Tolerance = 0.10

// Item is one comparison behind a claim: a pair of cases, one case on two
// networks, or a curve.
type Item struct {
	Key      string  // identifies the comparison across sources
	Label    string  // e.g. "gaddah-kunz-set1 05↔07 wireline"
	Value    float64 // the compared quantity, usually a ratio
	Text     string  // the numbers behind it
	Supports bool    // the item agrees with the claim (the test holds, for measurements)
	Flags    []string
	// Test is the statistical verdict on measured repetitions (empty on
	// the paper's values, which are single numbers); P its p-value (the
	// smaller, the stronger the evidence for the claim); Evidence the
	// repetitions and deliveries per record behind it.
	Test     TestVerdict
	P        float64
	Evidence string
}

// Outcome is a claim evaluated on one source.
type Outcome struct {
	Verdict Verdict
	Support int    // items that agree (the test holds, for measurements)
	Against int    // measured items whose test does not hold
	Total   int    // items evaluated
	Reason  string // for NotMeasurable: what is missing
	Items   []Item
	Skipped []string // comparisons that could not be made, with the reason
	Flagged int      // items involving records with flags
	Quick   bool     // some numbers come from --quick runs
}

// Claim is one of the paper's qualitative conclusions, evaluated on the
// paper's values and on each broker's measurements.
type Claim struct {
	ID        string
	Statement string // the claim in the paper's terms
	Source    string // where the paper says it
	Rule      string // how it is evaluated here
	Needs     string // which cases it needs
	Paper     Outcome
	Brokers   []string
	ByBroker  map[string]Outcome
}

// point is one case on one network as a claim sees it.
type point struct {
	suite, caseID, network string
	f                      scenario.Factors
	pub, sub, lat          float64 // NaN when not measured
	flags                  []string
	quick                  bool
	countsFromQuick        bool // paper point whose counts come from a --quick record
	reps                   *repValues
}

// repValues are a measured point's per-repetition values (nil on the
// paper's values).
type repValues struct {
	pub, sub, lat, late []float64 // lat only for repetitions with deliveries
	subPub, pubSub      []float64 // per record
	deliveries          []int64   // received in the window, per record
	mechanism           string    // what the factors meant on the broker (first record)
}

// points is one source's numbers, indexed by suite, network and factors.
type points struct {
	all   []*point
	index map[pointKey]*point
}

type pointKey struct {
	suite, network string
	f              scenario.Factors
}

func (ps *points) add(p *point) {
	k := pointKey{p.suite, p.network, p.f}
	if _, dup := ps.index[k]; dup {
		return // two case ids with the same factors: the first one counts
	}
	ps.index[k] = p
	ps.all = append(ps.all, p)
}

func (ps *points) find(suite, network string, f scenario.Factors) *point {
	return ps.index[pointKey{suite, network, f}]
}

// measuredPoints are a broker's aggregated measurements on the paper's two
// networks (other profiles have no counterpart in the paper's claims).
func measuredPoints(d *Dataset, broker string) *points {
	ps := &points{index: map[pointKey]*point{}}
	for _, suite := range d.Suites {
		for _, c := range d.Cases(suite) {
			for _, n := range []string{Wireline, Wireless} {
				g := d.Get(suite, c.Case, broker, n)
				if g == nil || g.Reps == 0 {
					continue
				}
				p := &point{suite: suite, caseID: g.Case, network: n, f: g.Factors,
					pub: g.Pub.Mean, sub: g.Sub.Mean, lat: math.NaN(), quick: g.Quick}
				if g.Lat.Valid() {
					p.lat = g.Lat.Mean
				}
				for name := range g.Flags {
					p.flags = append(p.flags, name)
				}
				p.reps = repValuesOf(g)
				sort.Strings(p.flags)
				ps.add(p)
			}
		}
	}
	return ps
}

// paperPoints are the published values carried by the records (corrected
// readings where an erratum gives one).
func paperPoints(d *Dataset) *points {
	ps := &points{index: map[pointKey]*point{}}
	for _, suite := range d.Suites {
		for _, c := range d.Cases(suite) {
			// Prefer a full run's group for the factors: --quick may reduce counts.
			rep := c
			for _, g := range d.Groups {
				if g.Suite == suite && g.Case == c.Case && !g.Quick {
					rep = g
					break
				}
			}
			paper := rep.Paper
			if paper == nil {
				paper = c.Paper
			}
			for _, n := range []string{Wireline, Wireless} {
				get := func(m string) float64 {
					if v, ok := LookupPaper(paper, m, n); ok {
						return v.Value()
					}
					return math.NaN()
				}
				p := &point{suite: suite, caseID: c.Case, network: n, f: rep.Factors,
					pub: get(PubTput), sub: get(SubTput), lat: get(LatencyMs), countsFromQuick: rep.Quick}
				if math.IsNaN(p.pub) && math.IsNaN(p.sub) && math.IsNaN(p.lat) {
					continue
				}
				ps.add(p)
			}
		}
	}
	return ps
}

// EvaluateClaims evaluates every claim on the paper's values and on each
// broker's measurements. It is a pure function of the dataset.
func EvaluateClaims(d *Dataset) []Claim {
	paper := paperPoints(d)
	measured := map[string]*points{}
	for _, b := range d.Brokers {
		measured[b] = measuredPoints(d, b)
	}
	var out []Claim
	for _, def := range claimDefs {
		c := Claim{ID: def.id, Statement: def.statement, Source: def.source, Rule: def.rule, Needs: def.needs,
			Brokers: d.Brokers, ByBroker: map[string]Outcome{}}
		c.Paper = finish(def, paper, def.eval(paper))
		if len(paper.all) == 0 {
			c.Paper = Outcome{Verdict: NotMeasurable, Reason: "the records carry no published values (`paper:` in the scenario file)"}
		}
		for _, b := range d.Brokers {
			c.ByBroker[b] = finish(def, measured[b], def.eval(measured[b]))
		}
		out = append(out, c)
	}
	return out
}

// finish turns evaluated items into a verdict (Outcome.tally).
func finish(def claimDef, ps *points, o Outcome) Outcome {
	o.tally()
	for _, p := range ps.all {
		o.Quick = o.Quick || p.quick
	}
	switch {
	case o.Total == 0 && o.Reason == "" && len(o.Skipped) > 0:
		o.Reason = "no comparison could be made (see \"Not compared\" below)"
	case o.Total == 0 && o.Reason == "":
		o.Reason = "no comparable cases in the results (see Needs)"
	}
	return o
}

// pair is two points of one suite and network that differ in the factor a
// claim is about.
type pair struct{ a, b *point }

// pairsOn finds, on each network, every point a with isA(a.f) and its
// counterpart b (factors other(a.f)) in the same suite.
func pairsOn(ps *points, networks []string, isA func(scenario.Factors) bool, other func(scenario.Factors) scenario.Factors) []pair {
	var out []pair
	for _, n := range networks {
		for _, a := range ps.all {
			if a.network != n || !isA(a.f) {
				continue
			}
			if b := ps.find(a.suite, n, other(a.f)); b != nil {
				out = append(out, pair{a, b})
			}
		}
	}
	return out
}

// crossNetwork finds each point on the wireline that matches sel and its
// twin on the wireless link.
func crossNetwork(ps *points, sel func(scenario.Factors) bool) []pair {
	var out []pair
	for _, a := range ps.all {
		if a.network != Wireline || !sel(a.f) {
			continue
		}
		if b := ps.find(a.suite, Wireless, a.f); b != nil {
			out = append(out, pair{a, b})
		}
	}
	return out
}

func pairLabel(p pair) string {
	if p.a.network != p.b.network {
		return fmt.Sprintf("%s %s %s→%s", p.a.suite, p.a.caseID, p.a.network, p.b.network)
	}
	return fmt.Sprintf("%s %s↔%s %s", p.a.suite, p.a.caseID, p.b.caseID, p.a.network)
}

func pairFlags(ps ...*point) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range ps {
		for _, f := range p.flags {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	sort.Strings(out)
	return out
}

// metricOf picks a metric of a point.
func metricOf(p *point, m string) float64 {
	switch m {
	case PubTput:
		return p.pub
	case SubTput:
		return p.sub
	}
	return p.lat
}

// metricWords names a metric in evidence texts.
func metricWords(m string) string {
	switch m {
	case PubTput:
		return "pub msgs/s"
	case SubTput:
		return "sub msgs/s"
	}
	return "latency ms"
}

// compare builds one item per pair from the ratio b/a of a metric,
// judged by the rule (on measurements, a test on the log values of the
// repetitions). Pairs whose ratio cannot be formed are listed as skipped.
func compare(o *Outcome, prs []pair, m, nameA, nameB string, ru rule) {
	for _, p := range prs {
		va, vb := metricOf(p.a, m), metricOf(p.b, m)
		r := ratio(vb, va)
		label := pairLabel(p)
		if math.IsNaN(r) {
			o.Skipped = append(o.Skipped, fmt.Sprintf("%s: %s %s %s, %s %s (no ratio)", label, nameA, metricWords(m), FormatNum(va), nameB, FormatNum(vb)))
			continue
		}
		it := Item{
			Key: label, Label: label, Value: r, Supports: ru.paper(r), Flags: pairFlags(p.a, p.b),
			Text: fmt.Sprintf("%s %s / %s %s = %s", nameB, FormatNum(vb), nameA, FormatNum(va), FormatRatio(r)),
		}
		testItem(&it, ru.h, 0, false, term{p.a, m, -1}, term{p.b, m, 1})
		o.Items = append(o.Items, it)
	}
}

// compareRatios builds one item per pair of pairs: the ratio b/a on the
// wireless link against the same ratio on the wireline (on measurements,
// the four-sample contrast of log means).
func compareRatios(o *Outcome, ps *points, isA func(scenario.Factors) bool, other func(scenario.Factors) scenario.Factors,
	m, nameA, nameB string, ru rule) {
	for _, p := range pairsOn(ps, []string{Wireline}, isA, other) {
		wa, wb := ps.find(p.a.suite, Wireless, p.a.f), ps.find(p.b.suite, Wireless, p.b.f)
		label := fmt.Sprintf("%s %s↔%s", p.a.suite, p.a.caseID, p.b.caseID)
		if wa == nil || wb == nil {
			o.Skipped = append(o.Skipped, label+": not on both networks")
			continue
		}
		rl := ratio(metricOf(p.b, m), metricOf(p.a, m))
		ri := ratio(metricOf(wb, m), metricOf(wa, m))
		if math.IsNaN(rl) || math.IsNaN(ri) {
			o.Skipped = append(o.Skipped, label+": a ratio cannot be formed (missing or zero values)")
			continue
		}
		it := Item{
			Key: label, Label: label, Value: ri / rl, Supports: ru.paper(ri / rl), Flags: pairFlags(p.a, p.b, wa, wb),
			Text: fmt.Sprintf("%s/%s %s: wireline %s, wireless %s", nameB, nameA, metricWords(m), FormatRatio(rl), FormatRatio(ri)),
		}
		testItem(&it, ru.h, 0, false, term{wb, m, 1}, term{wa, m, -1}, term{p.b, m, -1}, term{p.a, m, 1})
		o.Items = append(o.Items, it)
	}
}

// similar: within the tolerance of 1.
func similar(r float64) bool { return math.Abs(r-1) <= Tolerance }

// above: more than the tolerance above 1.
func above(r float64) bool { return r > 1+Tolerance }

// below: more than the tolerance below 1.
func below(r float64) bool { return r < 1-Tolerance }

// summary of an outcome for tables: "holds (14/16)", or for
// measurements "inconclusive (5 hold, 2 do not, 9 inconclusive of 16)".
func (o Outcome) summary() string {
	if o.Verdict == NotMeasurable {
		return string(o.Verdict)
	}
	s := fmt.Sprintf("%s (%d/%d)", o.Verdict, o.Support, o.Total)
	if o.tested() {
		s = fmt.Sprintf("%s (%d hold, %d do not, %d inconclusive of %d)", o.Verdict, o.Support, o.Against, o.Total-o.Support-o.Against, o.Total)
	}
	var notes []string
	if o.Flagged > 0 {
		notes = append(notes, fmt.Sprintf("%d flagged", o.Flagged))
	}
	if o.Quick {
		notes = append(notes, "quick")
	}
	if len(notes) > 0 {
		s += " [" + strings.Join(notes, ", ") + "]"
	}
	return s
}

// tested: the items carry statistical tests (measurements).
func (o Outcome) tested() bool {
	for _, it := range o.Items {
		if it.Test != "" {
			return true
		}
	}
	return false
}
