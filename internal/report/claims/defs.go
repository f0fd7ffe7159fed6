package claims

import (
	"fmt"

	"pslab/internal/report"
	"pslab/internal/scenario"
)

// claimDef is one claim and its evaluation over one source's points.
type claimDef struct {
	id, statement, source, rule, needs string
	eval                               func(ps *points) Outcome
}

// Factor predicates and transformations used to pair cases.
func isDP(f scenario.Factors) bool {
	return f.Subscription == scenario.Durable && f.Delivery == scenario.Persistent
}

func isNDNP(f scenario.Factors) bool {
	return f.Subscription == scenario.NonDurable && f.Delivery == scenario.NonPersistent
}

func toNDNP(f scenario.Factors) scenario.Factors {
	f.Subscription, f.Delivery = scenario.NonDurable, scenario.NonPersistent
	return f
}

func withSize(n int) func(scenario.Factors) scenario.Factors {
	return func(f scenario.Factors) scenario.Factors { f.Size = n; return f }
}

func sizeIs(n int) func(scenario.Factors) bool {
	return func(f scenario.Factors) bool { return f.Size == n }
}

func selectorOn(f scenario.Factors) scenario.Factors { f.Selector = true; return f }

func bodyObject(f scenario.Factors) scenario.Factors { f.Body = scenario.BodyObject; return f }

func ackDupsOK(f scenario.Factors) scenario.Factors { f.Ack = scenario.AckDupsOK; return f }

func persistent(f scenario.Factors) scenario.Factors { f.Delivery = scenario.Persistent; return f }

// selectorShare is the fraction of messages one selector subscriber
// selects (20 of 100 values).
const selectorShare = float64(scenario.SelectorSpan) / float64(scenario.SelectorValues)

// Sizes of experiment set 1.
const (
	smallBody = 100
	largeBody = 5120
)

var (
	bothNetworks = []string{report.Wireline, report.Wireless}
	wirelineOnly = []string{report.Wireline}
	wirelessOnly = []string{report.Wireless}
)

// pairClaim evaluates a claim on the ratio b/a of metric m over twins.
func pairClaim(nets []string, isA func(scenario.Factors) bool, other func(scenario.Factors) scenario.Factors,
	m, nameA, nameB string, ru rule) func(*points) Outcome {
	return claimOf(twins(nets, isA, other), ratioOf(m, nameA, nameB, ru))
}

