package model

import (
	"fmt"
	"math"
	"sort"
)

// Candidate is one form fitted to a group, or the reason it was refused.
type Candidate struct {
	Form string
	Fit  *FitResult // nil when refused
	Err  error
	// Delta is the form's criterion minus the best one's (0 for the best;
	// NaN when not fitted).
	Delta float64
}

// Group is the observations of one broker over one network, with the fits.
type Group struct {
	Broker, Network string
	Filter          string // filter kind of the observations
	Obs             []Observation
	Fits            []Candidate
	Best            string // lowest criterion among the fitted forms; "" when none fitted
	Criterion       string // "AICc" or "AIC"
	Why             string // how Best was chosen, in words
}

// GroupObservations splits observations by broker, network and filter
// kind: a model describes one broker, runs over different links are not
// comparable, and filter kinds cost differently (paper 000: application
// property filters cost twice correlation-id filters).
func GroupObservations(obs []Observation) []Group {
	idx := map[[3]string]int{}
	var out []Group
	for _, o := range obs {
		k := [3]string{o.Broker, o.Network, o.Filter}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, Group{Broker: o.Broker, Network: o.Network, Filter: o.Filter})
		}
		out[i].Obs = append(out[i].Obs, o)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Broker != out[j].Broker {
			return out[i].Broker < out[j].Broker
		}
		if out[i].Network != out[j].Network {
			return out[i].Network < out[j].Network
		}
		return out[i].Filter < out[j].Filter
	})
	return out
}

// FitGroups fits every form to every broker/network group and picks the
// best form of each (see Compare).
func FitGroups(obs []Observation, forms []Form, opt FitOptions) []Group {
	gs := GroupObservations(obs)
	for i := range gs {
		gs[i].Fits, gs[i].Best, gs[i].Criterion, gs[i].Why = Compare(gs[i].Obs, forms, opt)
	}
	return gs
}

// Compare fits each form to the same observations and picks the best by
// the small-sample Akaike information criterion AICc: the forms have
// different numbers of parameters and are not nested (WebsphereMQ's n^1.5
// term is not a special case of FioranoMQ's), AIC handles both, and its
// penalty is the likelihood-based price of an extra parameter, where
// adjusted R² penalises too weakly and tends to keep the larger form. AICc
// corrects AIC for the few observations a sweep has. All forms are fitted
// to the same responses with the same weights (which depend on the data
// only), so their likelihoods are comparable. When AICc is undefined for a
// fitted form (too few observations) plain AIC is used and Why says so.
func Compare(obs []Observation, forms []Form, opt FitOptions) (fits []Candidate, best, criterion, why string) {
	useAICc := true
	for _, f := range forms {
		fr, err := FitWith(f, obs, opt)
		c := Candidate{Form: f.Name(), Fit: fr, Err: err, Delta: math.NaN()}
		if err == nil && math.IsNaN(fr.AICc) {
			useAICc = false
		}
		fits = append(fits, c)
	}
	criterion = "AICc"
	if !useAICc {
		criterion = "AIC"
	}
	score := func(fr *FitResult) float64 {
		if useAICc {
			return fr.AICc
		}
		return fr.AIC
	}
	bestScore := math.Inf(1)
	nFitted := 0
	for _, c := range fits {
		if c.Fit == nil {
			continue
		}
		nFitted++
		if s := score(c.Fit); s < bestScore {
			bestScore, best = s, c.Form
		}
	}
	second := math.Inf(1)
	for i := range fits {
		if fits[i].Fit == nil {
			continue
		}
		fits[i].Delta = score(fits[i].Fit) - bestScore
		if fits[i].Form != best {
			second = math.Min(second, fits[i].Delta)
		}
	}
	switch {
	case nFitted == 0:
		why = "no form could be fitted"
	case nFitted == 1:
		why = fmt.Sprintf("%s is the only form that could be fitted", best)
	case second < 2:
		why = fmt.Sprintf("lowest %s, but another form is within 2 (about equally supported by the data)", criterion)
	default:
		why = fmt.Sprintf("lowest %s, next form %.1f higher", criterion, second)
	}
	if !useAICc && nFitted > 0 {
		why += "; AICc undefined with this few observations, AIC used"
	}
	return fits, best, criterion, why
}
