package claims

import (
	"fmt"
	"math"

	"pslab/internal/report"
	"pslab/internal/scenario"
)

// Most claims compare pairs of points: a claim is a finder, which forms
// the pairs from one source's points, and a judge, which turns each pair
// into an item. claimOf puts the two together.

// pair is two points that differ in what a claim is about: two cases of
// one suite and network whose factors differ in one factor, or one case
// on two networks, or two consecutive client counts of a curve.
type pair struct{ a, b *point }

// finder forms a claim's pairs from a source's points; skipped names the
// pairs it left out, with the reason.
type finder func(ps *points) (prs []pair, skipped []string)

// judge turns pairs into items of o (ps: the source's points, for judges
// that need more than the pair).
type judge func(o *Outcome, ps *points, prs []pair)

// claimOf evaluates a claim over the pairs find forms, each judged by j.
func claimOf(find finder, j judge) func(*points) Outcome {
	return func(ps *points) Outcome {
		var o Outcome
		prs, skipped := find(ps)
		o.Skipped = append(o.Skipped, skipped...)
		j(&o, ps, prs)
		return o
	}
}

// twins pairs, on each network, every point a with isA(a.f) with its
// counterpart b (factors other(a.f)) in the same suite.
func twins(networks []string, isA func(scenario.Factors) bool, other func(scenario.Factors) scenario.Factors) finder {
	return func(ps *points) ([]pair, []string) {
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
		return out, nil
	}
}

// acrossNetworks pairs each point on the wireline that matches sel with
// its twin on the wireless link.
func acrossNetworks(sel func(scenario.Factors) bool) finder {
	return func(ps *points) ([]pair, []string) {
		var out []pair
		for _, a := range ps.all {
			if a.network != report.Wireline || !sel(a.f) {
				continue
			}
			if b := ps.find(a.suite, report.Wireless, a.f); b != nil {
				out = append(out, pair{a, b})
			}
		}
		return out, nil
	}
}

// consecutive pairs consecutive client counts of each family of a
// connection model (same suite and factors but the counts).
func consecutive(networks []string, m scenario.Model) finder {
	return consecutiveOf(networks, m, nil)
}

// consecutiveOf is consecutive over the families whose factors sel
// accepts (nil: all).
func consecutiveOf(networks []string, m scenario.Model, sel func(scenario.Factors) bool) finder {
	return func(ps *points) ([]pair, []string) {
		var out []pair
		for _, n := range networks {
			for _, c := range curvesOf(ps, n, m, sel) {
				for i := 1; i < len(c); i++ {
					out = append(out, pair{c[i-1], c[i]})
				}
			}
		}
		return out, nil
	}
}

// onSameMechanism keeps the pairs whose two records ran on the same broker
// mechanism: a pair that measures a mechanism change is left out with the
// reason.
func onSameMechanism(find finder, what string) finder {
	return func(ps *points) ([]pair, []string) {
		prs, skipped := find(ps)
		var same []pair
		for _, p := range prs {
			if ok, why := sameMechanism(p.a, p.b); !ok {
				skipped = append(skipped, fmt.Sprintf("%s: left out, the two %s ran on different mechanisms (%s)", pairLabel(p), what, why))
				continue
			}
			same = append(same, p)
		}
		return same, skipped
	}
}

// ratioOf judges the ratio b/a of metric m by the rule (on measurements, a
// test on the log values of the repetitions). Pairs whose ratio cannot be
// formed are listed as skipped.
func ratioOf(m, nameA, nameB string, ru rule) judge {
	return func(o *Outcome, _ *points, prs []pair) {
		for _, p := range prs {
			va, vb := metricOf(p.a, m), metricOf(p.b, m)
			r := report.Ratio(vb, va)
			label := pairLabel(p)
			if math.IsNaN(r) {
				o.Skipped = append(o.Skipped, fmt.Sprintf("%s: %s %s %s, %s %s (no ratio)", label, nameA, metricWords(m), report.FormatNum(va), nameB, report.FormatNum(vb)))
				continue
			}
			it := Item{
				Key: label, Label: label, Value: r, Supports: ru.paper(r), Flags: pairFlags(p.a, p.b),
				Text: fmt.Sprintf("%s %s / %s %s = %s", nameB, report.FormatNum(vb), nameA, report.FormatNum(va), report.FormatRatio(r)),
			}
			testItem(&it, ru.h, 0, false, term{p.a, m, -1}, term{p.b, m, 1})
			o.Items = append(o.Items, it)
		}
	}
}

