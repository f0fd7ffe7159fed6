package claims

import (
	"fmt"
	"strings"

	"pslab/internal/scenario"
)

// capClaimDef is a claim on capacity rows, as data: which pairs (find),
// what is compared (capacity, or mean latency at equal offered load), the
// margin the ratio b/a is judged by, and whether the broker mechanism is
// the factor itself (durability on NATS is JetStream against core NATS)
// or, when not, a pair on different mechanisms is left out. capClaim
// (capacity.go) evaluates every one.
type capClaimDef struct {
	id, statement, source, needs string
	find                         finder
	factor                       string // the factor the pairs differ in, in words
	nameA, nameB                 string
	latency                      bool // mean latency at equal offered load; else capacity
	margin                       margin
	mechanismIsFactor            bool
}

// ruleText says the rule from the definition's data.
func (d capClaimDef) ruleText() string {
	what := "capacity (delivered msgs/s, Stein's CIs over the counted searches; a row whose capacity is a lower bound, client-bound `≥ X` or with no failing load, is no evidence about the broker: inconclusive)"
	if d.latency {
		what = fmt.Sprintf("mean latency at an equal offered load (fixed loads of the two rows within ±%.0f %% of each other, every run sustained: never a saturated backlog; Stein's CIs over the runs; both means within the latency floor, or the load clients at 60 %% CPU at either load: inconclusive)", 100*EqualLoadTolerance)
	}
	mech := fmt.Sprintf("pairs on different broker mechanisms are left out with the reason (that is a mechanism change, not a change of %s)", d.factor)
	if d.mechanismIsFactor {
		mech = fmt.Sprintf("on a broker that runs %s on different mechanisms (NATS: JetStream for durable or persistent, core NATS otherwise) the mechanism is the factor, and the pair counts", d.factor)
	}
	return fmt.Sprintf("ratio %s/%s of the %s; each item is judged by the 95 %% CI of the ratio: %s, anything else is inconclusive; %s; the claim holds when more than half of its items hold", d.nameB, d.nameA, what, d.margin, mech)
}

// fromPaperMode is a paper-mode claim's statement and source (the same
// conclusion of the paper).
func fromPaperMode(id string) (statement, source string) {
	for _, defs := range [][]claimDef{claimDefs, paperClaimDefs} {
		for _, d := range defs {
			if d.id == id {
				return d.statement, d.source
			}
		}
	}
	panic("claims: no paper-mode claim " + id)
}

// capDef fills a definition's statement and source from the paper-mode
// claim of the same id.
func capDef(d capClaimDef) capClaimDef {
	d.statement, d.source = fromPaperMode(d.id)
	d.statement = strings.Replace(d.statement, "subscriber throughput", "capacity", 1)
	return d
}

func oneToOneUnit(f scenario.Factors) bool {
	return f.Model == scenario.OneToOne && f.Publishers == 1 && f.Subscribers == 1 && f.Topics == 1
}

var (
	marginBeats   = marginAbove(1 + Tolerance)
	marginCuts    = marginBelow(1 - Tolerance)
	marginSimilar = marginWithin(1-Tolerance, 1+Tolerance)
)

