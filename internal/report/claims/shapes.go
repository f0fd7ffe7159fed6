package claims

// The evaluations several claim definitions (claimdefs.go) share: a
// throughput against a selected share of another, the knee of a curve,
// and whether subscribers keep up with publishers.

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"pslab/internal/report"
	"pslab/internal/scenario"
)

// kneeClaim finds, per family of one-to-one cases on the wireline (same
// suite, size, ack, selector, body), the N of peak sub throughput of the
// durable and of the non-durable curve.
func kneeClaim(ps *points) Outcome {
	type family struct {
		suite string
		f     scenario.Factors // counts and subscription/delivery zeroed
	}
	curves := map[family]map[bool][]*point{} // durable? -> points
	fromQuick := map[family]bool{}
	var order []family
	var o Outcome
	for _, p := range ps.all {
		if p.network != report.Wireline || p.f.Model != scenario.OneToOne || !(isDP(p.f) || isNDNP(p.f)) {
			continue
		}
		k := p.f
		k.Publishers, k.Subscribers, k.Topics, k.Subscription, k.Delivery = 0, 0, 0, "", ""
		fam := family{p.suite, k}
		if curves[fam] == nil {
			curves[fam] = map[bool][]*point{}
			order = append(order, fam)
		}
		curves[fam][isDP(p.f)] = append(curves[fam][isDP(p.f)], p)
		fromQuick[fam] = fromQuick[fam] || p.countsFromQuick
	}
	for _, fam := range order {
		label := fmt.Sprintf("%s %d B", fam.suite, fam.f.Size)
		d, nd := curves[fam][true], curves[fam][false]
		if len(d) < 3 || len(nd) < 3 {
			if len(d)+len(nd) >= 3 {
				o.Skipped = append(o.Skipped, fmt.Sprintf("%s: %d durable and %d non-durable values of N (need 3 each)", label, len(d), len(nd)))
			}
			continue
		}
		if fromQuick[fam] {
			// The published values belong to the full counts; --quick
			// records carry reduced ones, so N would be wrong.
			o.Skipped = append(o.Skipped, label+": the published values' connection counts are unknown (only --quick records, whose counts may be reduced)")
			continue
		}
		pd, pnd := peak(d), peak(nd)
		if pd == nil || pnd == nil {
			o.Skipped = append(o.Skipped, label+": no measured sub throughput")
			continue
		}
		it := Item{Key: label, Label: label + " wireline", Value: float64(pd.f.Publishers),
			Supports: pd.f.Publishers < pnd.f.Publishers, Flags: pairFlags(append(d, nd...)...),
			Text: fmt.Sprintf("durable peaks at N=%d (%s sub msgs/s), non-durable at N=%d (%s); N tried %s",
				pd.f.Publishers, report.FormatNum(pd.sub), pnd.f.Publishers, report.FormatNum(pnd.sub), countsOf(d, nd))}
		if pd.reps != nil {
			testKnee(&it, pd, pnd, atN(d, pnd.f.Publishers), atN(nd, pd.f.Publishers))
		}
		o.Items = append(o.Items, it)
	}
	return o
}

// testKnee tests the order of the two peaks: each curve's peak must be
// significantly above the same curve at the other curve's peak N
// (intersection-union test: p is the larger of the two one-sided
// p-values). The item holds when the durable peak comes first and both
// are significant, does not hold when the non-durable peak comes first (or
// at the same N) and both are significant, and is inconclusive otherwise.
func testKnee(it *Item, pd, pnd, dAtND, ndAtD *point) {
	if pd.f.Publishers == pnd.f.Publishers || dAtND == nil || ndAtD == nil {
		setTest(it, report.TestInconclusive, math.NaN(), "both curves peak at the same N: the order of the peaks is not testable")
		return
	}
	c1, ev, err1 := contrastOf(false, term{dAtND, report.SubTput, -1}, term{pd, report.SubTput, 1})
	c2, _, err2 := contrastOf(false, term{ndAtD, report.SubTput, -1}, term{pnd, report.SubTput, 1})
	if err := errors.Join(err1, err2); err != nil {
		setTest(it, report.TestInconclusive, math.NaN(), err.Error())
		return
	}
	p := math.Max(c1.PAbove(0), c2.PAbove(0))
	switch {
	case p >= report.Alpha:
		setTest(it, report.TestInconclusive, p, ev)
	case pd.f.Publishers < pnd.f.Publishers:
		setTest(it, report.TestHolds, p, ev)
	default:
		setTest(it, report.TestDoesNotHold, p, ev)
	}
}

// atN is the point of a curve at N publishers.
func atN(c []*point, n int) *point {
	for _, p := range c {
		if p.f.Publishers == n {
			return p
		}
	}
	return nil
}

func peak(c []*point) *point {
	var best *point
	for _, p := range c {
		if !math.IsNaN(p.sub) && (best == nil || p.sub > best.sub) {
			best = p
		}
	}
	return best
}

func countsOf(curves ...[]*point) string {
	seen := map[int]bool{}
	var ns []int
	for _, c := range curves {
		for _, p := range c {
			if !seen[p.f.Publishers] {
				seen[p.f.Publishers] = true
				ns = append(ns, p.f.Publishers)
			}
		}
	}
	sort.Ints(ns)
	return fmt.Sprint(ns)
}

// oneToOneClaim evaluates one item per one-to-one case with N > 1 on a
// network: the ratio sub/pub (pub/sub when pubOverSub) of its throughputs,
// tested on measurements per record (paired).
func oneToOneClaim(network string, sel func(scenario.Factors) bool, pubOverSub bool, kind string, ru rule) func(*points) Outcome {
	return func(ps *points) Outcome {
		var o Outcome
		for _, p := range ps.all {
			if p.network != network || p.f.Model != scenario.OneToOne || p.f.Publishers < 2 || !sel(p.f) {
				continue
			}
			label := fmt.Sprintf("%s %s %s", p.suite, p.caseID, p.network)
			num, den, q, what := p.sub, p.pub, subPerPub, "sub/pub"
			if pubOverSub {
				num, den, q, what = p.pub, p.sub, pubPerSub, "pub/sub"
			}
			r := report.Ratio(num, den)
			if math.IsNaN(r) {
				o.Skipped = append(o.Skipped, fmt.Sprintf("%s: no %s ratio (a missing or zero throughput)", label, what))
				continue
			}
			it := Item{Key: label, Label: label, Value: r, Supports: ru.paper(r), Flags: pairFlags(p),
				Text: fmt.Sprintf("%s %d/%d/%d: sub %s, pub %s, %s = %s", kind, p.f.Publishers, p.f.Subscribers, p.f.Topics,
					report.FormatNum(p.sub), report.FormatNum(p.pub), what, report.FormatRatio(r))}
			testItem(&it, ru.h, 0, false, term{p, q, 1})
			o.Items = append(o.Items, it)
		}
		return o
	}
}
