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