var claimDefs = []claimDef{
	{
		id:        "nondurable-beats-durable",
		statement: "Non-durable subscriptions outperform durable ones (subscriber throughput, wireline)",
		source:    "§5.1.1-5.1.3 (Figures 8-11), §7: \"nondurable subscriptions outperformed durable subscriptions in most situations\"",
		rule:      fmt.Sprintf("pairs durable+persistent ↔ non-durable+non-persistent, all other factors equal, on the wireline; an item agrees when non-durable sub throughput is more than %.0f %% above durable; holds when more than half agree", 100*Tolerance),
		needs:     "durable+persistent and non-durable+non-persistent twins on the wireline (gaddah-kunz-set1)",
		eval:      pairClaim(wirelineOnly, isDP, toNDNP, report.SubTput, "durable", "non-durable", ruleAbove),
	},
	{
		id:        "durability-gap-shrinks-wireless",
		statement: "The non-durable/durable throughput gap is much smaller over the wireless link",
		source:    "§5.1.1 (Figure 8b): \"This difference is much less than what we saw in the wireline scenarios\"; §6",
		rule:      fmt.Sprintf("for each durable+persistent ↔ non-durable+non-persistent pair measured on both networks, the ratio non-durable/durable of sub throughput; an item agrees when the wireless ratio is more than %.0f %% below the wireline ratio; holds when more than half agree", 100*Tolerance),
		needs:     "durable/non-durable twins on both wireline and wifi-paper (gaddah-kunz-set1)",
		eval:      claimOf(twins(wirelineOnly, isDP, toNDNP), wirelessOverWireline(report.SubTput, "durable", "non-durable", ruleBelow)),
	},
	{
		id:        "durability-similar-wireless-large",
		statement: "With 5 KB messages over the wireless link both subscription types achieve about the same throughput",
		source:    "§6: \"the wireless scenarios with large messages where both subscription types achieved approximately similar throughput results\"; §5.1.1 (Figure 9b)",
		rule:      fmt.Sprintf("durable+persistent ↔ non-durable+non-persistent pairs with 5120 B bodies on wifi-paper; an item agrees when the sub throughputs are within ±%.0f %%; holds when more than half agree", 100*Tolerance),
		needs:     "5120 B durable/non-durable twins on wifi-paper (gaddah-kunz-set1 even cases)",
		eval: pairClaim(wirelessOnly, func(f scenario.Factors) bool { return isDP(f) && f.Size == largeBody },
			toNDNP, report.SubTput, "durable", "non-durable", ruleSimilar),
	},
	{
		id:        "large-messages-cut-throughput-wireline",
		statement: "5 KB messages cut subscriber throughput compared with 100 B ones (wireline)",
		source:    "§5.1.1 (Figure 9 vs 8), §5.1.2, §7: \"increasing message sizes impact the system performance\"",
		rule:      fmt.Sprintf("pairs 100 B ↔ 5120 B, all other factors equal, on the wireline; an item agrees when the 5120 B sub throughput is more than %.0f %% below the 100 B one; holds when more than half agree", 100*Tolerance),
		needs:     "100 B / 5120 B twins on the wireline (gaddah-kunz-set1)",
		eval:      pairClaim(wirelineOnly, sizeIs(smallBody), withSize(largeBody), report.SubTput, "100 B", "5120 B", ruleBelow),
	},
	{
		id:        "large-messages-cut-throughput-wireless",
		statement: "5 KB messages cut subscriber throughput compared with 100 B ones (wireless)",
		source:    "§5.1.1 (Figure 9b vs 8b), §5.1.2 (Figure 10b): \"decreased by more than 50%\"",
		rule:      fmt.Sprintf("pairs 100 B ↔ 5120 B on wifi-paper; an item agrees when the 5120 B sub throughput is more than %.0f %% below the 100 B one; holds when more than half agree", 100*Tolerance),
		needs:     "100 B / 5120 B twins on wifi-paper (gaddah-kunz-set1)",
		eval:      pairClaim(wirelessOnly, sizeIs(smallBody), withSize(largeBody), report.SubTput, "100 B", "5120 B", ruleBelow),
	},
	{
		id:        "large-messages-hurt-more-wireless",
		statement: "The cut from 5 KB messages is larger over the wireless link than on the wireline",
		source:    "§5.1.1 (Figure 9b): \"we clearly see the impact of message size and network characterization\"; §5.1.2: wireline \"decreased by almost 50%\", wireless \"by more than 50%\"",
		rule:      fmt.Sprintf("for each 100 B ↔ 5120 B pair measured on both networks, the ratio 5120 B/100 B of sub throughput; an item agrees when the wireless ratio is more than %.0f %% below the wireline ratio; holds when more than half agree", 100*Tolerance),
		needs:     "100 B / 5120 B twins on both networks (gaddah-kunz-set1)",
		eval: claimOf(twins(wirelineOnly, sizeIs(smallBody), withSize(largeBody)),
			wirelessOverWireline(report.SubTput, "100 B", "5120 B", ruleBelow)),
	},
	{
		id:        "durable-knee-earlier",
		statement: "In the one-to-one model durable subscriptions reach their knee at fewer connections than non-durable ones (wireline)",
		source:    "§5.1.1 (Figures 8a, 9a): durable knee at 50×2 (100 B) and after 1×2 (5 KB), non-durable at 200×2 and 50×2; §6",
		rule:      "per body size, the connection count N (N/N/N) with the highest sub throughput of each subscription type; an item agrees when the durable peak comes at a smaller N; holds when more than half of the sizes agree; each curve needs at least three values of N",
		needs:     "the one-to-one cases of gaddah-kunz-set1 (01-16) on the wireline, at least three N per curve",
		eval:      kneeClaim,
	},
	{
		id:        "nondurable-keeps-up",
		statement: "Non-durable subscribers keep up with their publishers (one-to-one, wireline)",
		source:    "§5.1.1 (Figure 8a): \"By comparing the throughput of non-durable subscriptions with their publishers, it is apparent that they achieved approximately similar results\"",
		rule:      fmt.Sprintf("one-to-one non-durable+non-persistent N/N/N cases with N > 1 on the wireline; an item agrees when sub/pub is within ±%.0f %% (measured: TOST on the per-record log(sub/pub)); holds when more than half agree", 100*Tolerance),
		needs:     "one-to-one non-durable cases with N > 1 (gaddah-kunz-set1 07, 08, 11, 12, 15, 16) on the wireline",
		eval:      oneToOneClaim(report.Wireline, isNDNP, false, "non-durable", ruleSimilar),
	},
	{
		id:        "durable-falls-behind",
		statement: "Durable subscribers fall behind their publishers (one-to-one, wireline)",
		source:    "§5.1.1 (Figure 8a): \"except for the test case 1, the throughput achieved by publishers is over double the subscriber throughput for durable subscriptions\"",
		rule:      fmt.Sprintf("one-to-one durable+persistent N/N/N cases with N > 1 on the wireline; an item agrees when sub/pub is more than %.0f %% below 1 (measured: significantly below 1, one-sample t on the per-record log(sub/pub)); holds when more than half agree", 100*Tolerance),
		needs:     "one-to-one durable cases with N > 1 (gaddah-kunz-set1 05, 06, 09, 10, 13, 14) on the wireline",
		eval:      oneToOneClaim(report.Wireline, isDP, false, "durable", ruleBelow),
	},
	{
		id:        "nondurable-lower-latency",
		statement: "Non-durable subscriptions have much lower latency than durable ones (wireline)",
		source:    "§5.1.1-5.1.3 (Table 1): \"non-durable subscription experienced much lower latency than durable subscription\"",
		rule:      fmt.Sprintf("durable+persistent ↔ non-durable+non-persistent pairs on the wireline; an item agrees when the non-durable mean latency is more than %.0f %% below the durable one; holds when more than half agree", 100*Tolerance),
		needs:     "durable/non-durable twins on the wireline (gaddah-kunz-set1)",
		eval:      pairClaim(wirelineOnly, isDP, toNDNP, report.LatencyMs, "durable", "non-durable", ruleBelow),
	},
	{
		id:        "wireless-raises-nondurable-latency",
		statement: "Over the wireless link the latency of non-durable subscriptions rises by an order of magnitude",
		source:    "§5.1.1: \"latency results of non-durable subscription in wireless scenarios were significantly increased\"; §5.1.3: \"increased by a large order of magnitude\"",
		rule:      "every non-durable case measured on both networks; an item agrees when wireless/wireline mean latency is at least 10; holds when more than half agree",
		needs:     "non-durable cases on both networks (either set)",
		eval: claimOf(acrossNetworks(func(f scenario.Factors) bool { return f.Subscription == scenario.NonDurable }),
			ratioOf(report.LatencyMs, "wireline", "wireless", ruleAtLeast(10))),
	},
	{
		id:        "wireless-cuts-throughput",
		statement: "The wireless link cuts subscriber throughput",
		source:    "§5.1.1 (Figure 8b): \"the overall throughput has decreased in both subscription types\"; §5.1.2, §5.2 (Figure 12b)",
		rule:      fmt.Sprintf("every case measured on both networks; an item agrees when the wireless sub throughput is more than %.0f %% below the wireline one; holds when more than half agree", 100*Tolerance),
		needs:     "cases on both wireline and wifi-paper (either set)",
		eval:      claimOf(acrossNetworks(func(scenario.Factors) bool { return true }), ratioOf(report.SubTput, "wireline", "wireless", ruleBelow)),
	},
	{
		id:        "selectors-cut-sub-throughput",
		statement: "Message selectors cut subscriber throughput",
		source:    "§5.2 (Figure 13): \"using message selector has degraded the throughput of the nondurable subscription running on both network environments\"; §7",
		rule:      fmt.Sprintf("pairs selector off ↔ on, all other factors equal, on both networks; an item agrees when the sub throughput with the selector is more than %.0f %% below the one without; holds when more than half agree. The subscriber selects a fifth of the messages, so this mostly measures the filtering itself: see the next claim", 100*Tolerance),
		needs:     "selector off/on twins (gaddah-kunz-set2 01-08 vs 09-16)",
		eval:      pairClaim(bothNetworks, func(f scenario.Factors) bool { return !f.Selector }, selectorOn, report.SubTput, "no selector", "selector", ruleBelow),
	},
	{
		id:        "selector-overhead-nondurable",
		statement: "For non-durable subscribers, selector matching costs more than the four fifths of the messages it filters out",
		source:    "§6: selectors \"may influence the performance of nondurable subscriptions as selectors add an additional load\"; §4.2.5",
		rule:      fmt.Sprintf("non-durable pairs selector off ↔ on, both networks; value = sub throughput with selector / (%.1f × sub throughput without), i.e. the matched deliveries against the fifth of the unfiltered flow; an item agrees when the value is more than %.0f %% below 1; holds when more than half agree", selectorShare, 100*Tolerance),
		needs:     "non-durable selector off/on twins (gaddah-kunz-set2 05-08 vs 13-16)",
		eval: claimOf(twins(bothNetworks, func(f scenario.Factors) bool {
			return !f.Selector && f.Subscription == scenario.NonDurable
		}, selectorOn), selectedShare(ruleBelow)),
	},
	{
		id:        "selectors-help-durable-wireline",
		statement: "Selectors may benefit durable subscriptions: the broker stores only matching messages (wireline)",
		source:    "§6: \"Selectors may benefit durable subscriptions since the broker stores only the messages that match the selectors\"",
		rule:      fmt.Sprintf("durable pairs selector off ↔ on, wireline; value as in selector-overhead-nondurable; an item agrees when the value is more than %.0f %% above 1; holds when more than half agree", 100*Tolerance),
		needs:     "durable selector off/on twins on the wireline (gaddah-kunz-set2 01-04 vs 09-12)",
		eval: claimOf(twins(wirelineOnly, func(f scenario.Factors) bool {
			return !f.Selector && f.Subscription == scenario.Durable
		}, selectorOn), selectedShare(ruleAbove)),
	},
	{
		id:        "object-slower-wireline",
		statement: "ObjectMessage is slower than BytesMessage on the wireline (non-durable subscriber)",
		source:    "§5.2 (Figure 14): \"ObjectMessage has achieved lower throughput than BytesMessage in the wireline environment\"; §7",
		rule:      fmt.Sprintf("non-durable pairs bytes ↔ object body, all other factors equal, on the wireline; an item agrees when the object sub throughput is more than %.0f %% below the bytes one; holds when more than half agree (the paper's value: case 17 as corrected, 467.31)", 100*Tolerance),
		needs:     "non-durable bytes/object twins on the wireline (gaddah-kunz-set2 06 and 17)",
		eval: pairClaim(wirelineOnly, func(f scenario.Factors) bool {
			return f.Body == scenario.BodyBytes && f.Subscription == scenario.NonDurable
		}, bodyObject, report.SubTput, "bytes", "object", ruleBelow),
	},
	{
		id:        "object-similar-wireless",
		statement: "…but not over the wireless link, where the link is the bottleneck",
		source:    "§5.2 (Figure 14): \"both message body types approximately achieved similar throughput results in the wireless environment\"",
		rule:      fmt.Sprintf("the same pairs on wifi-paper; an item agrees when the sub throughputs are within ±%.0f %%; holds when more than half agree", 100*Tolerance),
		needs:     "non-durable bytes/object twins on wifi-paper (gaddah-kunz-set2 06 and 17)",
		eval: pairClaim(wirelessOnly, func(f scenario.Factors) bool {
			return f.Body == scenario.BodyBytes && f.Subscription == scenario.NonDurable
		}, bodyObject, report.SubTput, "bytes", "object", ruleSimilar),
	},
	{
		id:        "ack-modes-differ-little",
		statement: "AUTO and DUPS_OK acknowledgement differ little",
		source:    "§7: \"We were not able to observe a considerable impact on performance ... AUTO and DUPS_OK\"; §5.2 (Figure 12)",
		rule:      fmt.Sprintf("pairs AUTO ↔ DUPS_OK, all other factors equal, on both networks, run on the same broker mechanism (a pair whose records name different mechanisms, e.g. core NATS for AUTO and JetStream for DUPS_OK, is left out with the reason: that is a mechanism change, not an ack-mode change); \"little\" = sub throughputs within ±%.0f %%; holds when more than half of the pairs differ little", 100*Tolerance),
		needs:     "AUTO/DUPS_OK twins (gaddah-kunz-set2 odd/even cases 01-16)",
		eval: claimOf(onSameMechanism(twins(bothNetworks, func(f scenario.Factors) bool { return f.Ack == scenario.AckAuto }, ackDupsOK), "ack modes"),
			ratioOf(report.SubTput, "AUTO", "DUPS_OK", ruleSimilar)),
	},
	{
		id:        "persistent-costs-durable-wireline",
		statement: "Persistent delivery costs throughput (durable subscriber, no selector, wireline)",
		source:    "§5.2 (Figure 12a): \"non-persistent messages relatively achieved higher throughput results than persistent messages\"; §7: \"persistent messages affect system performance\"",
		rule:      fmt.Sprintf("durable pairs without selector, non-persistent ↔ persistent, wireline; an item agrees when the persistent sub throughput is more than %.0f %% below the non-persistent one; holds when more than half agree", 100*Tolerance),
		needs:     "durable non-persistent/persistent twins without selector on the wireline (gaddah-kunz-set2 01-04)",
		eval: pairClaim(wirelineOnly, func(f scenario.Factors) bool {
			return f.Delivery == scenario.NonPersistent && f.Subscription == scenario.Durable && !f.Selector
		}, persistent, report.SubTput, "non-persistent", "persistent", ruleBelow),
	},
	{
		id:        "delivery-modes-similar-wireless",
		statement: "Over the wireless link persistent and non-persistent delivery achieve similar throughput (durable subscriber)",
		source:    "§5.2 (Figure 12b): \"approximately both delivery and acknowledgement modes achieved similar results\"",
		rule:      fmt.Sprintf("the same pairs on wifi-paper; an item agrees when the sub throughputs are within ±%.0f %%; holds when more than half agree", 100*Tolerance),
		needs:     "durable non-persistent/persistent twins without selector on wifi-paper (gaddah-kunz-set2 01-04)",
		eval: pairClaim(wirelessOnly, func(f scenario.Factors) bool {
			return f.Delivery == scenario.NonPersistent && f.Subscription == scenario.Durable && !f.Selector
		}, persistent, report.SubTput, "non-persistent", "persistent", ruleSimilar),
	},
}
