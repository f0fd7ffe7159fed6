package report

import (
	"fmt"
	"math"
	"strings"
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
	h     Hypothesis
}

// The common rules: "beats" (more than Tolerance above on the paper's
// numbers; significantly above 1 when measured), "cuts", "similar"
// (within ±Tolerance; TOST at that margin when measured).
var (
	ruleAbove   = rule{above, aboveRatio(1)}
	ruleBelow   = rule{below, belowRatio(1)}
	ruleSimilar = rule{similar, withinTolerance()}
)

// ruleAtLeast: the ratio is at least r ("an order of magnitude": 10).
func ruleAtLeast(r float64) rule {
	return rule{func(x float64) bool { return x >= r }, aboveRatio(r)}
}

// repValuesOf collects a group's per-repetition values.
func repValuesOf(g *Group) *repValues {
	rv := &repValues{}
	for _, r := range g.Records {
		res := r.Result
		if rv.mechanism == "" {
			rv.mechanism = r.Mechanism
		}
		rv.pub = append(rv.pub, res.PubTput)
		rv.sub = append(rv.sub, res.SubTput)
		if res.Latency.Count > 0 {
			rv.lat = append(rv.lat, res.Latency.MeanMs)
		}
		rv.subPub = append(rv.subPub, res.SubTput/res.PubTput)
		rv.pubSub = append(rv.pubSub, res.PubTput/res.SubTput)
		c := res.Counts
		if c.Received > 0 {
			rv.late = append(rv.late, float64(c.Late)/float64(c.Received))
		}
		rv.deliveries = append(rv.deliveries, c.ReceivedInWindow)
	}
	return rv
}

// sample is a point's per-repetition values of a quantity.
func (rv *repValues) sample(m string) []float64 {
	switch m {
	case PubTput:
		return rv.pub
	case SubTput:
		return rv.sub
	case LatencyMs:
		return rv.lat
	case subPerPub:
		return rv.subPub
	case pubPerSub:
		return rv.pubSub
	case lateShare:
		return rv.late
	}
	panic("report: unknown quantity " + m)
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
func testItem(it *Item, h Hypothesis, shift float64, raw bool, terms ...term) {
	if terms[0].p.reps == nil {
		return
	}
	c, ev, err := contrastOf(raw, terms...)
	if err != nil {
		it.setTest(TestInconclusive, math.NaN(), err.Error())
		return
	}
	h.Threshold += shift
	if h.Lo < h.Hi {
		h.Lo, h.Hi = h.Lo+shift, h.Hi+shift
	}
	v, p := Decide(c, h)
	it.setTest(v, p, ev)
}

// contrastOf builds the contrast of measured terms and says what it rests
// on: repetitions per side and the fewest deliveries in a record's window.
func contrastOf(raw bool, terms ...term) (Contrast, string, error) {
	var samples [][]float64
	var coef []float64
	var ns []string
	minDel := int64(-1)
	for _, t := range terms {
		xs := t.p.reps.sample(t.m)
		if !raw {
			var ok bool
			if xs, ok = logs(xs); !ok {
				return Contrast{}, "", fmt.Errorf("no test: a repetition of %s %s has %s ≤ 0", t.p.caseID, t.p.network, t.m)
			}
		}
		samples = append(samples, xs)
		coef = append(coef, t.coef)
		ns = append(ns, fmt.Sprint(len(xs)))
		for _, d := range t.p.reps.deliveries {
			if minDel < 0 || d < minDel {
				minDel = d
			}
		}
	}
	ev := fmt.Sprintf("n %s, ≥%d deliveries/record", strings.Join(dedupe(ns), "/"), max(minDel, 0))
	c, err := NewContrast(samples, coef)
	if err != nil {
		return c, "", fmt.Errorf("no test (%v); %s", err, ev)
	}
	return c, ev, nil
}

func (it *Item) setTest(v TestVerdict, p float64, evidence string) {
	it.Test, it.P, it.Evidence = v, p, evidence
	it.Supports = v == TestHolds
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
func (o *Outcome) tally() {
	o.Total, o.Support, o.Against, o.Flagged = len(o.Items), 0, 0, 0
	tested := false
	for _, it := range o.Items {
		if it.Supports {
			o.Support++
		}
		if it.Test != "" {
			tested = true
			if it.Test == TestDoesNotHold {
				o.Against++
			}
		}
		if len(it.Flags) > 0 {
			o.Flagged++
		}
	}
	switch {
	case o.Total == 0:
		o.Verdict = NotMeasurable
	case 2*o.Support > o.Total:
		o.Verdict = Holds
	case !tested || 2*(o.Total-o.Against) <= o.Total:
		o.Verdict = DoesNotHold
	default:
		o.Verdict = Inconclusive
	}
}

// sameMechanism reports whether two measured points ran on the same
// underlying broker mechanism: the first clause of the record's mechanism
// text (e.g. "core NATS subscription (...)" against "JetStream stream per
// case, memory storage"). Points without a mechanism count as the same.
func sameMechanism(a, b *point) (bool, string) {
	if a.reps == nil || b.reps == nil || a.reps.mechanism == "" || b.reps.mechanism == "" {
		return true, ""
	}
	ma, mb := mechanismBase(a.reps.mechanism), mechanismBase(b.reps.mechanism)
	return ma == mb, fmt.Sprintf("%q against %q", ma, mb)
}

func mechanismBase(m string) string {
	m = strings.SplitN(m, ";", 2)[0]
	if i := strings.Index(m, " ("); i > 0 {
		m = m[:i]
	}
	return strings.TrimSpace(m)
}

// itemMark is the table mark of an item's verdict.
func itemMark(it Item) string {
	switch {
	case it.Test == TestInconclusive:
		return "?"
	case it.Supports:
		return "✓"
	}
	return "✗"
}

// caveatTexts are the texts of the brokers' caveats (Dataset.Caveats)
// that concern some record, each once, in the caveats' order.
func caveatTexts(d *Dataset) []string {
	var out []string
	for _, c := range d.Caveats {
	groups:
		for _, g := range d.Groups {
			for _, r := range g.Records {
				if c.Applies(g.Broker, r.Mechanism) {
					out = append(out, c.Text)
					break groups
				}
			}
		}
	}
	return out
}
