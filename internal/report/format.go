package report

import (
	"fmt"
	"math"
	"strconv"
)

// FormatNum prints a measured or published number with a precision that
// suits its size: 3361, 78.4, 1.25, 0.012.
func FormatNum(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "–"
	case v == 0:
		return "0"
	case a >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 0.1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
}

// FormatStat prints "mean ± half-width", "mean (n=1, no CI)" for a single
// repetition, or "–" without data.
func FormatStat(s Stat) string {
	switch {
	case !s.Valid():
		return "–"
	case s.N < 2 || math.IsNaN(s.CI):
		return FormatNum(s.Mean) + " (n=1, no CI)"
	}
	return FormatNum(s.Mean) + " ± " + FormatNum(s.CI)
}

// FormatRatio prints a ratio as "×0.057".
func FormatRatio(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return "–"
	}
	a := math.Abs(r)
	switch {
	case a >= 100:
		return fmt.Sprintf("×%.0f", r)
	case a >= 10:
		return fmt.Sprintf("×%.1f", r)
	case a >= 0.995: // ×1.00, not ×1 (two significant digits would round it)
		return fmt.Sprintf("×%.2f", r)
	}
	return fmt.Sprintf("×%.2g", r) // two significant digits: ×0.56, ×0.095
}

// Ratio is b/a, NaN when either is missing or a is zero.
func Ratio(b, a float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) || a == 0 {
		return math.NaN()
	}
	return b / a
}
