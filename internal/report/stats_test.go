package report

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Reference values computed with SciPy 1.x (python3 -m pip install scipy):
//
//	from scipy import stats
//	a = [1.0, 2.0, 3.0, 4.0]; b = [2.5, 3.5, 4.5, 6.0, 7.0]
//	stats.ttest_ind(b, a, equal_var=False)  # t 2.1153194253318914, p 0.07252100711561206, df 6.946661847188643
//	stats.ttest_ind(b, a, equal_var=False, alternative='greater').pvalue  # 0.03626050355780603
//	stats.ttest_1samp([0.1, 0.3, -0.05, 0.2], 0.0)  # t 1.8418803882136277, p 0.1627331098242935
//	a = [10, 10.2, 9.9]; b = [10.1, 10.0, 10.3]   # TOST of b-a within ±0.5: max of the one-sided p-values
//	max(stats.ttest_ind(b, a-0.5, equal_var=False, alternative='greater').pvalue,
//	    stats.ttest_ind(b, a+0.5, equal_var=False, alternative='less').pvalue)  # 0.016338961668401653
//	stats.ttest_ind(b, a, equal_var=False).confidence_interval(0.95)  # (-0.2462835445611875, 0.44628354456119035)
func TestWelchAgainstSciPy(t *testing.T) {
	c, err := NewContrast([][]float64{{1, 2, 3, 4}, {2.5, 3.5, 4.5, 6, 7}}, []float64{-1, 1})
	require.NoError(t, err)
	assert.InDelta(t, 2.1153194253318914, c.Est/c.SE, 1e-9)
	assert.InDelta(t, 6.946661847188643, c.DF, 1e-9)
	assert.InDelta(t, 0.07252100711561206, c.PTwoSided(), 1e-6)
	assert.InDelta(t, 0.03626050355780603, c.PAbove(0), 1e-6)
	assert.InDelta(t, 1-0.03626050355780603, c.PBelow(0), 1e-6)
}

func TestOneSampleAgainstSciPy(t *testing.T) {
	c, err := NewContrast([][]float64{{0.1, 0.3, -0.05, 0.2}}, []float64{1})
	require.NoError(t, err)
	assert.InDelta(t, 1.8418803882136277, c.Est/c.SE, 1e-9)
	assert.InDelta(t, 3, c.DF, 1e-9)
	assert.InDelta(t, 0.1627331098242935, c.PTwoSided(), 1e-6)
}

func TestTOSTAndCIAgainstSciPy(t *testing.T) {
	c, err := NewContrast([][]float64{{10, 10.2, 9.9}, {10.1, 10.0, 10.3}}, []float64{-1, 1})
	require.NoError(t, err)
	assert.InDelta(t, 0.016338961668401653, c.PEquivalent(-0.5, 0.5), 1e-6)
	lo, hi := c.CI(0.05)
	assert.InDelta(t, -0.2462835445611875, lo, 1e-6)
	assert.InDelta(t, 0.44628354456119035, hi, 1e-6)
}

func TestContrastNeedsTwoRepetitions(t *testing.T) {
	_, err := NewContrast([][]float64{{1}, {2, 3}}, []float64{-1, 1})
	assert.ErrorContains(t, err, "at least 2")
	_, err = NewContrast([][]float64{{1, math.NaN()}}, []float64{1})
	assert.Error(t, err)
}

// Decide: each hypothesis kind gives each of its three verdicts on
// samples built for it (log values of ratios).
func TestDecideVerdicts(t *testing.T) {
	lg := func(xs ...float64) []float64 {
		out, ok := Logs(xs)
		require.True(t, ok)
		return out
	}
	two := func(a, b []float64) Contrast {
		c, err := NewContrast([][]float64{a, b}, []float64{-1, 1})
		require.NoError(t, err)
		return c
	}
	base := lg(100, 101, 99, 100.5)
	double := lg(200, 203, 198, 201)
	same := lg(100.2, 100.8, 99.4, 100)
	noisy := lg(60, 150, 90, 180)
	cases := []struct {
		name string
		c    Contrast
		h    Hypothesis
		want TestVerdict
	}{
		{"beats: clearly above", two(base, double), AboveRatio(1, 0.1), TestHolds},
		{"beats: clearly below", two(double, base), AboveRatio(1, 0.1), TestDoesNotHold},
		{"beats: equal within the margin", two(base, same), AboveRatio(1, 0.1), TestDoesNotHold},
		{"beats: too noisy", two(base, noisy), AboveRatio(1, 0.1), TestInconclusive},
		{"cuts: clearly below", two(double, base), BelowRatio(1, 0.1), TestHolds},
		{"similar: equal", two(base, same), WithinRatio(0.1), TestHolds},
		{"similar: double", two(base, double), WithinRatio(0.1), TestDoesNotHold},
		{"similar: too noisy", two(base, noisy), WithinRatio(0.1), TestInconclusive},
		{"at least 1.5: double", two(base, double), AboveRatio(1.5, 0.1), TestHolds},
		{"at least 3: double", two(base, double), AboveRatio(3, 0.1), TestDoesNotHold},
	}
	for _, tc := range cases {
		v, p := Decide(tc.c, tc.h)
		assert.Equal(t, tc.want, v, "%s (p %.4f)", tc.name, p)
		if v == TestHolds {
			assert.Less(t, p, Alpha, tc.name)
		} else {
			assert.GreaterOrEqual(t, p, Alpha, tc.name)
		}
	}
}
