package claims

import (
	"fmt"
	"math"
	"strings"

	"pslab/internal/report"
)

// Per-record quantities a claim can test besides the three metrics.
const (
	subPerPub = "sub/pub"    // subscriber over publisher throughput of one record
	pubPerSub = "pub/sub"    // its inverse
	lateShare = "late share" // deliveries after the window over all deliveries
)

// rule is how a claim judges one item: paper on a single number (the
// paper's value, the old tolerance rule), h as a test on the log values of
// the measured repetitions.
type rule struct {
	paper func(r float64) bool
	h     report.Hypothesis
}

// The common rules: "beats" (more than Tolerance above on the paper's
// numbers; significantly above 1 when measured), "cuts", "similar"
// (within ±Tolerance; TOST at that margin when measured).
var (
	ruleAbove   = rule{above, report.AboveRatio(1, Tolerance)}
	ruleBelow   = rule{below, report.BelowRatio(1, Tolerance)}
	ruleSimilar = rule{similar, report.WithinRatio(Tolerance)}
)

// ruleNoLoss: the ratio is at least 1 − Tolerance ("at least no loss":
// non-inferiority, the log ratio significantly above ln(1 − Tolerance)).
var ruleNoLoss = rule{func(r float64) bool { return r >= 1-Tolerance }, report.Hypothesis{Kind: "above", Threshold: math.Log(1 - Tolerance)}}

// ruleAtLeast: the ratio is at least r ("an order of magnitude": 10).
func ruleAtLeast(r float64) rule {
	return rule{func(x float64) bool { return x >= r }, report.AboveRatio(r, Tolerance)}
}

// sample is a point's per-repetition values of a quantity.
func sample(rv *report.Samples, m string) []float64 {
	switch m {
	case report.PubTput:
		return rv.Pub
	case report.SubTput:
		return rv.Sub
	case report.LatencyMs:
		return rv.Lat
	case subPerPub:
		return rv.SubPub
	case pubPerSub:
		return rv.PubSub
	case lateShare:
		return rv.Late
	}
	panic("claims: unknown quantity " + m)
}

// term is one side of a contrast: a point's quantity with a coefficient.
type term struct {
	p    *point
	m    string
	coef float64
}

// testItem runs the item's test: the contrast Σ coef·mean(ln x) of the
// terms (raw values instead of logs when raw) against h shifted by shift.
// On the paper's values (no repetitions) it does nothing: the point rule
// has already set Supports.
func testItem(it *Item, h report.Hypothesis, shift float64, raw bool, terms ...term) {
	if terms[0].p.reps == nil {
		return
	}
	c, ev, err := contrastOf(raw, terms...)
	if err != nil {
		setTest(it, report.TestInconclusive, math.NaN(), err.Error())
		return
	}
	h.Threshold += shift
	if h.Lo < h.Hi {
		h.Lo, h.Hi = h.Lo+shift, h.Hi+shift
	}
	v, p := report.Decide(c, h)
	setTest(it, v, p, ev)
}

// contrastOf builds the contrast of measured terms and says what it rests
// on: repetitions per side and the fewest deliveries in a record's window.
func contrastOf(raw bool, terms ...term) (report.Contrast, string, error) {
	var samples [][]float64
	var coef []float64
	var ns []string
	minDel := int64(-1)
	for _, t := range terms {
		xs := sample(t.p.reps, t.m)
		if !raw {
			var ok bool
			if xs, ok = report.Logs(xs); !ok {
				return report.Contrast{}, "", fmt.Errorf("no test: a repetition of %s %s has %s ≤ 0", t.p.caseID, t.p.network, t.m)
			}
		}
		samples = append(samples, xs)
		coef = append(coef, t.coef)
		ns = append(ns, fmt.Sprint(len(xs)))
		for _, d := range t.p.reps.Deliveries {
			if minDel < 0 || d < minDel {
				minDel = d
			}
		}
	}
	ev := fmt.Sprintf("n %s, ≥%d deliveries/record", strings.Join(dedupe(ns), "/"), max(minDel, 0))
	c, err := report.NewContrast(samples, coef)
	if err != nil {
		return c, "", fmt.Errorf("no test (%v); %s", err, ev)
	}
	return c, ev, nil
}

func setTest(it *Item, v report.TestVerdict, p float64, evidence string) {
	it.Test, it.P, it.Evidence = v, p, evidence
	it.Supports = v == report.TestHolds
}

// dedupe shortens "3/3/3/3" to "3".
func dedupe(xs []string) []string {
	for _, x := range xs {
		if x != xs[0] {
			return xs
		}
	}
	return xs[:1]
}

// tally sets an outcome's verdict. On the paper's values: holds when more
// than half of the items agree. On measurements, each item is a test:
// holds when more than half of the items hold; does not hold when even
// with every inconclusive item holding there would be no majority;
// inconclusive otherwise.
func tally(o *Outcome) {
	o.Total, o.Support, o.Against, o.Flagged = len(o.Items), 0, 0, 0
	tested := false
	for _, it := range o.Items {
		if it.Supports {
			o.Support++
		}
		if it.Test != "" {
			tested = true
			if it.Test == report.TestDoesNotHold {
				o.Against++
			}
		}
		if len(it.Flags) > 0 {
			o.Flagged++
		}
	}
	switch {
	case o.Total == 0:
		o.Verdict = report.NotMeasurable
	case 2*o.Support > o.Total:
		o.Verdict = report.Holds
	case !tested || 2*(o.Total-o.Against) <= o.Total:
		o.Verdict = report.DoesNotHold
	default:
		o.Verdict = report.Inconclusive
	}
}

// sameMechanism reports whether two measured points ran on the same
// underlying broker mechanism: the first clause of the record's mechanism
// text (e.g. "core NATS subscription (...)" against "JetStream stream per
// case, memory storage"). Points without a mechanism count as the same.
func sameMechanism(a, b *point) (bool, string) {
	if a.mechanism == "" || b.mechanism == "" {
		return true, ""
	}
	ma, mb := mechanismBase(a.mechanism), mechanismBase(b.mechanism)
	return ma == mb, fmt.Sprintf("%q against %q", ma, mb)
}

func mechanismBase(m string) string {
	m = strings.SplitN(m, ";", 2)[0]
	if i := strings.Index(m, " ("); i > 0 {
		m = m[:i]
	}
	return strings.TrimSpace(m)
}
