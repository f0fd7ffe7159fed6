package model

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// synth generates observations on Henjes et al.'s joint-impact grid
// (n_fltr = n + r) from form f, with relative Gaussian noise of sd noise on
// the received throughput. distinct alternates the SunMQ design: the n
// non-matching filters all equal (n_diff = 2) or all different (n+1).
func synth(f Form, noise float64, seed uint64, distinct bool) []Observation {
	rng := rand.New(rand.NewPCG(seed, 7))
	var obs []Observation
	for _, n := range gridN {
		for _, r := range gridR {
			for _, nd := range []float64{2, n + 1} {
				p := Point{NFilters: n + r, R: r}
				if distinct {
					p.NDistinct = nd
				}
				pred, err := Predict(f, nil, p)
				if err != nil {
					panic(err)
				}
				recv := pred.Received * (1 + noise*rng.NormFloat64())
				obs = append(obs, Observation{NFilters: p.NFilters, NDistinct: p.NDistinct, R: r,
					ReceivedPerSec: recv, DispatchedPerSec: r * recv, Broker: "synthetic", Source: "synth"})
				if !distinct {
					break
				}
			}
		}
	}
	return obs
}

func checkRecovered(t *testing.T, truth Form, fr *FitResult, maxRelSE map[string]float64) {
	t.Helper()
	want := truth.Params()
	for i, p := range fr.Params {
		if z := (p.Value - want[i].Value) / p.StdErr; math.Abs(z) > 4 || math.IsNaN(z) {
			t.Errorf("%s %s = %.4g ± %.2g, true %.4g (%.1f SE off)", truth.Name(), p.Symbol, p.Value, p.StdErr, want[i].Value, z)
		}
		if m, ok := maxRelSE[p.Symbol]; ok && p.StdErr > m*want[i].Value {
			t.Errorf("%s %s: SE %.2g is more than %.0f%% of %.4g", truth.Name(), p.Symbol, p.StdErr, 100*m, want[i].Value)
		}
	}
}

func TestFitRecoversPublishedFiorano(t *testing.T) {
	for _, set := range []string{"fiorano-corrid", "fiorano-appprop"} {
		truth := published(t, set)
		for seed := uint64(1); seed <= 5; seed++ {
			fr, err := truth.Fit(synth(truth, 0.03, seed, false))
			if err != nil {
				t.Fatal(err)
			}
			checkRecovered(t, truth, fr, map[string]float64{"t_fltr": 0.05, "t_tx": 0.10})
			if fr.N != 36 || fr.DF != 33 {
				t.Errorf("N=%d DF=%d", fr.N, fr.DF)
			}
			// relative weighting: RSE estimates the 3 % noise
			if fr.RSE < 0.015 || fr.RSE > 0.05 || fr.R2 < 0.95 || fr.AdjR2 > fr.R2 {
				t.Errorf("%s seed %d: RSE %.4f R2 %.4f adj %.4f", set, seed, fr.RSE, fr.R2, fr.AdjR2)
			}
			if fr.RelRMS > 0.06 {
				t.Errorf("%s: relative RMS %.3f with 3 %% noise", set, fr.RelRMS)
			}
		}
	}
}

// Noise-free data are fitted exactly, with either weighting.
func TestFitExactWithoutNoise(t *testing.T) {
	truth := published(t, "fiorano-appprop")
	for _, w := range []Weighting{Relative, Unweighted} {
		fr, err := FitWith(truth, synth(truth, 0, 1, false), FitOptions{Weighting: w})
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range fr.Params {
			if !near(p.Value, truth.Params()[i].Value, 1e-8) {
				t.Errorf("%s: %s = %.10g", w, p.Symbol, p.Value)
			}
		}
		if fr.R2 < 1-1e-12 || fr.RelRMS > 1e-9 {
			t.Errorf("%s: R2 %.15f relRMS %.3g", w, fr.R2, fr.RelRMS)
		}
	}
}

