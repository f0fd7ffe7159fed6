package capacity

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// search runs Replay against a threshold: a load is sustained when it is
// at most capacity. It returns the final state and the probes run.
func search(t *testing.T, p SearchParams, capacity float64) (State, []Step) {
	t.Helper()
	return runSearch(t, p, func(x float64, _ int) bool { return x <= capacity })
}

// TestSearchBracketsTheCapacity: from starts far below, near and far
// above the capacity, the search ramps, then bisects until the highest
// sustained and the lowest failing load are within the resolution, with
// the capacity between them.
func TestSearchBracketsTheCapacity(t *testing.T) {
	const c = 12345.0
	for _, start := range []float64{10, 1000, 12000, 13000, 1e6} {
		for _, step := range []float64{0.05, 0.25, 1} {
			p := SearchParams{Start: start, Step: step, Resolution: 0.02, Min: 1, Max: 1e7, MaxProbes: 40}
			st, steps := search(t, p, c)
			assert.Equal(t, Bracketed, st.Outcome, "start %g step %g", start, step)
			assert.LessOrEqual(t, st.Lo, c)
			assert.Greater(t, st.Hi, c)
			assert.LessOrEqual(t, st.Hi/st.Lo, 1.02+1e-9)
			assert.InDelta(t, 1, st.Estimate()/c, 0.02, "the estimate is within the resolution")
			assert.LessOrEqual(t, len(steps), 25, "start %g step %g: %d probes", start, step, len(steps))
			assert.Equal(t, steps[st.LoStep].Load, st.Lo)
			assert.Equal(t, steps[st.HiStep].Load, st.Hi)
		}
	}
}

// TestSearchNearStartIsCheap: a start within 5 % of the capacity with a
// 5 % step brackets it to 2 % in at most 4 probes (the counted searches'
// cost in docs/capacity.md).
func TestSearchNearStartIsCheap(t *testing.T) {
	for _, off := range []float64{0.96, 0.99, 1.01, 1.04} {
		p := SearchParams{Start: 1000 * off, Step: 0.05, Resolution: 0.02, Min: 1, Max: 1e6, MaxProbes: 14}
		st, steps := search(t, p, 1000)
		assert.Equal(t, Bracketed, st.Outcome)
		assert.LessOrEqual(t, len(steps), 4, "start ×%g: %v", off, steps)
	}
}

// TestSearchEnds: a capacity below the lowest load, above the highest,
// or a search out of probes end with their outcome.
func TestSearchEnds(t *testing.T) {
	p := SearchParams{Start: 100, Step: 1, Resolution: 0.02, Min: 10, Max: 1000, MaxProbes: 20}
	st, steps := search(t, p, 1)
	assert.Equal(t, BelowMin, st.Outcome)
	assert.Equal(t, 10.0, steps[len(steps)-1].Load, "the lowest load is probed before giving up")
	assert.Zero(t, st.Estimate())

	st, steps = search(t, p, 1e9)
	assert.Equal(t, AboveMax, st.Outcome)
	assert.Equal(t, 1000.0, steps[len(steps)-1].Load)
	assert.Equal(t, 1000.0, st.Estimate(), "a lower bound")

	p.MaxProbes = 3
	st, steps = search(t, p, 150)
	assert.Equal(t, MaxProbes, st.Outcome)
	assert.Len(t, steps, 3)
}

// TestSearchNoisyVerdictsStayInBracket: whatever the verdicts, a
// bisection probe lies strictly inside the bracket and the bracket only
// narrows.
func TestSearchNoisyVerdictsStayInBracket(t *testing.T) {
	p := SearchParams{Start: 1000, Step: 0.25, Resolution: 0.01, Min: 1, Max: 1e6, MaxProbes: 60}
	verdicts := []bool{true, false, true, true, false, false, true, false, true, true, false, true}
	var steps []Step
	lo, hi := 0.0, math.Inf(1)
	for i := 0; ; i++ {
		st := Replay(p, steps)
		if st.Done {
			break
		}
		if st.Phase == PhaseBisect {
			assert.Greater(t, st.Next, st.Lo)
			assert.Less(t, st.Next, st.Hi)
			assert.GreaterOrEqual(t, st.Lo, lo)
			assert.LessOrEqual(t, st.Hi, hi)
			lo, hi = st.Lo, st.Hi
		}
		steps = append(steps, Step{Load: st.Next, Sustained: verdicts[i%len(verdicts)]})
	}
}
