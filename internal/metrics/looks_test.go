package metrics

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLooksAndCorrectedInterval: the looks of a rule from min to max
// repetitions (never below 2, at least 1), each at 1 − 0.05/K, and the
// interval at that level scales the plain one by the quantiles' ratio.
func TestLooksAndCorrectedInterval(t *testing.T) {
	assert.Equal(t, 8, Looks(3, 10))
	assert.Equal(t, 9, Looks(1, 10), "one value has no interval: the first look is at 2")
	assert.Equal(t, 1, Looks(12, 10), "a minimum above the cap: one look")
	assert.InDelta(t, 0.99375, LooksLevel(8), 1e-12)
	assert.InDelta(t, 0.95, LooksLevel(1), 1e-12)

	xs := []float64{1, 2, 3, 2}
	m, h95 := MeanCI95(xs)
	m2, h := MeanCI(xs, 0.95)
	assert.Equal(t, m, m2)
	assert.Equal(t, h95, h)
	_, h = MeanCI(xs, 0.99375)
	q := StudentT(3).Quantile(1 - 0.05/16)
	assert.InDelta(t, h95/T975(3)*q, h, 1e-12)
	_, h = MeanCI([]float64{1}, 0.99)
	assert.True(t, math.IsNaN(h))

	// cv 3 %, ±5 %: 4 repetitions at 95 %, 7 at 1 − 0.05/8.
	assert.Equal(t, 4, RepsFor(0.03, 0.05, 3, 100))
	assert.Equal(t, 7, RepsForLevel(0.03, 0.05, LooksLevel(8), 3, 100))
}
