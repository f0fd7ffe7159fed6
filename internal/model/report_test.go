package model

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// A fit survives the JSON round trip of `model fit --format json` and
// `model predict --broker-params`: same predictions, same standard errors.
func TestReportRoundTrip(t *testing.T) {
	obs := synth(published(t, "fiorano-corrid"), 0.02, 4, false)
	gs := FitGroups(obs, []Form{Fiorano{}, SunMQ{Mix: AllIdentical}, WebsphereMQ{}}, FitOptions{})
	if len(gs) != 1 {
		t.Fatalf("%d groups", len(gs))
	}
	rep := Report{Response: Capacity, Weighting: Relative, Sources: []string{"x"}, Records: len(obs), Groups: []GroupReport{NewGroupReport(gs[0])}}
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	g := back.Groups[0]
	if g.Best != "fiorano" || g.N != len(obs) {
		t.Fatalf("group %+v", g)
	}
	var orig *FitResult
	for _, c := range gs[0].Fits {
		if c.Form == "fiorano" {
			orig = c.Fit
		}
	}
	for _, fr := range g.Fits {
		f, cov, err := fr.Restore()
		switch fr.Form {
		case "sunmq":
			if err == nil || !strings.Contains(err.Error(), "not fitted") {
				t.Errorf("refused sunmq restored: %v", err)
			}
		case "fiorano":
			if err != nil {
				t.Fatal(err)
			}
			at := Point{NFilters: 33, R: 3}
			a, _ := orig.Predict(at)
			b, err := Predict(f, cov, at)
			if err != nil || !near(a.Overall, b.Overall, 1e-12) || !near(a.OverallStdErr, b.OverallStdErr, 1e-9) {
				t.Errorf("before %+v after %+v (%v)", a, b, err)
			}
		}
	}
	var md bytes.Buffer
	if err := WriteFitMarkdown(&md, back); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## synthetic over -", "Best form: **fiorano**", "| sunmq | refused:", "a filter: 7.", "fiorano-corrid: t_rcv = 0.852"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
}

func TestParseTime(t *testing.T) {
	for in, want := range map[string]float64{"7.02": 7.02e-6, "7.02us": 7.02e-6, "7.02 µs": 7.02e-6, "8.52e-7s": 8.52e-7, "0.5ms": 5e-4, "850ns": 8.5e-7, "-1": -1e-6} {
		if got, err := ParseTime(in); err != nil || !near(got, want, 1e-12) {
			t.Errorf("%q: %g %v", in, got, err)
		}
	}
	for _, in := range []string{"", "us", "fast", "1h", "NaN", "Inf"} {
		if _, err := ParseTime(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func TestWriteCostSummary(t *testing.T) {
	var obs []Observation
	for _, r := range []float64{1, 5, 20} {
		for _, n := range []float64{5, 20, 80} {
			b := 2e-6 + (n+r)*0.5e-6 + r*1e-6
			obs = append(obs, Observation{NFilters: n + r, R: r, ReceivedPerSec: 1 / b, DispatchedPerSec: r / b,
				Broker: "artemis", Network: "wireline", Filter: "property"})
		}
	}
	var forms []Form
	for _, n := range FormNames {
		f, _ := NewForm(n, nil)
		forms = append(forms, f)
	}
	rep := Report{Response: Capacity}
	for _, g := range FitGroups(obs, forms, FitOptions{}) {
		rep.Groups = append(rep.Groups, NewGroupReport(g))
	}
	var b strings.Builder
	if err := WriteCostSummary(&b, rep); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"| artemis | wireline | property | 9 | 2 ", "| 0.5 ", "| 1 ", "| 1.000 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}
