package plot

import (
	"fmt"
	"path/filepath"
	"testing"

	"pslab/internal/load"
	"pslab/internal/model"
	"pslab/internal/results"
	"pslab/internal/scenario"
)

// henjesRecords builds grid, OR and AND records whose throughput follows
// a known fiorano model (t_rcv 2 µs, t_fltr 0.5 µs, t_tx 1 µs).
func henjesRecords() []results.Record {
	var recs []results.Record
	add := func(f scenario.Factors) {
		f.Publishers, f.Topics, f.Filter = 5, 1, scenario.FilterProperty
		if f.FilterForm == "" {
			f.FilterForm = scenario.FormSimple
		}
		f.Subscribers = f.FilterSubscribers()
		c := f.Counts()
		b := 2e-6 + float64(c.NFilters)*0.5e-6 + c.RExpected*1e-6
		recv := 1 / b
		r := results.Record{RunID: "t", CaseID: fmt.Sprint(len(recs)), Rep: 1, Broker: "artemis", Factors: f,
			Network:   results.Network{Profile: "wireline", Backend: "none"},
			Result:    &load.Result{PubTput: recv, SubTput: recv * c.RExpected, Counts: load.Counts{ReceivedInWindow: 1, Expected: 1}},
			Resources: &results.Resources{BrokerCPUPct: 100, ClientCPUPct: 90, Cores: 2}}
		r.Filter = results.FilterInfoOf(f, "")
		recs = append(recs, r)
	}
	for _, r := range []int{1, 5, 20} {
		for _, n := range []int{5, 20, 80} {
			add(scenario.Factors{Values: 1, Matching: r, ExtraFilters: n, ExtraValues: scenario.ExtraDistinct})
		}
	}
	for _, n := range []int{5, 10, 20} {
		add(scenario.Factors{Values: n, Matching: 1})
		add(scenario.Factors{FilterForm: scenario.FormOr, Values: n, OrValues: n / 5, Matching: 1})
	}
	for _, pos := range scenario.AndPositions {
		for _, k := range []int{1, 10, 25} {
			add(scenario.Factors{FilterForm: scenario.FormAnd, Values: 10, Matching: 1, AndTerms: k, AndPosition: pos, AndProperties: 25})
		}
	}
	return recs
}

func TestHenjesFigures(t *testing.T) {
	obs, _, err := model.FromRecords(henjesRecords(), model.FiltersFromRecord, model.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var forms []model.Form
	for _, n := range model.FormNames {
		f, _ := model.NewForm(n, nil)
		forms = append(forms, f)
	}
	groups := model.FitGroups(obs, forms, model.FitOptions{})
	dir := t.TempDir()
	out, err := Henjes(groups, HenjesOptions{OutDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"and-artemis-wireline", "filters-artemis-wireline-property", "or-artemis-wireline"}
	if len(out.Files) != 2*len(want) {
		t.Fatalf("files %v, skipped %v", out.Files, out.Skipped)
	}
	for _, w := range want {
		checkPNG(t, filepath.Join(dir, w+".png"))
		checkSVG(t, filepath.Join(dir, w+".svg"))
	}
	// The grid series: one per r, sorted, with the design r.
	var grid []model.Observation
	for _, o := range groups[0].Obs {
		if _, _, ok := gridPoint(o.Record.Factors); ok {
			grid = append(grid, o)
		}
	}
	ss := seriesOf(grid, gridPoint, model.Capacity)
	if len(ss) != 3 || ss[0].r != 1 || ss[2].r != 20 || len(ss[1].pts) != 3 {
		t.Errorf("grid series %+v", ss)
	}
	// No records of an experiment: skipped with a reason, not drawn empty.
	out, err = Henjes(nil, HenjesOptions{OutDir: t.TempDir()})
	if err != nil || len(out.Files) != 0 {
		t.Errorf("no groups: %v %v", out.Files, err)
	}
}

// TestGridPointKeepsThePapersGrid: activation-series runs of the same
// design but off the r x n grid are not drawn on the grid lines.
func TestGridPointKeepsThePapersGrid(t *testing.T) {
	on := scenario.Factors{Filter: scenario.FilterProperty, FilterForm: scenario.FormSimple, Values: 1, Matching: 5, ExtraFilters: 20, ExtraValues: scenario.ExtraDistinct, Publishers: 5, Topics: 1}
	on.Subscribers = on.FilterSubscribers()
	if name, x, ok := gridPoint(on); !ok || name != "r = 5" || x != 25 {
		t.Errorf("grid run r=5 n=20: got %q %g %v, want \"r = 5\" 25 true", name, x, ok)
	}
	off := on
	off.ExtraFilters = 7 // an activation run: one matches, 7 filter other values
	if _, _, ok := gridPoint(off); ok {
		t.Error("n = 7 is not on the papers' grid but was drawn")
	}
	off = on
	off.Matching = 3
	if _, _, ok := gridPoint(off); ok {
		t.Error("r = 3 is not on the papers' grid but was drawn")
	}
}
