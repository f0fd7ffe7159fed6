package model

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// PredictSettings are the choices of "pslab model predict", spelled as its
// flags spell them; error messages name those flags. The parameters come
// from exactly one of Published, BrokerParams, or Form with the times.
type PredictSettings struct {
	// Published names a published parameter set, or "all".
	Published string
	// BrokerParams is the JSON of "pslab model fit --format json"; Broker,
	// Network and Filter choose its group, Form the fit (default: the
	// group's best).
	BrokerParams, Broker, Network, Filter string
	// Form with TRcv, TFltr, TFltrDiff, TTx: given values (a bare number is
	// µs).
	Form                           string
	TRcv, TFltr, TFltrDiff, TTx    string
	Filters, Replication, Distinct string // comma lists (Distinct: one number)
	// SunMQFilters: different or identical, SunMQ's n_diff without Distinct.
	SunMQFilters string
}

// paramSet is one set of parameters to predict from.
type paramSet struct {
	name string
	form Form
	cov  [][]float64
}

// PredictTable evaluates the chosen parameters at every combination of
// Filters and Replication. Every error is about the input.
func PredictTable(s PredictSettings) ([]LabeledPrediction, error) {
	sources := 0
	for _, set := range []bool{s.Published != "", s.BrokerParams != "", s.TRcv != "" || s.TFltr != "" || s.TTx != "" || s.TFltrDiff != ""} {
		if set {
			sources++
		}
	}
	if sources != 1 {
		return nil, fmt.Errorf("give exactly one parameter source: --published, --broker-params, or --form with --t-rcv/--t-fltr/--t-tx")
	}
	if s.Filters == "" {
		return nil, fmt.Errorf("--filters is required")
	}
	nf, err := ParseList("--filters", s.Filters)
	if err != nil {
		return nil, err
	}
	rs, err := ParseList("--replication", s.Replication)
	if err != nil {
		return nil, err
	}
	nd := 0.0
	if s.Distinct != "" {
		v, err := ParseList("--distinct", s.Distinct)
		if err != nil || len(v) != 1 {
			return nil, fmt.Errorf("--distinct %q: want one number", s.Distinct)
		}
		nd = v[0]
	}
	mix, err := ParseMix(s.SunMQFilters)
	if err != nil {
		return nil, err
	}
	var sets []paramSet
	switch {
	case s.Published != "":
		sets, err = publishedSets(s.Published)
	case s.BrokerParams != "":
		sets, err = fittedSet(s)
	default:
		sets, err = givenSet(s)
	}
	if err != nil {
		return nil, err
	}
	var out []LabeledPrediction
	for _, ps := range sets {
		if sm, ok := ps.form.(SunMQ); ok && sm.Mix == "" {
			sm.Mix = mix
			ps.form = sm
		}
		for _, n := range nf {
			for _, r := range rs {
				p := Point{NFilters: n, R: r}
				if ps.form.Name() == "sunmq" {
					p.NDistinct = nd
				}
				pr, err := Predict(ps.form, ps.cov, p)
				if err != nil {
					return nil, err
				}
				if err := finitePrediction(pr); err != nil {
					return nil, fmt.Errorf("%s: %w", ps.name, err)
				}
				out = append(out, LabeledPrediction{Set: ps.name, Prediction: pr})
			}
		}
	}
	return out, nil
}

// ParseList reads a comma list of non-negative numbers; flag names the
// flag in the error.
func ParseList(flag, s string) ([]float64, error) {
	var out []float64
	for _, part := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || v < 0 || v != v || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s %q: want finite non-negative numbers separated by commas", flag, s)
		}
		out = append(out, v)
	}
	return out, nil
}

func publishedSets(name string) ([]paramSet, error) {
	if name == "all" {
		var out []paramSet
		for _, p := range PublishedSets() {
			out = append(out, paramSet{name: p.Name, form: p.Form})
		}
		return out, nil
	}
	p, err := PublishedByName(name)
	if err != nil {
		return nil, err
	}
	return []paramSet{{name: p.Name, form: p.Form}}, nil
}

