package claims

import (
	"fmt"
	"math"
	"sort"

	"pslab/internal/report"
	"pslab/internal/scenario"
)

// The paper's conclusions that the first claims did not evaluate, each
// with the paper's sentence quoted.
var paperClaimDefs = []claimDef{
	{
		id:        "latency-rises-with-connections",
		statement: "Opening more connections raises latency (one-to-one)",
		source:    "§5.1.1: \"It also should be noted that opening more connections causes a substantial increase in latency for all one-to-one test scenarios.\"",
		rule:      fmt.Sprintf("consecutive N of each one-to-one curve (same suite, network and other factors), both networks; an item agrees when the mean latency at the larger N is more than %.0f %% above the one at the smaller N (measured: significantly above, Welch's t on log latency); holds when more than half agree", 100*Tolerance),
		needs:     "one-to-one cases at two or more N (gaddah-kunz-set1 01-16)",
		eval:      claimOf(consecutive(bothNetworks, scenario.OneToOne), ratioOf(report.LatencyMs, "smaller N", "larger N", ruleAbove)),
	},
	{
		id:        "large-messages-raise-latency-few-to-many",
		statement: "5 KB messages raise latency in the few-to-many model",
		source:    "§5.1.2: wireline \"With a large message size of 5Kbytes, the latency increased by a factor of 1.2 to 10.\"; wireless \"the message latency increased by a factor of 1.2 to 11.6\"",
		rule:      fmt.Sprintf("few-to-many pairs 100 B ↔ 5120 B, both networks; an item agrees when the 5120 B mean latency is more than %.0f %% above the 100 B one (measured: significantly above); holds when more than half agree. The paper's factors are in the items' ratios", 100*Tolerance),
		needs:     "few-to-many 100 B / 5120 B twins (gaddah-kunz-set1 17-24)",
		eval:      pairClaim(bothNetworks, modelSize(scenario.FewToMany, smallBody), withSize(largeBody), report.LatencyMs, "100 B", "5120 B", ruleAbove),
	},
	{
		id:        "large-messages-raise-latency-many-to-few",
		statement: "5 KB messages raise latency in the many-to-few model",
		source:    "§5.1.3: \"We note that 5Kbytes of message length increased the latency by a factor of 1.1 to 39.5 in the scenarios of fixed wireline network. Similarly in the wireless network scenarios, the message size of 5Kbytes relatively increased the latency by a factor of 1.1 to 2.2.\"",
		rule:      fmt.Sprintf("many-to-few pairs 100 B ↔ 5120 B, both networks; an item agrees when the 5120 B mean latency is more than %.0f %% above the 100 B one (measured: significantly above); holds when more than half agree", 100*Tolerance),
		needs:     "many-to-few 100 B / 5120 B twins (gaddah-kunz-set1 25-32)",
		eval:      pairClaim(bothNetworks, modelSize(scenario.ManyToFew, smallBody), withSize(largeBody), report.LatencyMs, "100 B", "5120 B", ruleAbove),
	},
	{
		id:        "many-to-few-latency-higher",
		statement: "Many-to-few has much higher latency than few-to-many",
		source:    "§5.1.3: \"Compared to the scenarios of the few-to-many model, we observed a much more pronounced increase in latency for both subscription types.\"",
		rule:      fmt.Sprintf("each few-to-many case P/S/T ↔ the many-to-few case S/P/T (publishers and subscribers swapped, other factors equal), both networks; an item agrees when the many-to-few mean latency is more than %.0f %% above (measured: significantly above); holds when more than half agree", 100*Tolerance),
		needs:     "few-to-many and many-to-few twins (gaddah-kunz-set1 17-24 and 25-32)",
		eval: pairClaim(bothNetworks, func(f scenario.Factors) bool { return f.Model == scenario.FewToMany }, swapRoles,
			report.LatencyMs, "few-to-many", "many-to-few", ruleAbove),
	},
	{
		id:        "durable-publishers-ahead-wireless",
		statement: "Over the wireless link durable publishers outpace their subscribers by at least 1.7 (one-to-one, 100 B)",
		source:    "§5.1.1 (Figure 8b): \"the throughput results of publishers exceeded the corresponded durable subscriptions by at least a factor of 1.7\"",
		rule:      "one-to-one durable+persistent 100 B cases with N > 1 on wifi-paper; an item agrees when pub/sub ≥ 1.7 (measured: per record log(pub/sub) significantly above ln 1.7); holds when more than half agree",
		needs:     "one-to-one durable 100 B cases with N > 1 on wifi-paper (gaddah-kunz-set1 05, 09, 13)",
		eval:      oneToOneClaim(report.Wireless, func(f scenario.Factors) bool { return isDP(f) && f.Size == smallBody }, true, "durable", ruleAtLeast(1.7)),
	},
	{
		id:        "durable-arrivals-late",
		statement: "Durable subscribers receive a larger share of messages after the window than non-durable ones (one-to-one, wireline)",
		source:    "§5.1.1: durable \"more than 50% of the produced messages were received by subscribers after the measurement time expiration\"; non-durable \"almost all of the produced messages were received by all consumers within the measurement time window\"",
		rule:      "one-to-one durable+persistent ↔ non-durable+non-persistent twins with N > 1 on the wireline; value = durable late share − non-durable late share, where the late share is late/received of each record (the paper, which prints no late counts, infers it as 1 − sub/pub: its values use that); an item agrees when the value is above 0 (measured: Welch's t on the shares, significantly above 0); holds when more than half agree",
		needs:     "one-to-one durable/non-durable twins with N > 1 on the wireline (gaddah-kunz-set1 05-16)",
		eval: claimOf(twins(wirelineOnly, func(f scenario.Factors) bool {
			return isDP(f) && f.Model == scenario.OneToOne && f.Publishers > 1
		}, toNDNP), lateShareGap),
	},
	{
		id:        "many-to-few-slight-gain-wireline",
		statement: "In many-to-few, more clients give a slight gain in subscriber throughput on the wireline (at least no loss)",
		source:    "§5.1.3 (Figure 11a): \"It can be noted that there was a slight gain in the throughput as the number of publishers increased by a factor of 2.\"",
		rule:      fmt.Sprintf("consecutive client counts of each many-to-few family on the wireline (50/1/1 → 100/10/10); an item agrees when the larger case's sub throughput is at least %.0f %% of the smaller's (measured: non-inferiority, log ratio significantly above ln %.1f); holds when more than half agree", 100*(1-Tolerance), 1-Tolerance),
		needs:     "many-to-few cases at two client counts on the wireline (gaddah-kunz-set1 25-32)",
		eval:      claimOf(consecutive(wirelineOnly, scenario.ManyToFew), ratioOf(report.SubTput, "fewer clients", "more clients", ruleNoLoss)),
	},
	{
		id:        "many-to-few-much-gain-wireless",
		statement: "In many-to-few over the wireless link, more clients give much more subscriber throughput (at least double)",
		source:    "§5.1.3 (Figure 11b): \"We can see that there was much gain in the throughput as the number of subscribers, topics, and publishers increased by a factor of 10, 10, and 2 respectively.\"",
		rule:      "consecutive client counts of each many-to-few family on wifi-paper; an item agrees when the larger case's sub throughput is at least twice the smaller's (measured: log ratio significantly above ln 2); holds when more than half agree",
		needs:     "many-to-few cases at two client counts on wifi-paper (gaddah-kunz-set1 25-32)",
		eval:      claimOf(consecutive(wirelessOnly, scenario.ManyToFew), ratioOf(report.SubTput, "fewer clients", "more clients", ruleAtLeast(2))),
	},
	{
		id:        "wireless-nondurable-no-knee",
		statement: "Over the wireless link the non-durable one-to-one curve has no knee up to 400×2 connections",
		source:    "§5.1.1 (Figure 8b): \"Interestingly, we have not seen a knee point in the scaling curve shown in Figure 8(b) for non-durable subscription as the number of connections tops (400×2).\"",
		rule:      fmt.Sprintf("each one-to-one non-durable+non-persistent curve (≥ 3 N) on wifi-paper; value = sub throughput at the largest N / the highest at a smaller N; an item agrees when it is at least %.0f %% (measured: non-inferiority, log ratio significantly above ln %.1f); holds when more than half agree", 100*(1-Tolerance), 1-Tolerance),
		needs:     "one-to-one non-durable cases at three or more N on wifi-paper (gaddah-kunz-set1 03, 07, 11, 15 and 04, 08, 12, 16)",
		eval:      noKneeClaim,
	},
}