// wirelessOverWireline judges wireline pairs by their ratio b/a of metric
// m on the wireless link against the same ratio on the wireline (on
// measurements, the four-sample contrast of log means).
func wirelessOverWireline(m, nameA, nameB string, ru rule) judge {
	return func(o *Outcome, ps *points, prs []pair) {
		for _, p := range prs {
			wa, wb := ps.find(p.a.suite, report.Wireless, p.a.f), ps.find(p.b.suite, report.Wireless, p.b.f)
			label := fmt.Sprintf("%s %s↔%s", p.a.suite, p.a.caseID, p.b.caseID)
			if wa == nil || wb == nil {
				o.Skipped = append(o.Skipped, label+": not on both networks")
				continue
			}
			rl := report.Ratio(metricOf(p.b, m), metricOf(p.a, m))
			ri := report.Ratio(metricOf(wb, m), metricOf(wa, m))
			if math.IsNaN(rl) || math.IsNaN(ri) {
				o.Skipped = append(o.Skipped, label+": a ratio cannot be formed (missing or zero values)")
				continue
			}
			it := Item{
				Key: label, Label: label, Value: ri / rl, Supports: ru.paper(ri / rl), Flags: pairFlags(p.a, p.b, wa, wb),
				Text: fmt.Sprintf("%s/%s %s: wireline %s, wireless %s", nameB, nameA, metricWords(m), report.FormatRatio(rl), report.FormatRatio(ri)),
			}
			testItem(&it, ru.h, 0, false, term{wb, m, 1}, term{wa, m, -1}, term{p.b, m, -1}, term{p.a, m, 1})
			o.Items = append(o.Items, it)
		}
	}
}

// selectedShare judges sub throughput with the selector (b) against the
// selected share of the sub throughput without it (a).
func selectedShare(ru rule) judge {
	return func(o *Outcome, _ *points, prs []pair) {
		for _, p := range prs {
			va, vb := p.a.sub, p.b.sub
			label := pairLabel(p)
			r := report.Ratio(vb, selectorShare*va)
			if math.IsNaN(r) {
				o.Skipped = append(o.Skipped, fmt.Sprintf("%s: sub msgs/s %s without, %s with selector (no ratio)", label, report.FormatNum(va), report.FormatNum(vb)))
				continue
			}
			it := Item{Key: label, Label: label, Value: r, Supports: ru.paper(r), Flags: pairFlags(p.a, p.b),
				Text: fmt.Sprintf("selector %s / (%.1f × no selector %s) = %s", report.FormatNum(vb), selectorShare, report.FormatNum(va), report.FormatRatio(r))}
			testItem(&it, ru.h, math.Log(selectorShare), false, term{p.a, report.SubTput, -1}, term{p.b, report.SubTput, 1})
			o.Items = append(o.Items, it)
		}
	}
}

// lateShareGap judges durable (a) against non-durable (b) twins by the
// difference of their late shares: above 0 when the durable subscribers
// receive more of their messages after the window (measured: Welch's t on
// the shares).
func lateShareGap(o *Outcome, _ *points, prs []pair) {
	for _, p := range prs {
		ld, lnd := lateOf(p.a), lateOf(p.b)
		label := pairLabel(p)
		if math.IsNaN(ld) || math.IsNaN(lnd) {
			o.Skipped = append(o.Skipped, label+": no late share (nothing received)")
			continue
		}
		it := Item{Key: label, Label: label, Value: ld - lnd, Supports: ld > lnd, Flags: pairFlags(p.a, p.b),
			Text: fmt.Sprintf("late share durable %.1f %%, non-durable %.1f %%", 100*ld, 100*lnd)}
		testItem(&it, report.Hypothesis{Kind: "above"}, 0, true, term{p.b, lateShare, -1}, term{p.a, lateShare, 1})
		o.Items = append(o.Items, it)
	}
}
