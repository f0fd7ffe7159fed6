package model

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// FitResult is a least-squares fit of one form to a set of observations.
type FitResult struct {
	Form      Form        // the form with the fitted values
	Params    []Param     // values and standard errors, seconds
	Cov       [][]float64 // covariance of the estimates, s²
	Options   FitOptions
	N         int     // observations
	DF        int     // residual degrees of freedom, N - len(Params)
	R2        float64 // (weighted) coefficient of determination of B
	AdjR2     float64
	RSE       float64 // residual standard error: relative (Relative weighting) or seconds (none)
	RelRMS    float64 // root mean square of (measured - model)/measured 1/B (received throughput for Capacity)
	MaxRelErr float64 // largest |measured - model|/measured 1/B
	AIC       float64 // Gaussian AIC of the weighted fit, k = parameters + 1 (the variance)
	AICc      float64 // small-sample AIC; NaN when N < k + 2
	// Condition is the condition number of the column-equilibrated
	// weighted design matrix; Collinear, when it exceeds collinearTol,
	// says which parameters the data barely tell apart.
	Condition float64
	Collinear string
}

// collinearTol is the condition number above which a fit is reported as
// nearly collinear: Belsley, Kuh and Welsch's threshold for a
// near-dependency strong enough to inflate the standard errors.
const collinearTol = 30

// collinearity explains the weakest direction of the design: the
// parameters whose variance comes mostly (more than half, Belsley's
// variance-decomposition proportions) from the smallest singular value.
// It returns "" when the condition number is within collinearTol.
func collinearity(ps []Param, V *mat.Dense, sv []float64) (cond float64, why string) {
	p := len(sv)
	cond = sv[0] / sv[p-1]
	if cond <= collinearTol {
		return cond, ""
	}
	var involved []string
	for j := range p {
		var total float64
		for k := range p {
			total += V.At(j, k) * V.At(j, k) / (sv[k] * sv[k])
		}
		share := V.At(j, p-1) * V.At(j, p-1) / (sv[p-1] * sv[p-1]) / total
		if share > 0.5 {
			involved = append(involved, fmt.Sprintf("%s (%.0f %% of its variance)", ps[j].Symbol, 100*share))
		}
	}
	return cond, fmt.Sprintf("nearly collinear (condition number %.0f > %d): these observations barely separate %s; their values trade off against each other and their standard errors are inflated",
		cond, collinearTol, strings.Join(involved, " and "))
}

// ErrTooFew means there are not more observations than parameters.
var ErrTooFew = errors.New("too few observations")

// NotIdentifiableError means the design matrix is rank-deficient: one
// parameter's regressor is (numerically) a linear combination of the
// earlier ones in these observations, so the data cannot tell them apart.
type NotIdentifiableError struct {
	Form, Param, Regressor string
	Detail                 string // what the observations look like
	Hint                   string
}

func (e *NotIdentifiableError) Error() string {
	return fmt.Sprintf("%s: %s is not identifiable: %s; refusing to fit (%s)", e.Form, e.Param, e.Detail, e.Hint)
}

// rankTol is the smallest singular value, relative to the largest, of the
// column-equilibrated weighted design matrix that still counts as full rank.
const rankTol = 1e-9

