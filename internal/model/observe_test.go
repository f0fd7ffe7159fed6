package model

import (
	"testing"

	"pslab/internal/load"
	"pslab/internal/results"
	"pslab/internal/scenario"
)

func rec(name string, pub, sub float64) results.Record {
	return results.Record{
		RunID: "run1", CaseID: "01", Rep: 1, Name: name, Broker: "nats",
		Network:   results.Network{Profile: "wireline", Backend: "none"},
		Factors:   scenario.Factors{Publishers: 5, Subscribers: 10, Topics: 1},
		Result:    &load.Result{PubTput: pub, SubTput: sub, Counts: load.Counts{ReceivedInWindow: 10, Expected: 10}},
		Resources: &results.Resources{BrokerCPUPct: 95, ClientCPUPct: 90, Cores: 2},
	}
}

func TestFiltersFromName(t *testing.T) {
	f := FiltersFromName("filters")
	for name, want := range map[string]int{
		"filters=40 subscribers=10": 40, "subscribers=10,filters=7": 7, "filters=0": 0,
	} {
		if n, ok := f(results.Record{Name: name}); !ok || n != want {
			t.Errorf("%q: %d %v", name, n, ok)
		}
	}
	for _, name := range []string{"", "subscribers=10", "filters=x", "filters=-3", "nfilters=4", "filters40"} {
		if n, ok := f(results.Record{Name: name}); ok {
			t.Errorf("%q: read %d", name, n)
		}
	}
}

func TestFiltersFromSelector(t *testing.T) {
	r := results.Record{Factors: scenario.Factors{Subscribers: 100, Topics: 10, Selector: true}}
	if n, ok := FiltersFromSelector(r); !ok || n != 10 {
		t.Errorf("100 subscribers on 10 topics with selectors: %d %v", n, ok)
	}
	r.Factors.Selector = false
	if n, ok := FiltersFromSelector(r); !ok || n != 0 {
		t.Errorf("no selector: %d %v", n, ok)
	}
}