func init() { claimDefs = append(claimDefs, paperClaimDefs...) }

func modelSize(m scenario.Model, size int) func(scenario.Factors) bool {
	return func(f scenario.Factors) bool { return f.Model == m && f.Size == size }
}

// swapRoles turns a few-to-many case into its many-to-few mirror.
func swapRoles(f scenario.Factors) scenario.Factors {
	f.Model, f.Publishers, f.Subscribers = scenario.ManyToFew, f.Subscribers, f.Publishers
	return f
}

// lateOf is a point's late share: measured, the mean of late/received;
// on the paper's values, 1 − sub/pub (how the paper infers it).
func lateOf(p *point) float64 {
	if p.reps == nil {
		return 1 - report.Ratio(p.sub, p.pub)
	}
	if len(p.reps.Late) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range p.reps.Late {
		s += x
	}
	return s / float64(len(p.reps.Late))
}

// curvesOf groups the points of a connection model on a network into
// families (same suite and factors except the client counts), each
// ordered by publishers, then subscribers.
func curvesOf(ps *points, network string, m scenario.Model, sel func(scenario.Factors) bool) [][]*point {
	type fam struct {
		suite string
		f     scenario.Factors
	}
	idx := map[fam]int{}
	var out [][]*point
	for _, p := range ps.all {
		if p.network != network || p.f.Model != m || (sel != nil && !sel(p.f)) {
			continue
		}
		k := p.f
		k.Publishers, k.Subscribers, k.Topics = 0, 0, 0
		i, ok := idx[fam{p.suite, k}]
		if !ok {
			i = len(out)
			idx[fam{p.suite, k}] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], p)
	}
	for _, c := range out {
		sort.SliceStable(c, func(i, j int) bool {
			if c[i].f.Publishers != c[j].f.Publishers {
				return c[i].f.Publishers < c[j].f.Publishers
			}
			return c[i].f.Subscribers < c[j].f.Subscribers
		})
	}
	return out
}