// FitWith fits form f (one of Fiorano, SunMQ, WebsphereMQ) to obs by
// weighted linear least squares on B. It refuses (returns an error) when
// there are not more observations than parameters, when an observation
// has no usable response, and when the design matrix is rank-deficient.
func FitWith(f Form, obs []Observation, opt FitOptions) (*FitResult, error) {
	lf, ok := f.(linear)
	if !ok {
		return nil, fmt.Errorf("form %T cannot be fitted by this package", f)
	}
	opt, err := opt.normalize()
	if err != nil {
		return nil, err
	}
	ps := lf.params()
	n, p := len(obs), len(ps)
	if n <= p {
		return nil, fmt.Errorf("%w: form %s has %d parameters and needs at least %d observations for standard errors, got %d",
			ErrTooFew, f.Name(), p, p+1, n)
	}
	X := mat.NewDense(n, p, nil)  // unweighted design, for diagnostics
	Xw := mat.NewDense(n, p, nil) // sqrt(w)·X
	y := make([]float64, n)
	w := make([]float64, n)
	yw := mat.NewVecDense(n, nil)
	for i, o := range obs {
		b, err := o.ServiceTime(opt.Response)
		if err != nil {
			return nil, err
		}
		y[i] = b
		w[i] = 1
		if opt.Weighting == Relative {
			w[i] = 1 / (b * b)
		}
		sw := math.Sqrt(w[i])
		for j, v := range lf.row(o.Point()) {
			X.Set(i, j, v)
			Xw.Set(i, j, sw*v)
		}
		yw.SetVec(i, sw*b)
	}
	// Equilibrate columns so the rank test does not depend on units, and
	// test each parameter in turn against the ones before it.
	scale := make([]float64, p)
	Xs := mat.DenseCopyOf(Xw)
	for j := range p {
		scale[j] = mat.Norm(Xw.ColView(j), 2)
		if scale[j] == 0 {
			return nil, notIdentifiable(lf, X, j)
		}
		col := Xs.ColView(j).(*mat.VecDense)
		col.ScaleVec(1/scale[j], col)
		if j == 0 {
			continue
		}
		var s mat.SVD
		if !s.Factorize(Xs.Slice(0, n, 0, j+1), mat.SVDNone) {
			return nil, fmt.Errorf("%s: singular value decomposition failed", f.Name())
		}
		v := s.Values(nil)
		if v[len(v)-1] <= rankTol*v[0] {
			return nil, notIdentifiable(lf, X, j)
		}
	}
	var svd mat.SVD
	if !svd.Factorize(Xs, mat.SVDThin) {
		return nil, fmt.Errorf("%s: singular value decomposition failed", f.Name())
	}
	var bs mat.Dense
	svd.SolveTo(&bs, yw, p)
	theta := make([]float64, p)
	for j := range p {
		theta[j] = bs.At(j, 0) / scale[j]
	}
	// (XsᵀXs)⁻¹ = V S⁻² Vᵀ; (XwᵀXw)⁻¹ = D⁻¹ V S⁻² Vᵀ D⁻¹.
	var V mat.Dense
	svd.VTo(&V)
	sv := svd.Values(nil)
	res := &FitResult{Form: lf.with(theta), Options: opt, N: n, DF: n - p}
	var sse, swy, sw float64
	var relSS float64
	for i, o := range obs {
		e := y[i] - dot(lf.row(o.Point()), theta)
		sse += w[i] * e * e
		swy += w[i] * y[i]
		sw += w[i]
		// received throughput: measured 1/y, model 1/(y-e)
		rel := 1 - y[i]/(y[i]-e)
		relSS += rel * rel
		res.MaxRelErr = math.Max(res.MaxRelErr, math.Abs(rel))
	}
	ybar := swy / sw
	var sst float64
	for i := range y {
		d := y[i] - ybar
		sst += w[i] * d * d
	}
	sigma2 := sse / float64(n-p)
	res.RSE = math.Sqrt(sigma2)
	res.RelRMS = math.Sqrt(relSS / float64(n))
	if sst > 0 {
		res.R2 = 1 - sse/sst
		res.AdjR2 = 1 - (1-res.R2)*float64(n-1)/float64(n-p)
	}
	res.Cov = make([][]float64, p)
	for a := range p {
		res.Cov[a] = make([]float64, p)
		for b := range p {
			c := 0.0
			for k := range p {
				c += V.At(a, k) * V.At(b, k) / (sv[k] * sv[k])
			}
			res.Cov[a][b] = sigma2 * c / (scale[a] * scale[b])
		}
	}
	res.Params = res.Form.Params()
	for j := range res.Params {
		res.Params[j].StdErr = math.Sqrt(res.Cov[j][j])
	}
	res.AIC, res.AICc = aic(n, p, sse, w)
	res.Condition, res.Collinear = collinearity(ps, &V, sv)
	return res, nil
}

// aic is the Gaussian AIC of a weighted fit with error variances σ²/w_i,
// σ² at its maximum-likelihood value SSE/n; k counts σ² too.
func aic(n, p int, sse float64, w []float64) (aic, aicc float64) {
	k := float64(p + 1)
	nf := float64(n)
	sumLogW := 0.0
	for _, v := range w {
		sumLogW += math.Log(v)
	}
	if sse <= 0 {
		sse = math.SmallestNonzeroFloat64
	}
	aic = nf*math.Log(2*math.Pi*sse/nf) + nf - sumLogW + 2*k
	aicc = math.NaN()
	if nf-k-1 > 0 {
		aicc = aic + 2*k*(k+1)/(nf-k-1)
	}
	return aic, aicc
}

// notIdentifiable explains why column j of X adds nothing to columns 0..j-1.
func notIdentifiable(lf linear, X *mat.Dense, j int) error {
	ps := lf.params()
	n, _ := X.Dims()
	col := mat.Col(nil, j, X)
	e := &NotIdentifiableError{Form: lf.Name(), Param: ps[j].Symbol, Regressor: ps[j].Regressor, Hint: lf.hint()}
	constant := true
	for _, v := range col {
		if v != col[0] {
			constant = false
		}
	}
	var earlier []string
	for _, q := range ps[:j] {
		earlier = append(earlier, q.Regressor)
	}
	switch {
	case constant && col[0] == 0:
		e.Detail = fmt.Sprintf("%s is 0 in all %d observations", ps[j].Regressor, n)
	case constant:
		e.Detail = fmt.Sprintf("%s is %g in all %d observations, so %s cannot be told apart from t_rcv", ps[j].Regressor, col[0], n, ps[j].Symbol)
	default:
		e.Detail = fmt.Sprintf("in these %d observations %s is a linear combination of %s, so the data cannot separate %s from %s",
			n, ps[j].Regressor, strings.Join(earlier, ", "), ps[j].Symbol, symbols(ps[:j]))
	}
	return e
}

func symbols(ps []Param) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.Symbol
	}
	return strings.Join(s, ", ")
}
