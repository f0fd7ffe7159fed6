package metrics

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// MeanCI95 returns the sample mean of xs and the half-width of its two-sided
// 95 % confidence interval, t(0.975, n-1) * s / sqrt(n) with s the sample
// standard deviation (Student t: repetitions are few and assumed normal).
//
// For n == 0 both are NaN. For n == 1 the mean is xs[0] and the half-width is
// NaN: one repetition says nothing about spread, and NaN makes any
// "half-width within 5 % of the mean" test false, so callers keep repeating.
// Identical values give a half-width of 0. NaN cannot be written as JSON:
// callers must map it (e.g. to null) before writing records.
func MeanCI95(xs []float64) (mean, halfWidth float64) {
	n := len(xs)
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(n)
	if n == 1 {
		return mean, math.NaN()
	}
	var ss float64
	for _, x := range xs {
		d := x - mean
		ss += d * d
	}
	sd := math.Sqrt(ss / float64(n-1))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.975)
	return mean, t * sd / math.Sqrt(float64(n))
}
