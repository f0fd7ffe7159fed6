package metrics

import (
	"math"
)

// Stein's two-stage rule (Stein 1945) decides how many repetitions give a
// 95 % confidence interval of a chosen half-width d, with exact coverage
// for normal data. A CI recomputed after each repetition and used to stop
// at the first one within target (what `ci:` does) is optional stopping:
// it stops when the sample variance happens to be low, and covers less
// than 95 %. Stein's rule looks once: the first n0 repetitions give a
// standard deviation s0, which fixes the total N; the interval over all N
// uses s0 and Student's t with n0 − 1 degrees of freedom. Because N
// depends on s0 only, and s0 is independent of every mean, √N(x̄−μ)/s0 has
// that t distribution exactly, and the interval covers μ with probability
// 0.95 whatever N came out (also when a cap cut N: the interval is then
// wider than d, never too narrow). d must be fixed before the first stage
// (from earlier, independent data or a relative target on a log scale).

// SteinN is the total number of repetitions Stein's rule asks for, given
// the n0 = len(first) first-stage values and the target half-width d (in
// their units): max(n0, ⌈(t·s0/d)²⌉) with t = T975(n0−1). It needs n0 ≥ 2
// and d > 0 (else it returns n0).
func SteinN(first []float64, d float64) int {
	n0 := len(first)
	if n0 < 2 || !(d > 0) {
		return n0
	}
	s0 := sampleSD(first)
	n := math.Ceil(math.Pow(T975(n0-1)*s0/d, 2))
	if math.IsNaN(n) || n < float64(n0) {
		return n0
	}
	if n > 1e6 {
		return 1e6
	}
	return int(n)
}

// SteinCI is the interval of Stein's rule over all values, the first n0
// of which were the first stage: the mean of all, and the half-width
// t·s0/√N with t = T975(n0−1), s0 the first stage's standard deviation.
// Fewer than 2 first-stage values (or values): NaN half-width.
func SteinCI(all []float64, n0 int) (mean, half float64) {
	if len(all) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range all {
		mean += x
	}
	mean /= float64(len(all))
	if n0 < 2 || len(all) < n0 {
		return mean, math.NaN()
	}
	return mean, T975(n0-1) * sampleSD(all[:n0]) / math.Sqrt(float64(len(all)))
}

func sampleSD(xs []float64) float64 {
	var m float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}