// noKneeClaim compares each wireless non-durable one-to-one curve's last
// value with its best earlier one.
func noKneeClaim(ps *points) Outcome {
	var o Outcome
	ru := ruleNoLoss
	for _, c := range curvesOf(ps, report.Wireless, scenario.OneToOne, isNDNP) {
		label := fmt.Sprintf("%s %d B %s", c[0].suite, c[0].f.Size, report.Wireless)
		if len(c) < 3 {
			if len(c) == 2 { // a single case is no curve: not worth a note
				o.Skipped = append(o.Skipped, fmt.Sprintf("%s: %d values of N (need 3)", label, len(c)))
			}
			continue
		}
		last, best := c[len(c)-1], peak(c[:len(c)-1])
		if best == nil || math.IsNaN(report.Ratio(last.sub, best.sub)) {
			o.Skipped = append(o.Skipped, label+": no measured sub throughput")
			continue
		}
		r := report.Ratio(last.sub, best.sub)
		it := Item{Key: label, Label: label, Value: r, Supports: ru.paper(r), Flags: pairFlags(c...),
			Text: fmt.Sprintf("N=%d: %s / best earlier N=%d: %s = %s", last.f.Publishers, report.FormatNum(last.sub),
				best.f.Publishers, report.FormatNum(best.sub), report.FormatRatio(r))}
		testItem(&it, ru.h, 0, false, term{best, report.SubTput, -1}, term{last, report.SubTput, 1})
		o.Items = append(o.Items, it)
	}
	return o
}
