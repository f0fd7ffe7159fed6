package model

import (
	"fmt"
	"math"
)

// Prediction is what a model says at one point. Throughputs are in msgs/s,
// B in seconds. Standard errors come from the parameter covariance of a
// fit by the delta method (first order: SE(1/B) = SE(B)/B²); they are 0
// and HasStdErr false for published values, which come without any.
type Prediction struct {
	Point
	B                float64 `json:"b_s"`
	BStdErr          float64 `json:"b_stderr_s,omitempty"`
	Received         float64 `json:"received_per_s"` // 1/B
	ReceivedStdErr   float64 `json:"received_stderr,omitempty"`
	Dispatched       float64 `json:"dispatched_per_s"` // r/B
	DispatchedStdErr float64 `json:"dispatched_stderr,omitempty"`
	Overall          float64 `json:"overall_per_s"` // (1+r)/B
	OverallStdErr    float64 `json:"overall_stderr,omitempty"`
	HasStdErr        bool    `json:"has_stderr"`
}

// Predict evaluates form f at p. cov, when not nil, is the covariance of
// f's parameters (as in FitResult.Cov) and is propagated. A point where the
// model's B is not positive (possible with fitted negative parameters far
// outside the data) is refused.
func Predict(f Form, cov [][]float64, p Point) (Prediction, error) {
	if p.NFilters < 0 || p.R < 0 || p.NDistinct < 0 || math.IsNaN(p.NFilters+p.R+p.NDistinct) {
		return Prediction{}, fmt.Errorf("bad point n_fltr=%g n_diff=%g r=%g: want non-negative numbers", p.NFilters, p.NDistinct, p.R)
	}
	if p.NDistinct > p.NFilters {
		return Prediction{}, fmt.Errorf("bad point: %g different filters out of %g", p.NDistinct, p.NFilters)
	}
	out := Prediction{Point: p}
	var x []float64
	if lf, ok := f.(linear); ok {
		x = lf.row(p)
		theta := make([]float64, len(x))
		for i, q := range f.Params() {
			theta[i] = q.Value
		}
		out.B = dot(x, theta)
		if _, ok := f.(SunMQ); ok {
			out.NDistinct = x[2] // the n_diff used, from the form's FilterMix if p had none
		}
	} else {
		out.B = f.ServiceTime(p.NFilters, p.R)
	}
	if !(out.B > 0) {
		return out, fmt.Errorf("%s: B = %.3g s at n_fltr=%g r=%g is not positive: the model does not hold there", f.Name(), out.B, p.NFilters, p.R)
	}
	out.Received = 1 / out.B
	out.Dispatched = p.R / out.B
	out.Overall = (1 + p.R) / out.B
	if cov != nil && x != nil {
		if len(cov) != len(x) {
			return out, fmt.Errorf("%s: covariance is %dx%d, want %d parameters", f.Name(), len(cov), len(cov), len(x))
		}
		v := 0.0
		for i := range x {
			if len(cov[i]) != len(x) {
				return out, fmt.Errorf("%s: covariance row %d has %d entries, want %d", f.Name(), i, len(cov[i]), len(x))
			}
			for j := range x {
				v += x[i] * cov[i][j] * x[j]
			}
		}
		out.BStdErr = math.Sqrt(math.Max(v, 0))
		rel := out.BStdErr / out.B
		out.ReceivedStdErr = out.Received * rel
		out.DispatchedStdErr = out.Dispatched * rel
		out.OverallStdErr = out.Overall * rel
		out.HasStdErr = true
	}
	return out, nil
}

// Predict evaluates the fitted form at p with its parameter uncertainty.
func (fr *FitResult) Predict(p Point) (Prediction, error) { return Predict(fr.Form, fr.Cov, p) }
