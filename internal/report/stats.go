package report

import (
	"fmt"
	"math"

	"pslab/internal/metrics"
)

// Alpha is the significance level of every test behind a claim or a
// comparison: a verdict other than inconclusive has at most a 5 % chance
// of being wrong under its null hypothesis.
const Alpha = 0.05

// Contrast is a linear combination Σ c_i·mean(x_i) of the means of
// independent samples (repetitions), with Welch's standard error and
// Welch-Satterthwaite degrees of freedom. Two samples with coefficients
// -1 and +1 are Welch's two-sample t; one sample with +1 is the
// one-sample t; four samples (+1 -1 -1 +1) compare two ratios.
type Contrast struct {
	Est float64 // the combination of the means
	SE  float64 // its standard error
	DF  float64 // Welch-Satterthwaite degrees of freedom
	N   []int   // sample sizes
}

// NewContrast combines samples with coefficients. It fails when a sample
// has fewer than two values (no variance) or a value is not finite.
func NewContrast(samples [][]float64, coef []float64) (Contrast, error) {
	if len(samples) != len(coef) || len(samples) == 0 {
		return Contrast{}, fmt.Errorf("contrast: %d samples, %d coefficients", len(samples), len(coef))
	}
	var c Contrast
	var v, dfDen float64
	for i, xs := range samples {
		n := len(xs)
		c.N = append(c.N, n)
		if n < 2 {
			return c, fmt.Errorf("%d repetition(s): a test needs at least 2 per side", n)
		}
		var m float64
		for _, x := range xs {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return c, fmt.Errorf("a repetition has no finite value")
			}
			m += x
		}
		m /= float64(n)
		var ss float64
		for _, x := range xs {
			ss += (x - m) * (x - m)
		}
		vi := coef[i] * coef[i] * ss / float64(n-1) / float64(n)
		c.Est += coef[i] * m
		v += vi
		dfDen += vi * vi / float64(n-1)
	}
	c.SE = math.Sqrt(v)
	if dfDen > 0 {
		c.DF = v * v / dfDen
	} else {
		c.DF = math.Inf(1) // no spread at all: the estimate is exact
	}
	return c, nil
}

// PAbove is the one-sided p-value of H0: true value ≤ t against H1: > t.
func (c Contrast) PAbove(t float64) float64 {
	if c.SE == 0 {
		if c.Est > t {
			return 0
		}
		return 1
	}
	return metrics.StudentT(c.DF).Survival((c.Est - t) / c.SE)
}

// PBelow is the one-sided p-value of H0: true value ≥ t against H1: < t.
func (c Contrast) PBelow(t float64) float64 {
	if c.SE == 0 {
		if c.Est < t {
			return 0
		}
		return 1
	}
	return metrics.StudentT(c.DF).CDF((c.Est - t) / c.SE)
}

// PTwoSided is the two-sided p-value of H0: true value = 0.
func (c Contrast) PTwoSided() float64 { return math.Min(1, 2*math.Min(c.PAbove(0), c.PBelow(0))) }

// CI is the two-sided confidence interval at level 1-alpha.
func (c Contrast) CI(alpha float64) (lo, hi float64) {
	h := metrics.StudentT(c.DF).Quantile(1-alpha/2) * c.SE
	return c.Est - h, c.Est + h
}

// PEquivalent is the TOST p-value of H1: lo < true value < hi (the larger
// of the two one-sided p-values).
func (c Contrast) PEquivalent(lo, hi float64) float64 {
	return math.Max(c.PAbove(lo), c.PBelow(hi))
}

// TestVerdict is what a test says about one item.
type TestVerdict string

// Test verdicts.
const (
	TestHolds        TestVerdict = "holds"
	TestDoesNotHold  TestVerdict = "does not hold"
	TestInconclusive TestVerdict = "inconclusive"
)

// Hypothesis is what an item claims about a contrast, on the log scale
// for ratios (so a ratio r is the threshold ln r).
type Hypothesis struct {
	// Kind: "above" (the value exceeds Threshold), "below", or "within"
	// (between Lo and Hi: an equivalence claim).
	Kind      string
	Threshold float64
	Lo, Hi    float64 // for within; for above/below with Threshold 0, the band whose equivalence refutes a "beats"
}

// Equivalence margins of ±Tolerance on the log scale.
var (
	logLo = math.Log(1 - Tolerance)
	logHi = math.Log(1 + Tolerance)
)

// aboveRatio: the ratio is above r (r = 1: "beats"; refuted also by
// equivalence within ±Tolerance).
func aboveRatio(r float64) Hypothesis {
	h := Hypothesis{Kind: "above", Threshold: math.Log(r)}
	if r == 1 {
		h.Lo, h.Hi = logLo, logHi
	}
	return h
}

// belowRatio: the ratio is below r.
func belowRatio(r float64) Hypothesis {
	h := Hypothesis{Kind: "below", Threshold: math.Log(r)}
	if r == 1 {
		h.Lo, h.Hi = logLo, logHi
	}
	return h
}

// withinTolerance: the ratio is within ±Tolerance of 1.
func withinTolerance() Hypothesis { return Hypothesis{Kind: "within", Lo: logLo, Hi: logHi} }

// Decide tests h on c at level Alpha and returns the verdict with the
// p-value of the claim (small: the claim holds).
//
//   - above t: with a band (t = 0, "beats"), does not hold when TOST shows
//     equivalence inside the band (a difference, if real, too small to be
//     the claimed one); otherwise holds when H0 ≤ t is rejected, does not
//     hold when H0 ≥ t is rejected (significant the other way);
//   - below t: the mirror image;
//   - within [Lo, Hi]: holds when TOST rejects non-equivalence; does not
//     hold when the value is significantly outside the band (one-sided).
func Decide(c Contrast, h Hypothesis) (TestVerdict, float64) {
	switch h.Kind {
	case "within":
		p := c.PEquivalent(h.Lo, h.Hi)
		if p < Alpha {
			return TestHolds, p
		}
		if c.PAbove(h.Hi) < Alpha || c.PBelow(h.Lo) < Alpha {
			return TestDoesNotHold, p
		}
		return TestInconclusive, p
	case "above", "below":
		pFor, pAgainst := c.PAbove(h.Threshold), c.PBelow(h.Threshold)
		if h.Kind == "below" {
			pFor, pAgainst = pAgainst, pFor
		}
		if h.Lo < h.Hi && c.PEquivalent(h.Lo, h.Hi) < Alpha {
			return TestDoesNotHold, pFor // a difference, if any, shown to be within the band
		}
		if pFor < Alpha {
			return TestHolds, pFor
		}
		if pAgainst < Alpha {
			return TestDoesNotHold, pFor
		}
		return TestInconclusive, pFor
	}
	panic("report: unknown hypothesis kind " + h.Kind)
}

// logs returns the natural logarithms of xs; ok is false when a value is
// not positive (a ratio cannot be formed).
func logs(xs []float64) ([]float64, bool) {
	out := make([]float64, len(xs))
	for i, x := range xs {
		if !(x > 0) || math.IsInf(x, 0) {
			return nil, false
		}
		out[i] = math.Log(x)
	}
	return out, true
}

// FormatP prints a p-value.
func FormatP(p float64) string {
	switch {
	case math.IsNaN(p):
		return "–"
	case p < 0.001:
		return "p<0.001"
	}
	return fmt.Sprintf("p=%.3f", p)
}
