package metrics

import (
	"math"
	"testing"
)

// Hand-computed with the t table: t(0.975,1) = 12.7062, t(0.975,4) = 2.7764,
// t(0.975,9) = 2.2622.
func TestMeanCI95(t *testing.T) {
	cases := []struct {
		xs         []float64
		mean, half float64
	}{
		{[]float64{10, 12}, 11, 12.7062},                        // s = 1.4142, half = t*s/sqrt(2)
		{[]float64{1, 2, 3, 4, 5}, 3, 1.9632},                   // s = 1.5811, half = 2.7764*1.5811/2.2361
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 5.5, 2.1658}, // s = 3.0277, half = 2.2622*3.0277/3.1623
		{[]float64{7, 7, 7}, 7, 0},
	}
	for _, c := range cases {
		m, h := MeanCI95(c.xs)
		if math.Abs(m-c.mean) > 1e-12 || math.Abs(h-c.half) > 1e-3 {
			t.Errorf("MeanCI95(%v) = %v ± %v, want %v ± %v", c.xs, m, h, c.mean, c.half)
		}
	}
	if m, h := MeanCI95([]float64{4.5}); m != 4.5 || !math.IsNaN(h) {
		t.Errorf("n=1: %v ± %v, want 4.5 ± NaN", m, h)
	}
	if m, h := MeanCI95(nil); !math.IsNaN(m) || !math.IsNaN(h) {
		t.Errorf("n=0: %v ± %v, want NaN ± NaN", m, h)
	}
}

// TestStudentTQuantilesAndRepetitions: the 0.975 quantiles against the
// printed table (two-sided 95 %), the CV, and the repetitions a CV needs.
func TestStudentTQuantilesAndRepetitions(t *testing.T) {
	for df, want := range map[int]float64{1: 12.706, 2: 4.303, 4: 2.776, 9: 2.262, 19: 2.093, 60: 2.000} {
		if got := T975(df); math.Abs(got-want) > 0.001 {
			t.Errorf("T975(%d) = %.4f, want %.3f", df, got, want)
		}
	}
	if q := StudentT(math.Inf(1)).Quantile(0.975); math.Abs(q-1.960) > 0.001 {
		t.Errorf("the normal's 0.975 quantile: %.4f", q)
	}
	if cv, ok := CV([]float64{9, 10, 11}); !ok || math.Abs(cv-0.1) > 1e-12 {
		t.Errorf("CV(9, 10, 11) = %v %v, want 0.1", cv, ok)
	}
	if _, ok := CV([]float64{5}); ok {
		t.Error("CV of one value")
	}
	// CV 10 %: n = 18 gives 2.110 * 0.1 / sqrt(18) = 0.0497 <= 5 %, 17 gives 0.0514.
	if n := RepsFor(0.10, 0.05, 3, 1000); n != 18 {
		t.Errorf("RepsFor(10 %%, 5 %%) = %d, want 18", n)
	}
	if n := RepsFor(0.001, 0.05, 3, 1000); n != 3 {
		t.Errorf("a tiny CV needs the first count: %d", n)
	}
	if n := RepsFor(1, 0.05, 3, 10); n != 10 {
		t.Errorf("the limit: %d", n)
	}
}
