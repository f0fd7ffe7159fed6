// Package model holds the broker service-time models of Henjes et al.
// (papers 000, 001, 003 in /work/shared/papers) and fits them to pslab's
// measurements by linear least squares.
//
// The models describe the broker's processing time B per received message
// as a function of the number of installed filters n_fltr and the mean
// replication grade r (deliveries per received message):
//
//	FioranoMQ    B = t_rcv + n_fltr·t_fltr + r·t_tx
//	SunMQ        B = t_rcv + n_all·t_fltr^all + n_diff·t_fltr^diff + r·t_tx
//	WebsphereMQ  B = t_rcv + n_fltr·√n_fltr·t_fltr
//
// At capacity one message is received and r are dispatched per B, so the
// received throughput is 1/B, the dispatched r/B and the overall (r+1)/B.
// All times are in seconds; the command line prints microseconds.
package model

import (
	"fmt"
	"math"
)

// Param is one model parameter: a time per unit of its regressor.
type Param struct {
	Symbol    string  `json:"symbol"`    // e.g. "t_fltr"
	Regressor string  `json:"regressor"` // what it multiplies: "1", "n_fltr", "r", ...
	Meaning   string  `json:"meaning"`
	Value     float64 `json:"value_s"`            // seconds
	StdErr    float64 `json:"stderr_s,omitempty"` // seconds; 0 = not known (published values)
}

// Point is where a model is evaluated: the filters installed, the distinct
// ones among them (SunMQ only; 0 = decided by the form's FilterMix) and the
// replication grade.
type Point struct {
	NFilters  float64 `json:"n_fltr"`
	NDistinct float64 `json:"n_diff,omitempty"`
	R         float64 `json:"r"`
}

// Form is one published model form with parameter values (published or
// fitted). Fit estimates new values from observations with the default
// FitOptions (see FitWith).
type Form interface {
	// Name is the short name: "fiorano", "sunmq" or "websphere".
	Name() string
	// Equation is the model in plain text.
	Equation() string
	// Params are the parameter values, in the order of the equation.
	Params() []Param
	// ServiceTime is B in seconds for nFltr filters and replication grade r.
	ServiceTime(nFltr, r float64) float64
	// Fit estimates the parameters from obs (capacity response, relative
	// weighting). It refuses, with an error, data that cannot identify
	// every parameter.
	Fit(obs []Observation) (*FitResult, error)
}

// linear is what the least-squares engine needs from a form: B is linear
// in the parameters, B = row(p)·θ.
type linear interface {
	Form
	row(p Point) []float64
	params() []Param // symbols, regressors and meanings (values ignored)
	with(theta []float64) linear
	hint() string // how to make the data identify every parameter
}

// FormNames lists the forms in a fixed order.
var FormNames = []string{"fiorano", "sunmq", "websphere"}

// NewForm returns the named form with the given parameter values in
// seconds (in the order of Params), or zero values when values is nil.
func NewForm(name string, values []float64) (Form, error) {
	var lf linear
	switch name {
	case "fiorano":
		lf = Fiorano{}
	case "sunmq":
		lf = SunMQ{}
	case "websphere":
		lf = WebsphereMQ{}
	default:
		return nil, fmt.Errorf("unknown model form %q (known: fiorano, sunmq, websphere)", name)
	}
	if values == nil {
		return lf, nil
	}
	if len(values) != len(lf.params()) {
		return nil, fmt.Errorf("form %s has %d parameters, got %d values", name, len(lf.params()), len(values))
	}
	for i, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("form %s: parameter %s is not a number", name, lf.params()[i].Symbol)
		}
	}
	return lf.with(values), nil
}

// Response is what is taken as the measured service time B of an
// observation.
type Response string

// Responses.
const (
	// Capacity: B = 1/received throughput, as in the papers. Meaningful
	// only when the broker, not the clients or the link, was the
	// bottleneck.
	Capacity Response = "capacity"
	// Demand: B = broker CPU seconds per received message (utilisation
	// law, D = U/X), from the broker's sampled CPU. Meaningful whether or
	// not the broker was saturated, as long as CPU is what it spends.
	Demand Response = "demand"
)

// Weighting of the least-squares fit.
type Weighting string

// Weightings.
const (
	// Relative weights each observation by 1/B², i.e. minimises the sum
	// of squared relative errors of B, which to first order are the
	// relative errors of the received, dispatched and overall throughput
	// alike. Default.
	Relative Weighting = "relative"
	// Unweighted is ordinary least squares on B (seconds).
	Unweighted Weighting = "none"
)

// FitOptions choose the response and weighting of a fit.
type FitOptions struct {
	Response  Response  // default Capacity
	Weighting Weighting // default Relative
}

func (o FitOptions) normalize() (FitOptions, error) {
	if o.Response == "" {
		o.Response = Capacity
	}
	if o.Weighting == "" {
		o.Weighting = Relative
	}
	if o.Response != Capacity && o.Response != Demand {
		return o, fmt.Errorf("unknown response %q (want capacity or demand)", o.Response)
	}
	if o.Weighting != Relative && o.Weighting != Unweighted {
		return o, fmt.Errorf("unknown weighting %q (want relative or none)", o.Weighting)
	}
	return o, nil
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
