package model

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"pslab/internal/load"
	"pslab/internal/results"
	"pslab/internal/scenario"
)

// truthFiorano is the service time the synthetic records are made from.
var truthFiorano = Fiorano{TRcv: 20e-6, TFltr: 2e-6, TTx: 5e-6}

// writeGridBundle writes records of broker on Henjes et al.'s joint grid
// into dir, their broker CPU following truth exactly under the Demand
// response, and one failed run.
func writeGridBundle(t *testing.T, dir, broker string) int {
	t.Helper()
	b, err := results.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	add := func(r results.Record) {
		n++
		r.RunID, r.CaseID, r.Rep, r.Broker = "grid", fmt.Sprintf("%02d", n), 1, broker
		if err := b.Append(&r); err != nil {
			t.Fatal(err)
		}
	}
	for _, nf := range []int{0, 10, 40} {
		for _, rg := range []float64{1, 5, 10} {
			const pub = 1000.0
			cpu := truthFiorano.ServiceTime(float64(nf)+rg, rg) * pub
			add(results.Record{
				Network:   results.Network{Profile: "wireline", Backend: "none"},
				Factors:   scenario.Factors{Publishers: 1, Subscribers: int(rg), Topics: 1},
				Filter:    &results.FilterInfo{Kind: "property", FilterCounts: scenario.FilterCounts{NFilters: nf + int(rg), NDistinct: nf + int(rg)}},
				Result:    &load.Result{PubTput: pub, SubTput: rg * pub, Counts: load.Counts{ReceivedInWindow: 10, Expected: 10}},
				Resources: &results.Resources{BrokerCPUPct: 100 * cpu, ClientCPUPct: 10, Cores: 2},
			})
		}
	}
	add(results.Record{Error: "connect refused", Filter: &results.FilterInfo{Kind: "property"}})
	return n
}

// TestFitSourcesRecoversTheModel: records read from a bundle are fitted per
// broker, the generating form's parameters come back, failed runs are
// skipped with their reason, and the report encodes as markdown and JSON.
func TestFitSourcesRecoversTheModel(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "henjes-grid")
	n := writeGridBundle(t, dir, "nats")
	s := DefaultFitSettings(Demand)
	s.Forms = "fiorano,websphere"
	rep, groups, err := FitSources([]string{dir}, s)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Records != n || len(rep.Skipped) != 1 || rep.Skipped[0].Reason != SkipFailed || rep.Skipped[0].Count != 1 {
		t.Fatalf("records %d skipped %+v", rep.Records, rep.Skipped)
	}
	if len(groups) != 1 || groups[0].Broker != "nats" || groups[0].Filter != "property" || !Fitted(groups) {
		t.Fatalf("groups %+v", groups)
	}
	if groups[0].Best != "fiorano" {
		t.Errorf("best %q, want the generating form", groups[0].Best)
	}
	for _, c := range groups[0].Fits {
		if c.Form != "fiorano" {
			continue
		}
		want := []float64{truthFiorano.TRcv, truthFiorano.TFltr, truthFiorano.TTx}
		for i, p := range c.Fit.Params {
			if !near(p.Value, want[i], 1e-6) {
				t.Errorf("%s = %g, want %g", p.Symbol, p.Value, want[i])
			}
		}
	}
	md, err := EncodeReport(rep, "md")
	if err != nil || !strings.Contains(string(md), "Best form: **fiorano**") {
		t.Errorf("markdown (%v):\n%s", err, md)
	}
	js, err := EncodeReport(rep, "json")
	var back Report
	if err != nil || json.Unmarshal(js, &back) != nil || len(back.Groups) != 1 || back.Groups[0].Best != "fiorano" {
		t.Errorf("json (%v): %s", err, js)
	}
	if _, err := EncodeReport(rep, "xml"); err == nil {
		t.Error("format xml accepted")
	}
}

// TestFitSourcesRefusesBadInput: each bad setting or input is refused with
// the flag it came from, before or instead of a fit.
func TestFitSourcesRefusesBadInput(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "b")
	writeGridBundle(t, dir, "nats")
	for want, change := range map[string]func(*FitSettings){
		`--filters-from "bogus"`:      func(s *FitSettings) { s.FiltersFrom = "bogus" },
		`--distinct-from "selector"`:  func(s *FitSettings) { s.DistinctFrom = "selector" },
		`--response "x"`:              func(s *FitSettings) { s.Response = "x" },
		`--weighting "x"`:             func(s *FitSettings) { s.Weighting = "x" },
		`--sunmq-filters "x"`:         func(s *FitSettings) { s.SunMQFilters = "x" },
		`--form: `:                    func(s *FitSettings) { s.Forms = "fiorano,nope" },
		`--broker artemis: no record`: func(s *FitSettings) { s.Broker = "artemis" },
		// Every run is unsaturated (broker CPU well under 0.8 core).
		"try --response demand": func(s *FitSettings) { s.Response = string(Capacity) },
		"1 failed, 9 no-filter-count": func(s *FitSettings) {
			s.FiltersFrom, s.DistinctFrom, s.Response = "name:nf", "", string(Demand)
		},
	} {
		s := DefaultFitSettings(Demand)
		change(&s)
		_, _, err := FitSources([]string{dir}, s)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want an error with %q, got %v", want, err)
		}
	}
	if _, _, err := FitSources([]string{filepath.Join(dir, "nope")}, DefaultFitSettings(Demand)); err == nil {
		t.Error("a missing bundle was accepted")
	}
}
