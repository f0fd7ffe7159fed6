package model

import (
	"fmt"
	"math"
)

// Report is the machine-readable outcome of fitting groups of
// observations: what `pslab model fit --format json` prints and `pslab
// model predict --broker-params` reads back.
type Report struct {
	Response  Response      `json:"response"`
	Weighting Weighting     `json:"weighting"`
	Sources   []string      `json:"sources"`
	Records   int           `json:"records"`
	Skipped   []ReasonCount `json:"skipped"`
	// SkippedRuns lists every record left out, with the reason.
	SkippedRuns []Skip        `json:"skipped_runs,omitempty"`
	Groups      []GroupReport `json:"groups"`
}

// GroupReport is one broker over one network.
type GroupReport struct {
	Broker    string      `json:"broker"`
	Network   string      `json:"network"`
	Filter    string      `json:"filter,omitempty"`
	N         int         `json:"n"`
	BrokerCPU float64     `json:"mean_broker_cpu,omitempty"` // mean over the observations, cores
	Best      string      `json:"best,omitempty"`
	Criterion string      `json:"criterion"`
	Why       string      `json:"why"`
	Fits      []FitReport `json:"fits"`
}

// FitReport is one form's fit, or why it was refused (Error).
type FitReport struct {
	Form      string      `json:"form"`
	Equation  string      `json:"equation"`
	Mix       FilterMix   `json:"mix,omitempty"` // SunMQ only
	Error     string      `json:"error,omitempty"`
	Params    []Param     `json:"params,omitempty"`
	Cov       [][]float64 `json:"cov,omitempty"` // s²
	N         int         `json:"n,omitempty"`
	DF        int         `json:"df,omitempty"`
	R2        float64     `json:"r2,omitempty"`
	AdjR2     float64     `json:"adj_r2,omitempty"`
	RSE       float64     `json:"rse,omitempty"`
	RelRMS    float64     `json:"rel_rms,omitempty"`
	MaxRelErr float64     `json:"max_rel_err,omitempty"`
	AIC       float64     `json:"aic,omitempty"`
	AICc      *float64    `json:"aicc,omitempty"`      // absent when undefined
	Delta     *float64    `json:"delta,omitempty"`     // criterion minus the best form's
	Condition float64     `json:"condition,omitempty"` // of the equilibrated design
	Collinear string      `json:"collinear,omitempty"` // a near-dependency, in words
}

// NewGroupReport summarises a fitted group.
func NewGroupReport(g Group) GroupReport {
	gr := GroupReport{Broker: g.Broker, Network: g.Network, Filter: g.Filter, N: len(g.Obs), Best: g.Best, Criterion: g.Criterion, Why: g.Why}
	for _, o := range g.Obs {
		gr.BrokerCPU += o.BrokerCPU / float64(len(g.Obs))
	}
	for _, c := range g.Fits {
		gr.Fits = append(gr.Fits, NewFitReport(c))
	}
	return gr
}

// NewFitReport summarises one candidate.
func NewFitReport(c Candidate) FitReport {
	fr := FitReport{Form: c.Form}
	if c.Err != nil {
		fr.Error = c.Err.Error()
		return fr
	}
	f := c.Fit
	fr.Equation = f.Form.Equation()
	if s, ok := f.Form.(SunMQ); ok {
		fr.Mix = s.mix()
	}
	fr.Params, fr.Cov, fr.N, fr.DF = f.Params, f.Cov, f.N, f.DF
	fr.R2, fr.AdjR2, fr.RSE, fr.RelRMS, fr.MaxRelErr, fr.AIC = f.R2, f.AdjR2, f.RSE, f.RelRMS, f.MaxRelErr, f.AIC
	fr.Condition, fr.Collinear = f.Condition, f.Collinear
	if !math.IsNaN(f.AICc) {
		v := f.AICc
		fr.AICc = &v
	}
	if !math.IsNaN(c.Delta) {
		d := c.Delta
		fr.Delta = &d
	}
	return fr
}

// Restore rebuilds the fitted form and its covariance from a report.
func (fr FitReport) Restore() (Form, [][]float64, error) {
	if fr.Error != "" {
		return nil, nil, fmt.Errorf("form %s was not fitted: %s", fr.Form, fr.Error)
	}
	v := make([]float64, len(fr.Params))
	for i, p := range fr.Params {
		v[i] = p.Value
	}
	f, err := NewForm(fr.Form, v)
	if err != nil {
		return nil, nil, err
	}
	if s, ok := f.(SunMQ); ok && fr.Mix != "" {
		if fr.Mix != AllDifferent && fr.Mix != AllIdentical {
			return nil, nil, fmt.Errorf("sunmq: unknown filter mix %q", fr.Mix)
		}
		s.Mix = fr.Mix
		f = s
	}
	if fr.Cov != nil {
		if len(fr.Cov) != len(v) {
			return nil, nil, fmt.Errorf("form %s: covariance has %d rows, want %d", fr.Form, len(fr.Cov), len(v))
		}
		for i, row := range fr.Cov {
			if len(row) != len(v) {
				return nil, nil, fmt.Errorf("form %s: covariance row %d has %d entries, want %d", fr.Form, i, len(row), len(v))
			}
		}
	}
	return f, fr.Cov, nil
}