// The standard errors are calibrated: over many noisy data sets the
// scatter of the estimates matches the reported SE, and about 95 % of the
// ±1.96 SE intervals cover the truth.
func TestFitStdErrCalibrated(t *testing.T) {
	truth := published(t, "fiorano-corrid")
	const reps = 300
	var est, se []float64
	cover := 0
	for s := range uint64(reps) {
		fr, err := truth.Fit(synth(truth, 0.02, 100+s, false))
		if err != nil {
			t.Fatal(err)
		}
		p := fr.Params[1] // t_fltr
		est = append(est, p.Value)
		se = append(se, p.StdErr)
		if math.Abs(p.Value-7.02e-6) < 1.96*p.StdErr {
			cover++
		}
	}
	mean, meanSE := 0.0, 0.0
	for i := range est {
		mean += est[i] / reps
		meanSE += se[i] / reps
	}
	sd := 0.0
	for _, e := range est {
		sd += (e - mean) * (e - mean)
	}
	sd = math.Sqrt(sd / (reps - 1))
	if r := sd / meanSE; r < 0.75 || r > 1.33 {
		t.Errorf("empirical sd of t_fltr %.3g vs mean reported SE %.3g (ratio %.2f)", sd, meanSE, r)
	}
	if f := float64(cover) / reps; f < 0.88 || f > 0.99 {
		t.Errorf("95%% intervals covered the truth in %.0f%% of data sets", 100*f)
	}
}

func TestFitRecoversWebsphereAndSunMQ(t *testing.T) {
	ws := published(t, "websphere")
	fr, err := ws.Fit(synth(ws, 0.03, 3, false))
	if err != nil {
		t.Fatal(err)
	}
	checkRecovered(t, ws, fr, map[string]float64{"t_rcv": 0.05, "t_fltr": 0.05})

	sun := published(t, "sunmq")
	for seed := uint64(1); seed <= 3; seed++ {
		fr, err := sun.Fit(synth(sun, 0.01, seed, true))
		if err != nil {
			t.Fatal(err)
		}
		checkRecovered(t, sun, fr, map[string]float64{"t_tx": 0.05})
	}
}

