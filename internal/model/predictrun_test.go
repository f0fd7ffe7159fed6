package model

import (
	"path/filepath"
	"strings"
	"testing"

	"pslab/internal/results"
)

// TestPredictTableSources: every combination of filters and replication
// grades is a row, from each of the three parameter sources; a fit's file
// gives the same numbers as the fit, with standard errors.
func TestPredictTableSources(t *testing.T) {
	rows, err := PredictTable(PredictSettings{Published: "all", Filters: "10,40", Replication: "1,5,10", SunMQFilters: "different"})
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * 2 * len(PublishedSets()); len(rows) != want {
		t.Errorf("%d rows, want %d", len(rows), want)
	}
	given, err := PredictTable(PredictSettings{Form: "fiorano", TRcv: "20us", TFltr: "2", TTx: "0.005ms",
		Filters: "30", Replication: "10", SunMQFilters: "different"})
	if err != nil || len(given) != 1 {
		t.Fatalf("%v %v", given, err)
	}
	if b := given[0].Prediction.B; !near(b, truthFiorano.ServiceTime(30, 10), 1e-12) {
		t.Errorf("given: B = %g", b)
	}

	dir := t.TempDir()
	writeGridBundle(t, filepath.Join(dir, "g"), "nats")
	rep, _, err := FitSources([]string{filepath.Join(dir, "g")}, DefaultFitSettings(Demand))
	if err != nil {
		t.Fatal(err)
	}
	js, _ := EncodeReport(rep, "json")
	params := filepath.Join(dir, "fit.json")
	if err := results.WriteAtomic(params, js); err != nil {
		t.Fatal(err)
	}
	fitted, err := PredictTable(PredictSettings{BrokerParams: params, Broker: "nats", Form: "fiorano",
		Filters: "30", Replication: "10", SunMQFilters: "different"})
	if err != nil || len(fitted) != 1 {
		t.Fatalf("%v %v", fitted, err)
	}
	p := fitted[0].Prediction
	if !near(p.B, given[0].Prediction.B, 1e-6) || !p.HasStdErr || !strings.Contains(fitted[0].Set, "nats/wireline/property fiorano (fit)") {
		t.Errorf("fitted %+v", fitted[0])
	}
	if _, err := PredictTable(PredictSettings{BrokerParams: params, Broker: "artemis", Filters: "1", Replication: "1", SunMQFilters: "different"}); err == nil ||
		!strings.Contains(err.Error(), "0 groups match") || !strings.Contains(err.Error(), "nats/wireline/property") {
		t.Errorf("no group: %v", err)
	}
}

// TestPredictTableRefusesBadInput: each inconsistent request is refused
// with the flag it came from.
func TestPredictTableRefusesBadInput(t *testing.T) {
	ok := PredictSettings{Published: "fiorano", Filters: "10", Replication: "1", SunMQFilters: "different"}
	for want, change := range map[string]func(*PredictSettings){
		"exactly one parameter source": func(s *PredictSettings) { s.BrokerParams = "x.json" },
		"--filters is required":        func(s *PredictSettings) { s.Filters = "" },
		`--filters "1,-2"`:             func(s *PredictSettings) { s.Filters = "1,-2" },
		`--replication "x"`:            func(s *PredictSettings) { s.Replication = "x" },
		`--distinct "1,2": want one`:   func(s *PredictSettings) { s.Distinct = "1,2" },
		`--sunmq-filters "x"`:          func(s *PredictSettings) { s.SunMQFilters = "x" },
		"need --form":                  func(s *PredictSettings) { s.Published, s.TRcv = "", "2" },
		"--form sunmq needs --t-fltr-diff": func(s *PredictSettings) {
			s.Published, s.Form, s.TRcv, s.TFltr, s.TTx = "", "sunmq", "2", "1", "1"
		},
		"--t-tx does not belong to form websphere": func(s *PredictSettings) {
			s.Published, s.Form, s.TRcv, s.TFltr, s.TTx = "", "websphere", "2", "1", "1"
		},
	} {
		s := ok
		change(&s)
		if _, err := PredictTable(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want an error with %q, got %v", want, err)
		}
	}
}

// TestPredictRefusesNonFiniteAndNegativeInputs: inputs that are not
// finite, negative given times, and points where the prediction overflows
// are refused as bad input. Before, --filters 1e308 --replication 1e308
// printed B=+Inf, and --filters inf or --t-rcv -2 were taken.
func TestPredictRefusesNonFiniteAndNegativeInputs(t *testing.T) {
	for name, s := range map[string]PredictSettings{
		"overflow":       {Published: "fiorano", Filters: "1e308", Replication: "1e308"},
		"inf filters":    {Published: "fiorano", Filters: "inf", Replication: "1"},
		"inf r":          {Published: "fiorano", Filters: "1", Replication: "+Inf"},
		"negative r":     {Published: "fiorano", Filters: "1", Replication: "-1"},
		"nan":            {Published: "fiorano", Filters: "NaN", Replication: "1"},
		"negative t-rcv": {Form: "fiorano", TRcv: "-1", TFltr: "5", TTx: "1", Filters: "1", Replication: "1"},
		"inf t-tx":       {Form: "fiorano", TRcv: "2", TFltr: "1", TTx: "inf", Filters: "1", Replication: "1"},
		"tiny B":         {Form: "websphere", TRcv: "1e-320s", TFltr: "0", Filters: "1", Replication: "1"},
	} {
		s.SunMQFilters = "different" // the flag's default
		out, err := PredictTable(s)
		if err == nil {
			t.Errorf("%s: accepted: %+v", name, out)
		}
	}
}