var capClaimDefs = []capClaimDef{
	capDef(capClaimDef{id: "nondurable-beats-durable", factor: "durability", nameA: "durable", nameB: "non-durable", margin: marginBeats, mechanismIsFactor: true,
		find:  twins(wirelineOnly, isDP, toNDNP),
		needs: "durable+persistent and non-durable+non-persistent twins on the wireline"}),
	{
		id:        "nondurable-similar-durable-1x2",
		statement: "At a light load (1×2 connections) the two subscription types achieve almost the same throughput",
		source:    "§5.1.1 (Figure 8a): \"On the other hand, at a relatively light load (1×2) the two subscription types achieved almost the same throughputs.\"; (Figure 8b): \"Except for the test case 1 and 3, the throughput of non-durable subscriptions is twice that of durable subscriptions.\"",
		factor:    "durability", nameA: "durable", nameB: "non-durable", margin: marginSimilar, mechanismIsFactor: true,
		find:  twins(bothNetworks, func(f scenario.Factors) bool { return isDP(f) && oneToOneUnit(f) }, toNDNP),
		needs: "the 1/1/1 durable and non-durable twins (gaddah-kunz-set1 01↔03, 02↔04), either network",
	},
	capDef(capClaimDef{id: "durability-similar-wireless-large", factor: "durability", nameA: "durable", nameB: "non-durable", margin: marginSimilar, mechanismIsFactor: true,
		find:  twins(wirelessOnly, func(f scenario.Factors) bool { return isDP(f) && f.Size == largeBody }, toNDNP),
		needs: "5120 B durable/non-durable twins on wifi-paper"}),
	capDef(capClaimDef{id: "large-messages-cut-throughput-wireline", factor: "message size", nameA: "100 B", nameB: "5120 B", margin: marginCuts,
		find:  twins(wirelineOnly, sizeIs(smallBody), withSize(largeBody)),
		needs: "100 B / 5120 B twins on the wireline"}),
	capDef(capClaimDef{id: "large-messages-cut-throughput-wireless", factor: "message size", nameA: "100 B", nameB: "5120 B", margin: marginCuts,
		find:  twins(wirelessOnly, sizeIs(smallBody), withSize(largeBody)),
		needs: "100 B / 5120 B twins on wifi-paper"}),
	capDef(capClaimDef{id: "wireless-cuts-throughput", factor: "network", nameA: "wireline", nameB: "wireless", margin: marginCuts,
		find:  acrossNetworks(func(scenario.Factors) bool { return true }),
		needs: "rows on both wireline and wifi-paper"}),
	{
		id:        "few-to-many-nondurable-rises",
		statement: "In few-to-many, non-durable subscriber throughput rises with the number of clients (wireline)",
		source:    "§5.1.2 (Figure 10a): \"By doubling the number of subscribers and increasing the number of publishers and topics by 10 times, the throughput result of non-durable subscription increased by almost a factor of 2.\"",
		factor:    "client count", nameA: "fewer clients", nameB: "more clients", margin: marginBeats,
		find: consecutiveOf(wirelineOnly, scenario.FewToMany, func(f scenario.Factors) bool {
			return f.Subscription == scenario.NonDurable
		}),
		needs: "few-to-many non-durable rows at two client counts on the wireline (gaddah-kunz-set1 19→23, 20→24)",
	},
	capDef(capClaimDef{id: "selectors-cut-sub-throughput", factor: "selector", nameA: "no selector", nameB: "selector", margin: marginCuts,
		find:  twins(bothNetworks, func(f scenario.Factors) bool { return !f.Selector }, selectorOn),
		needs: "selector off/on twins (gaddah-kunz-set2 01-08 vs 09-16)"}),
	capDef(capClaimDef{id: "object-slower-wireline", factor: "body type", nameA: "bytes", nameB: "object", margin: marginCuts,
		find: twins(wirelineOnly, func(f scenario.Factors) bool {
			return f.Body == scenario.BodyBytes && f.Subscription == scenario.NonDurable
		}, bodyObject),
		needs: "non-durable bytes/object twins on the wireline (gaddah-kunz-set2 06 and 17)"}),
	capDef(capClaimDef{id: "ack-modes-differ-little", factor: "ack mode", nameA: "AUTO", nameB: "DUPS_OK", margin: marginSimilar,
		find:  twins(bothNetworks, func(f scenario.Factors) bool { return f.Ack == scenario.AckAuto }, ackDupsOK),
		needs: "AUTO/DUPS_OK twins (gaddah-kunz-set2)"}),
	capDef(capClaimDef{id: "persistent-costs-durable-wireline", factor: "delivery mode", nameA: "non-persistent", nameB: "persistent", margin: marginCuts, mechanismIsFactor: true,
		find: twins(wirelineOnly, func(f scenario.Factors) bool {
			return f.Delivery == scenario.NonPersistent && f.Subscription == scenario.Durable && !f.Selector
		}, persistent),
		needs: "durable non-persistent/persistent twins without selector on the wireline (gaddah-kunz-set2 01-04)"}),
	capDef(capClaimDef{id: "nondurable-lower-latency", factor: "durability", nameA: "durable", nameB: "non-durable", margin: marginCuts, latency: true, mechanismIsFactor: true,
		find:  twins(wirelineOnly, isDP, toNDNP),
		needs: "durable/non-durable twins on the wireline with a fixed load in common"}),
	capDef(capClaimDef{id: "wireless-raises-nondurable-latency", factor: "network", nameA: "wireline", nameB: "wireless", margin: marginAbove(10), latency: true,
		find:  acrossNetworks(func(f scenario.Factors) bool { return f.Subscription == scenario.NonDurable }),
		needs: "non-durable rows on both networks with a fixed load in common"}),
	capDef(capClaimDef{id: "latency-rises-with-connections", factor: "connection count", nameA: "smaller N", nameB: "larger N", margin: marginBeats, latency: true,
		find:  consecutive(bothNetworks, scenario.OneToOne),
		needs: "one-to-one rows at two N with a fixed load in common"}),
	capDef(capClaimDef{id: "large-messages-raise-latency-few-to-many", factor: "message size", nameA: "100 B", nameB: "5120 B", margin: marginBeats, latency: true,
		find:  twins(bothNetworks, modelSize(scenario.FewToMany, smallBody), withSize(largeBody)),
		needs: "few-to-many 100 B / 5120 B twins with a fixed load in common"}),
}