func TestFitRefusesRankDeficient(t *testing.T) {
	fio := published(t, "fiorano-corrid")
	all := synth(fio, 0.01, 1, false)
	pick := func(keep func(o Observation) bool) []Observation {
		var out []Observation
		for _, o := range all {
			if keep(o) {
				out = append(out, o)
			}
		}
		return out
	}
	cases := []struct {
		name  string
		form  Form
		obs   []Observation
		param string
		says  string
	}{
		{"same n_fltr everywhere", fio, pick(func(o Observation) bool { return true }), "t_fltr", "n_fltr is 45 in all"},
		{"same r everywhere", fio, pick(func(o Observation) bool { return o.R == 5 }), "t_tx", "r is 5 in all"},
		// one n with r swept: n_fltr = 10 + r is collinear with 1 and r
		{"n_fltr = n + r with one n", fio, pick(func(o Observation) bool { return o.NFilters-o.R == 10 }), "t_tx", "r is a linear combination of 1, n_fltr"},
		{"no filters", published(t, "websphere"), pick(func(o Observation) bool { return o.R == 5 }), "", ""},
		{"sunmq without n_diff", published(t, "sunmq"), all, "t_fltr_diff", "linear combination"},
		{"sunmq all identical", SunMQ{Mix: AllIdentical}, all, "t_fltr_diff", ""},
	}
	for _, c := range cases {
		if c.name == "same n_fltr everywhere" {
			for i := range c.obs {
				c.obs[i].NFilters = 45
			}
		}
		if c.name == "no filters" {
			for i := range c.obs {
				c.obs[i].NFilters = 0
			}
			c.param, c.says = "t_fltr", "is 0 in all"
		}
		_, err := c.form.Fit(c.obs)
		var ni *NotIdentifiableError
		if !errors.As(err, &ni) {
			t.Errorf("%s: got %v, want NotIdentifiableError", c.name, err)
			continue
		}
		if ni.Param != c.param || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "refusing") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func TestFitRefusesTooFewAndBadResponses(t *testing.T) {
	fio := published(t, "fiorano")
	obs := synth(fio, 0, 1, false)
	if _, err := fio.Fit(obs[:3]); !errors.Is(err, ErrTooFew) {
		t.Errorf("3 observations, 3 parameters: %v", err)
	}
	if _, err := fio.Fit(nil); !errors.Is(err, ErrTooFew) {
		t.Errorf("no observations: %v", err)
	}
	bad := append([]Observation(nil), obs...)
	bad[4].ReceivedPerSec = 0
	if _, err := fio.Fit(bad); err == nil || !strings.Contains(err.Error(), "no service time") {
		t.Errorf("zero throughput: %v", err)
	}
	if _, err := FitWith(fio, obs, FitOptions{Response: Demand}); err == nil || !strings.Contains(err.Error(), "no broker CPU") {
		t.Errorf("demand without CPU: %v", err)
	}
	if _, err := FitWith(fio, obs, FitOptions{Weighting: "log"}); err == nil {
		t.Error("unknown weighting accepted")
	}
}

// Demand response: B = broker CPU / received. With the broker at 50 % of a
// core, the fitted times are half the capacity ones.
func TestFitDemandResponse(t *testing.T) {
	fio := published(t, "fiorano-corrid")
	obs := synth(fio, 0, 1, false)
	for i := range obs {
		obs[i].BrokerCPU = 0.5
	}
	fr, err := FitWith(fio, obs, FitOptions{Response: Demand})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range fr.Params {
		if !near(p.Value, 0.5*fio.Params()[i].Value, 1e-8) {
			t.Errorf("%s = %.6g, want half of %.6g", p.Symbol, p.Value, fio.Params()[i].Value)
		}
	}
}

// AICc picks the form that generated the data, and (paper 003 §IV-H2) a
// linear model does not describe WebsphereMQ.
func TestCompareSelectsGeneratingForm(t *testing.T) {
	forms := []Form{Fiorano{}, SunMQ{}, WebsphereMQ{}}
	for _, set := range []string{"fiorano-corrid", "websphere"} {
		truth := published(t, set)
		fits, best, crit, why := Compare(synth(truth, 0.03, 9, false), forms, FitOptions{})
		if best != truth.Name() || crit != "AICc" {
			t.Errorf("data from %s: best %q by %s (%s)", set, best, crit, why)
		}
		var sunErr error
		for _, c := range fits {
			if c.Form == "sunmq" {
				sunErr = c.Err
			}
			if c.Form == best && c.Delta != 0 {
				t.Errorf("best has delta %g", c.Delta)
			}
		}
		if sunErr == nil {
			t.Errorf("sunmq fitted without n_diff")
		}
	}
	ws := published(t, "websphere")
	obs := synth(ws, 0.01, 2, false)
	lin, err := Fiorano{}.Fit(obs)
	if err != nil {
		t.Fatal(err)
	}
	pow, err := WebsphereMQ{}.Fit(obs)
	if err != nil {
		t.Fatal(err)
	}
	if lin.RelRMS < 5*pow.RelRMS {
		t.Errorf("linear model on WebsphereMQ data: relative RMS %.3f vs %.3f for the n^1.5 form", lin.RelRMS, pow.RelRMS)
	}
}

func TestFitGroupsSplitsBrokers(t *testing.T) {
	a := synth(published(t, "fiorano"), 0.02, 1, false)
	b := synth(published(t, "websphere"), 0.02, 2, false)
	for i := range b {
		b[i].Broker = "artemis"
	}
	gs := FitGroups(append(a, b...), []Form{Fiorano{}, WebsphereMQ{}}, FitOptions{})
	if len(gs) != 2 || gs[0].Broker != "artemis" || gs[0].Best != "websphere" || gs[1].Best != "fiorano" {
		for _, g := range gs {
			t.Errorf("%s: best %s (%s)", g.Broker, g.Best, g.Why)
		}
	}
}

// TestFitWarnsWhenNearlyCollinear: on a design where n_fltr and r move
// almost together, the fit still runs but names t_fltr and t_tx as barely
// separable; on the papers' grid it does not warn.
func TestFitWarnsWhenNearlyCollinear(t *testing.T) {
	truth := Fiorano{TRcv: 10e-6, TFltr: 0.1e-6, TTx: 12e-6}
	var obs []Observation
	for i, r := range []float64{1, 2, 5, 10, 20, 40} {
		for _, d := range []float64{0, 1} {
			p := Point{NFilters: 5*r + d + float64(i%2), R: r}
			pred, err := Predict(truth, nil, p)
			if err != nil {
				t.Fatal(err)
			}
			recv := pred.Received * (1 + 0.01*float64(i%3-1))
			obs = append(obs, Observation{NFilters: p.NFilters, R: r, ReceivedPerSec: recv, DispatchedPerSec: r * recv})
		}
	}
	fr, err := truth.Fit(obs)
	if err != nil {
		t.Fatal(err)
	}
	if fr.Condition <= collinearTol || !strings.Contains(fr.Collinear, "t_fltr") || !strings.Contains(fr.Collinear, "t_tx") {
		t.Errorf("n_fltr ≈ 5r: condition %.0f, want > %d and a warning naming t_fltr and t_tx, got %q", fr.Condition, collinearTol, fr.Collinear)
	}
	grid, err := truth.Fit(synth(truth, 0.03, 1, false))
	if err != nil {
		t.Fatal(err)
	}
	if grid.Collinear != "" {
		t.Errorf("the papers' grid: unexpected warning %q (condition %.1f)", grid.Collinear, grid.Condition)
	}
}
