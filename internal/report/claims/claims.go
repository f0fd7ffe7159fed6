// Package claims holds Gaddah & Kunz's qualitative conclusions as claims
// with explicit rules, and evaluates them on a dataset: on the paper's own
// printed values (which checks the rule) and on each broker's
// measurements, every item a test on the repetitions (docs/report.md, "The
// claims check"). Check returns a report.ClaimsCheck, which every report
// format prints.
package claims

import (
	"fmt"
	"math"
	"sort"

	"pslab/internal/report"
	"pslab/internal/scenario"
)

// Tolerance is the relative difference below which two throughputs or
// latencies count as "similar" (the paper's "approximately similar",
// "differ little"), and above which one "beats" or "cuts" the other.
const Tolerance = 0.10

// The result types, as every report format prints them.
type (
	Claim   = report.Claim
	Outcome = report.Outcome
	Item    = report.Item
)

// point is one case on one network as a claim sees it.
type point struct {
	suite, caseID, network string
	f                      scenario.Factors
	pub, sub, lat          float64 // NaN when not measured
	flags                  []string
	quick                  bool
	countsFromQuick        bool            // paper point whose counts come from a --quick record
	reps                   *report.Samples // per repetition; nil on the paper's values
	mechanism              string          // what the factors meant on the broker; "" on the paper's values
	row                    *capRow         // a capacity row (claims on capacity); nil otherwise
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
func measuredPoints(d *report.Dataset, broker string) *points {
	ps := &points{index: map[pointKey]*point{}}
	for _, suite := range d.Suites {
		for _, c := range d.Cases(suite) {
			for _, n := range []string{report.Wireline, report.Wireless} {
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
				p.reps = g.Samples()
				p.mechanism = p.reps.Mechanism
				sort.Strings(p.flags)
				ps.add(p)
			}
		}
	}
	return ps
}

// paperPoints are the published values carried by the records (corrected
// readings where an erratum gives one).
func paperPoints(d *report.Dataset) *points {
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
			for _, n := range []string{report.Wireline, report.Wireless} {
				get := func(m string) float64 {
					if v, ok := report.LookupPaper(paper, m, n); ok {
						return v.Value()
					}
					return math.NaN()
				}
				p := &point{suite: suite, caseID: c.Case, network: n, f: rep.Factors,
					pub: get(report.PubTput), sub: get(report.SubTput), lat: get(report.LatencyMs), countsFromQuick: rep.Quick}
				if math.IsNaN(p.pub) && math.IsNaN(p.sub) && math.IsNaN(p.lat) {
					continue
				}
				ps.add(p)
			}
		}
	}
	return ps
}

// Check evaluates Gaddah & Kunz's claims on a dataset, with what a reader
// must know to read them. It is a pure function of the dataset.
func Check(d *report.Dataset) report.ClaimsCheck {
	c := report.ClaimsCheck{Tolerance: Tolerance, Alpha: report.Alpha, Claims: Evaluate(d),
		PaperValues: len(paperPoints(d).all) > 0, Notes: report.CaveatTexts(d)}
	return c
}

// Evaluate evaluates every claim on the paper's values and on each
// broker's measurements. It is a pure function of the dataset.
func Evaluate(d *report.Dataset) []Claim {
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
			c.Paper = Outcome{Verdict: report.NotMeasurable, Reason: "the records carry no published values (`paper:` in the scenario file)"}
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
	tally(&o)
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
	case report.PubTput:
		return p.pub
	case report.SubTput:
		return p.sub
	}
	return p.lat
}

// metricWords names a metric in evidence texts.
func metricWords(m string) string {
	switch m {
	case report.PubTput:
		return "pub msgs/s"
	case report.SubTput:
		return "sub msgs/s"
	}
	return "latency ms"
}

// similar: within the tolerance of 1.
func similar(r float64) bool { return math.Abs(r-1) <= Tolerance }

// above: more than the tolerance above 1.
func above(r float64) bool { return r > 1+Tolerance }

// below: more than the tolerance below 1.
func below(r float64) bool { return r < 1-Tolerance }