func TestFromRecords(t *testing.T) {
	good := rec("filters=40 subscribers=10", 1000, 5000)
	failed := rec("filters=40", 0, 0)
	failed.Error, failed.Result = "connect refused", nil
	client := rec("filters=40", 1000, 5000)
	client.Flags = []results.Flag{results.ParseFlag("cpu-saturated: ..."), results.NewFlag(results.FlagClientBound, "the client process used 150%% of 200%% CPU")}
	noCount := rec("subscribers=10", 1000, 5000)
	wifi := rec("filters=40", 100, 500)
	wifi.Network = results.Network{Profile: "wifi-paper", Backend: "tbf+nftables"}
	zero := rec("filters=40", 0, 0)
	nodeliv := rec("filters=40", 1000, 0)
	nodeliv.Result.Counts = load.Counts{ReceivedInWindow: 0, Expected: 500}
	allFiltered := rec("filters=40", 1000, 0) // nothing matched: r = 0 is a real value
	allFiltered.Result.Counts = load.Counts{}
	recs := []results.Record{good, failed, client, noCount, wifi, zero, nodeliv, allFiltered}

	obs, skips, err := FromRecords(recs, FiltersFromName("filters"), BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 2 {
		t.Fatalf("%d observations: %+v", len(obs), obs)
	}
	o := obs[0]
	if o.NFilters != 40 || o.R != 5 || o.ReceivedPerSec != 1000 || o.DispatchedPerSec != 5000 || o.BrokerCPU != 0.95 ||
		o.Broker != "nats" || o.Network != "wireline" || o.Source != "run1/case 01/rep 1" {
		t.Errorf("observation %+v", o)
	}
	if obs[1].R != 0 {
		t.Errorf("all filtered out: r = %g", obs[1].R)
	}
	want := map[string]int{SkipFailed: 1, SkipClientBound: 1, SkipNoFilters: 1, SkipShapedLink: 1, SkipNoTput: 1, SkipNoDeliveries: 1}
	got := map[string]int{}
	for _, c := range CountSkips(skips) {
		got[c.Reason] = c.Count
	}
	if len(got) != len(want) {
		t.Errorf("skips %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("skip %s: %d, want %d", k, got[k], v)
		}
	}

	// Demand keeps the shaped link (CPU per message does not need
	// saturation) but needs CPU samples; MinBrokerCPU drops idle brokers.
	idle := rec("filters=40", 1000, 5000)
	idle.Resources.BrokerCPUPct = 20
	nocpu := rec("filters=40", 1000, 5000)
	nocpu.Resources = nil
	obs, skips, _ = FromRecords([]results.Record{good, wifi, idle, nocpu}, FiltersFromName("filters"),
		BuildOptions{Response: Demand, MinBrokerCPU: 50})
	if len(obs) != 2 || len(skips) != 2 || skips[0].Reason != SkipLowCPU || skips[1].Reason != SkipNoCPU {
		t.Errorf("demand: %d obs, skips %+v", len(obs), skips)
	}

	if _, _, err := FromRecords(recs, nil, BuildOptions{}); err == nil {
		t.Error("no filter count accepted")
	}
	obs, _, _ = FromRecords([]results.Record{good}, FiltersFromName("filters"),
		BuildOptions{Distinct: FiltersFromName("subscribers")})
	if obs[0].NDistinct != 10 {
		t.Errorf("distinct %g", obs[0].NDistinct)
	}
}

func TestFromRecordsReadsFilterBlock(t *testing.T) {
	r := rec("no count in the name", 1000, 2000)
	r.Factors = scenario.Factors{Publishers: 5, Subscribers: 12, Topics: 1, Filter: scenario.FilterSubject,
		FilterForm: scenario.FormSimple, Values: 1, Matching: 2, ExtraFilters: 10, ExtraValues: scenario.ExtraSame}
	r.Filter = results.FilterInfoOf(r.Factors, "subjects")
	old := rec("filters=3", 1000, 1000) // written before the filter block
	obs, skips, err := FromRecords([]results.Record{r, old}, FiltersFromRecord, BuildOptions{Distinct: DistinctFromRecord})
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 1 || obs[0].NFilters != 12 || obs[0].NDistinct != 2 || obs[0].R != 2 {
		t.Fatalf("observations %+v", obs)
	}
	if len(skips) != 1 || skips[0].Reason != SkipNoFilters {
		t.Errorf("skips %+v", skips)
	}
	// auto falls back to the selector rule for old records (no selector: 0 filters)
	if n, ok := FiltersAuto(old); !ok || n != 0 {
		t.Errorf("auto on an old record: %d %v", n, ok)
	}
	if n, ok := FiltersAuto(r); !ok || n != 12 {
		t.Errorf("auto on a new record: %d %v", n, ok)
	}
}

func TestCapacityNeedsSaturation(t *testing.T) {
	busy := rec("filters=10", 1000, 1000) // broker 0.95 + client 0.90 of 2 cores
	idleMachine := rec("filters=10", 1000, 1000)
	idleMachine.Resources.ClientCPUPct = 40
	smallBroker := rec("filters=10", 1000, 1000)
	smallBroker.Resources.BrokerCPUPct, smallBroker.Resources.ClientCPUPct = 60, 119
	clientHeavy := rec("filters=10", 1000, 1000) // not flagged, but over 60 % by the rule
	clientHeavy.Resources.BrokerCPUPct, clientHeavy.Resources.ClientCPUPct = 60, 130
	recs := []results.Record{busy, idleMachine, smallBroker, clientHeavy}
	obs, skips, _ := FromRecords(recs, FiltersFromName("filters"), BuildOptions{})
	if len(obs) != 1 {
		t.Fatalf("capacity kept %d runs, want only the saturated one; skips %+v", len(obs), skips)
	}
	got := map[string]int{}
	for _, s := range skips {
		got[s.Reason]++
		if s.Detail == "" {
			t.Errorf("skip without a reason: %+v", s)
		}
	}
	if got[SkipNotSaturated] != 2 || got[SkipClientBound] != 1 {
		t.Errorf("skips %v", got)
	}
	// Demand keeps them all: CPU per message needs no saturation.
	obs, _, _ = FromRecords(recs, FiltersFromName("filters"), BuildOptions{Response: Demand})
	if len(obs) != 4 {
		t.Errorf("demand kept %d of 4", len(obs))
	}
}
