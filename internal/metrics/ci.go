package metrics

import (
	"math"
	"sync"

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
	return mean, T975(n-1) * sd / math.Sqrt(float64(n))
}

// StudentT is Student's t distribution with df degrees of freedom (the
// normal for df = +Inf). pslab's one implementation of it: confidence
// intervals here, the report's tests, the repetition planner.
func StudentT(df float64) distuv.StudentsT {
	if math.IsInf(df, 1) {
		df = 1e9
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
}

// T975 is the 0.975 quantile of Student's t with df degrees of freedom:
// the factor of a two-sided 95 % confidence interval.
func T975(df int) float64 { return TQuantile(df, 0.975) }

// TQuantile is the p quantile of Student's t with df degrees of freedom,
// remembered once computed (the sequential rules ask for the same few
// again and again; TestCIRuleCoversUnderOptionalStopping asks millions).
func TQuantile(df int, p float64) float64 {
	k := tKey{df, p}
	if q, ok := tQuantiles.Load(k); ok {
		return q.(float64)
	}
	q := StudentT(float64(df)).Quantile(p)
	tQuantiles.Store(k, q)
	return q
}

type tKey struct {
	df int
	p  float64
}

var tQuantiles sync.Map // tKey -> float64

// CV is the coefficient of variation of xs: the sample standard deviation
// over the mean. ok is false for fewer than two values or a mean of 0 or
// less.
func CV(xs []float64) (cv float64, ok bool) {
	if len(xs) < 2 {
		return 0, false
	}
	var mean float64
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if mean <= 0 {
		return 0, false
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss/float64(len(xs)-1)) / mean, true
}

// RepsFor is the fewest repetitions n (from first up to limit) whose 95 %
// confidence half-width, T975(n-1) * cv / sqrt(n), is within ci of the
// mean (ci a fraction, e.g. 0.05), for a between-repetition coefficient
// of variation cv; limit when none is.
func RepsFor(cv, ci float64, first, limit int) int {
	return RepsForLevel(cv, ci, 0.95, first, limit)
}