func fittedSet(s PredictSettings) ([]paramSet, error) {
	data, err := os.ReadFile(s.BrokerParams)
	if err != nil {
		return nil, err
	}
	var rep Report
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("%s: not the JSON of pslab model fit: %w", s.BrokerParams, err)
	}
	var match []GroupReport
	var all []string
	for _, g := range rep.Groups {
		all = append(all, g.Broker+"/"+g.Network+"/"+orDash(g.Filter))
		if (s.Broker == "" || g.Broker == s.Broker) && (s.Network == "" || g.Network == s.Network) &&
			(s.Filter == "" || g.Filter == s.Filter) {
			match = append(match, g)
		}
	}
	if len(match) != 1 {
		return nil, fmt.Errorf("%s: %d groups match --broker %q --network %q --filter %q; the file has (broker/network/filter): %s",
			s.BrokerParams, len(match), s.Broker, s.Network, s.Filter, strings.Join(all, ", "))
	}
	g := match[0]
	form := s.Form
	if form == "" {
		form = g.Best
	}
	for _, fr := range g.Fits {
		if fr.Form == form {
			m, cov, err := fr.Restore()
			if err != nil {
				return nil, err
			}
			return []paramSet{{name: fmt.Sprintf("%s/%s/%s %s (fit)", g.Broker, g.Network, orDash(g.Filter), form), form: m, cov: cov}}, nil
		}
	}
	return nil, fmt.Errorf("%s: group %s/%s has no fit of form %q", s.BrokerParams, g.Broker, g.Network, form)
}

func givenSet(s PredictSettings) ([]paramSet, error) {
	if s.Form == "" {
		return nil, fmt.Errorf("--t-rcv/--t-fltr/--t-tx need --form fiorano, sunmq or websphere")
	}
	need := map[string][]string{
		"fiorano":   {"t-rcv", "t-fltr", "t-tx"},
		"sunmq":     {"t-rcv", "t-fltr", "t-fltr-diff", "t-tx"},
		"websphere": {"t-rcv", "t-fltr"},
	}[s.Form]
	if need == nil {
		return nil, fmt.Errorf("--form %q: want fiorano, sunmq or websphere", s.Form)
	}
	given := map[string]string{"t-rcv": s.TRcv, "t-fltr": s.TFltr, "t-fltr-diff": s.TFltrDiff, "t-tx": s.TTx}
	var vals []float64
	for _, k := range need {
		if given[k] == "" {
			return nil, fmt.Errorf("--form %s needs --%s", s.Form, k)
		}
		v, err := ParseTime(given[k])
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", k, err)
		}
		if v < 0 {
			return nil, fmt.Errorf("--%s %s: a time per message, filter or copy is not negative", k, given[k])
		}
		vals = append(vals, v)
		delete(given, k)
	}
	for k, v := range given {
		if v != "" {
			return nil, fmt.Errorf("--%s does not belong to form %s (%v)", k, s.Form, need)
		}
	}
	m, err := NewForm(s.Form, vals)
	if err != nil {
		return nil, err
	}
	return []paramSet{{name: s.Form + " (given)", form: m}}, nil
}

// finitePrediction refuses a prediction a number of which, as printed,
// is beyond what a float64 holds (B in µs, the throughputs, their
// standard errors): the inputs are out of any model's range.
func finitePrediction(p Prediction) error {
	for _, v := range []float64{p.B * 1e6, p.BStdErr * 1e6, p.Received, p.ReceivedStdErr, p.Dispatched, p.DispatchedStdErr, p.Overall, p.OverallStdErr} {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return fmt.Errorf("at n_fltr=%g r=%g the prediction is not a finite number (B = %g s, received %g msgs/s): the inputs are beyond the model's range", p.NFilters, p.R, p.B, p.Received)
		}
	}
	return nil
}
