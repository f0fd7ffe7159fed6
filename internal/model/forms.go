package model

import (
	"fmt"
	"math"
)

// Fiorano is the FioranoMQ model (paper 000, Eq. (1); paper 001 §2.2.1):
// B = t_rcv + n_fltr·t_fltr + r·t_tx.
type Fiorano struct {
	TRcv  float64 // per received message, s
	TFltr float64 // per installed filter checked, s
	TTx   float64 // per dispatched copy, s
}

// Name implements Form.
func (Fiorano) Name() string { return "fiorano" }

// Equation implements Form.
func (Fiorano) Equation() string { return "B = t_rcv + n_fltr·t_fltr + r·t_tx" }

func (Fiorano) params() []Param {
	return []Param{
		{Symbol: "t_rcv", Regressor: "1", Meaning: "per received message"},
		{Symbol: "t_fltr", Regressor: "n_fltr", Meaning: "per installed filter, per message"},
		{Symbol: "t_tx", Regressor: "r", Meaning: "per dispatched copy (replication)"},
	}
}

// Params implements Form.
func (f Fiorano) Params() []Param { return withValues(f.params(), []float64{f.TRcv, f.TFltr, f.TTx}) }

// ServiceTime implements Form.
func (f Fiorano) ServiceTime(nFltr, r float64) float64 {
	return dot(f.row(Point{NFilters: nFltr, R: r}), []float64{f.TRcv, f.TFltr, f.TTx})
}

// Fit implements Form.
func (f Fiorano) Fit(obs []Observation) (*FitResult, error) { return FitWith(f, obs, FitOptions{}) }

func (Fiorano) row(p Point) []float64 { return []float64{1, p.NFilters, p.R} }
func (Fiorano) with(t []float64) linear {
	return Fiorano{TRcv: t[0], TFltr: t[1], TTx: t[2]}
}
func (Fiorano) hint() string {
	return "vary the number of filters and the replication grade independently (Henjes et al. used n_fltr = n + r with n and r swept separately)"
}

// FilterMix says how many of the installed filters are distinct when a
// SunMQ point does not say (Point.NDistinct = 0).
type FilterMix string

// Filter mixes (paper 001 §2.2.2 distinguishes the two).
const (
	AllDifferent FilterMix = "different" // n_diff = n_fltr
	AllIdentical FilterMix = "identical" // n_diff = 1
)

// SunMQ is the SunMQ model (paper 001 §2.2.2, Eq. (2)):
// B = t_rcv + n_all·t_fltr^all + n_diff·t_fltr^diff + r·t_tx, where n_all is
// the number of installed filters and n_diff the number of different ones.
type SunMQ struct {
	TRcv      float64
	TFltrAll  float64 // per installed filter, s
	TFltrDiff float64 // extra per different filter, s
	TTx       float64
	// Mix fills in n_diff where a point or observation does not carry it;
	// default AllDifferent.
	Mix FilterMix
}

// Name implements Form.
func (SunMQ) Name() string { return "sunmq" }

// Equation implements Form.
func (s SunMQ) Equation() string {
	return fmt.Sprintf("B = t_rcv + n_fltr·t_fltr_all + n_diff·t_fltr_diff + r·t_tx (n_diff unknown: all %s)", s.mix())
}

func (SunMQ) params() []Param {
	return []Param{
		{Symbol: "t_rcv", Regressor: "1", Meaning: "per received message"},
		{Symbol: "t_fltr_all", Regressor: "n_fltr", Meaning: "per installed filter, per message"},
		{Symbol: "t_fltr_diff", Regressor: "n_diff", Meaning: "extra per different filter, per message"},
		{Symbol: "t_tx", Regressor: "r", Meaning: "per dispatched copy (replication)"},
	}
}

// Params implements Form.
func (s SunMQ) Params() []Param {
	return withValues(s.params(), []float64{s.TRcv, s.TFltrAll, s.TFltrDiff, s.TTx})
}

// ServiceTime implements Form, with n_diff from Mix.
func (s SunMQ) ServiceTime(nFltr, r float64) float64 {
	return s.ServiceTimeDistinct(nFltr, 0, r)
}

// ServiceTimeDistinct is B for nAll installed filters of which nDiff are
// different (0 = from Mix).
func (s SunMQ) ServiceTimeDistinct(nAll, nDiff, r float64) float64 {
	return dot(s.row(Point{NFilters: nAll, NDistinct: nDiff, R: r}), []float64{s.TRcv, s.TFltrAll, s.TFltrDiff, s.TTx})
}

// Fit implements Form.
func (s SunMQ) Fit(obs []Observation) (*FitResult, error) { return FitWith(s, obs, FitOptions{}) }

func (s SunMQ) mix() FilterMix {
	if s.Mix == "" {
		return AllDifferent
	}
	return s.Mix
}

func (s SunMQ) row(p Point) []float64 {
	d := p.NDistinct
	if d <= 0 {
		d = p.NFilters
		if s.mix() == AllIdentical {
			d = math.Min(1, p.NFilters)
		}
	}
	return []float64{1, p.NFilters, d, p.R}
}

func (s SunMQ) with(t []float64) linear {
	return SunMQ{TRcv: t[0], TFltrAll: t[1], TFltrDiff: t[2], TTx: t[3], Mix: s.Mix}
}

func (SunMQ) hint() string {
	return "t_fltr_all and t_fltr_diff are only separable when the number of different filters (n_diff) is recorded and varies independently of n_fltr, as in Henjes et al.'s runs with identical and with different filters; records carry no n_diff unless --distinct-from gives it"
}

// WebsphereMQ is the WebsphereMQ model (paper 003 Eq. (1); paper 001
// §2.2.3): B = t_rcv + n_fltr·√n_fltr·t_fltr. It has no replication term:
// the papers found no measurable cost per dispatched copy up to r = 40.
type WebsphereMQ struct {
	TRcv  float64
	TFltr float64
}

// Name implements Form.
func (WebsphereMQ) Name() string { return "websphere" }

// Equation implements Form.
func (WebsphereMQ) Equation() string { return "B = t_rcv + n_fltr·√n_fltr·t_fltr" }

func (WebsphereMQ) params() []Param {
	return []Param{
		{Symbol: "t_rcv", Regressor: "1", Meaning: "per received message"},
		{Symbol: "t_fltr", Regressor: "n_fltr^1.5", Meaning: "filter coefficient (the n-th filter adds 1.5·√n·t_fltr)"},
	}
}

// Params implements Form.
func (w WebsphereMQ) Params() []Param { return withValues(w.params(), []float64{w.TRcv, w.TFltr}) }

// ServiceTime implements Form; r is ignored by this form.
func (w WebsphereMQ) ServiceTime(nFltr, _ float64) float64 {
	return dot(w.row(Point{NFilters: nFltr}), []float64{w.TRcv, w.TFltr})
}

// Fit implements Form.
func (w WebsphereMQ) Fit(obs []Observation) (*FitResult, error) { return FitWith(w, obs, FitOptions{}) }

func (WebsphereMQ) row(p Point) []float64 {
	return []float64{1, p.NFilters * math.Sqrt(p.NFilters)}
}
func (WebsphereMQ) with(t []float64) linear { return WebsphereMQ{TRcv: t[0], TFltr: t[1]} }
func (WebsphereMQ) hint() string            { return "vary the number of filters" }

func withValues(ps []Param, v []float64) []Param {
	for i := range ps {
		ps[i].Value = v[i]
	}
	return ps
}
