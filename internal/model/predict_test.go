package model

import (
	"math"
	"strings"
	"testing"
)

func TestPredictPropagatesCovariance(t *testing.T) {
	f := Fiorano{TRcv: 10e-6, TFltr: 5e-6, TTx: 20e-6}
	// Var(B) = xᵀ Σ x with x = (1, 4, 2)
	cov := [][]float64{{4e-12, 0, 0}, {0, 1e-12, 0.5e-12}, {0, 0.5e-12, 1e-12}}
	p, err := Predict(f, cov, Point{NFilters: 4, R: 2})
	if err != nil {
		t.Fatal(err)
	}
	wantB := 10e-6 + 4*5e-6 + 2*20e-6                 // 70 µs
	wantVar := 4e-12 + 16e-12 + 2*4*2*0.5e-12 + 4e-12 // 32e-12
	if !near(p.B, wantB, 1e-12) || !near(p.BStdErr, math.Sqrt(wantVar), 1e-9) || !p.HasStdErr {
		t.Fatalf("B %.6g ± %.6g, want %.6g ± %.6g", p.B, p.BStdErr, wantB, math.Sqrt(wantVar))
	}
	rel := p.BStdErr / p.B
	if !near(p.ReceivedStdErr, rel/wantB, 1e-9) || !near(p.OverallStdErr, 3*rel/wantB, 1e-9) || !near(p.DispatchedStdErr, 2*rel/wantB, 1e-9) {
		t.Errorf("throughput SEs %+v", p)
	}
	if _, err := Predict(f, [][]float64{{1}}, Point{NFilters: 1, R: 1}); err == nil {
		t.Error("wrong-sized covariance accepted")
	}
}

func TestPredictRefusals(t *testing.T) {
	neg := Fiorano{TRcv: 10e-6, TFltr: -1e-6, TTx: 0}
	if _, err := Predict(neg, nil, Point{NFilters: 20, R: 1}); err == nil || !strings.Contains(err.Error(), "not positive") {
		t.Errorf("negative B: %v", err)
	}
	for _, p := range []Point{{NFilters: -1}, {NFilters: 1, R: -2}, {NFilters: 2, NDistinct: 3}, {NFilters: math.NaN()}} {
		if _, err := Predict(published(t, "sunmq"), nil, p); err == nil {
			t.Errorf("%+v accepted", p)
		}
	}
}

// The propagated standard error of a predicted throughput matches the
// scatter of that prediction over many noisy data sets.
func TestPredictStdErrCalibrated(t *testing.T) {
	truth := published(t, "fiorano-appprop")
	at := Point{NFilters: 60, R: 7} // inside the grid, not on it
	const reps = 200
	var vals []float64
	meanSE := 0.0
	for s := range uint64(reps) {
		fr, err := truth.Fit(synth(truth, 0.03, 500+s, false))
		if err != nil {
			t.Fatal(err)
		}
		p, err := fr.Predict(at)
		if err != nil {
			t.Fatal(err)
		}
		vals = append(vals, p.Overall)
		meanSE += p.OverallStdErr / reps
	}
	mean := 0.0
	for _, v := range vals {
		mean += v / reps
	}
	sd := 0.0
	for _, v := range vals {
		sd += (v - mean) * (v - mean)
	}
	sd = math.Sqrt(sd / (reps - 1))
	if r := sd / meanSE; r < 0.75 || r > 1.33 {
		t.Errorf("overall throughput: scatter %.2f vs propagated SE %.2f (ratio %.2f)", sd, meanSE, r)
	}
	want, _ := Predict(truth, nil, at)
	if math.Abs(mean-want.Overall) > 4*meanSE {
		t.Errorf("mean prediction %.1f, truth %.1f", mean, want.Overall)
	}
}

func TestNewForm(t *testing.T) {
	f, err := NewForm("websphere", []float64{1e-3, 2e-5})
	if err != nil || f.ServiceTime(4, 9) != 1e-3+8*2e-5 {
		t.Errorf("%v %v", f, err)
	}
	if _, err := NewForm("fiorano", []float64{1}); err == nil {
		t.Error("wrong parameter count accepted")
	}
	if _, err := NewForm("tibco", nil); err == nil {
		t.Error("unknown form accepted")
	}
	if _, err := NewForm("fiorano", []float64{1, math.NaN(), 1}); err == nil {
		t.Error("NaN accepted")
	}
}
