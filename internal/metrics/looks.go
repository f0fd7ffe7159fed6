package metrics

import "math"

// A CI recomputed after every repetition and used to stop at the first
// one narrow enough (paper mode's `ci:` rule) is optional stopping: it
// stops when the sample happens to look tight, and a 95 % interval
// reported at the stop covers less than 95 % (about 90 % for the
// reproduction's rule, TestSteinCoversWhereOptionalStoppingDoesNot).
//
// The Bonferroni correction over the looks fixes that with a guarantee
// that needs no model of the stopping time. The rule may stop only at K
// sample sizes (it looks at n = max(min, 2), ..., max repetitions); at
// each look the interval is computed at confidence 1 − α/K. The interval
// reported at the stop is the one of some look, so it misses only if
// some look's interval misses, and by the union bound that happens with
// probability at most K·α/K = α, whatever the stopping time: coverage at
// least 95 % (for normal data, each look's t interval being exact at its
// fixed n). It is conservative (the looks' misses overlap) and costs
// repetitions: each look's interval is wider than a plain 95 % one.
// Every metric's interval at the stop is covered by the same argument,
// not only those the rule looks at.

// CIMethodLooks names the Bonferroni correction over the looks in
// records and reports.
const CIMethodLooks = "bonferroni-looks"

// Looks is the number of sample sizes at which a rule that checks a CI
// after every repetition from minReps (at least 2: one value has no
// interval) up to maxReps may stop; at least 1.
func Looks(minReps, maxReps int) int {
	return max(maxReps-max(minReps, 2)+1, 1)
}

// LooksLevel is the confidence of each look's interval, 1 − 0.05/looks,
// for at least 95 % at the stop.
func LooksLevel(looks int) float64 {
	return 1 - 0.05/float64(max(looks, 1))
}

// MeanCI returns the sample mean of xs and the half-width of its
// two-sided confidence interval at level (e.g. 0.95): t(1 − (1−level)/2,
// n−1)·s/√n. NaN half-width for fewer than two values, as MeanCI95.
func MeanCI(xs []float64, level float64) (mean, halfWidth float64) {
	mean, half := MeanCI95(xs)
	if len(xs) < 2 || level == 0.95 {
		return mean, half
	}
	n := len(xs)
	return mean, half / T975(n-1) * TQuantile(n-1, 1-(1-level)/2)
}

// RepsForLevel is RepsFor at a confidence level other than 95 %: the
// fewest repetitions n (from first up to limit) whose half-width at level
// is within ci of the mean for a coefficient of variation cv.
func RepsForLevel(cv, ci, level float64, first, limit int) int {
	n := max(first, 2)
	for n < limit && TQuantile(n-1, 1-(1-level)/2)*cv/math.Sqrt(float64(n)) > ci {
		n++
	}
	return n
}
