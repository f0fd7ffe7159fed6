package report

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// A gate turns a comparison into pass or fail, for a CI job: thresholds in
// k6's style on every compared row (`sub_tput:ratio>0.95`) and --fail-on
// conditions (a verdict, or settings that differ between A and B).

// Metrics a threshold can name (as in the JSON comparison).
var gateMetrics = map[string]func(CompareRow) RatioCI{
	"sub_tput":   func(r CompareRow) RatioCI { return r.Sub },
	"latency_ms": func(r CompareRow) RatioCI { return r.Lat },
	"pub_tput":   func(r CompareRow) RatioCI { return r.Pub },
}

// Statistics of a metric's B/A a threshold can bound.
var gateStats = map[string]func(RatioCI) float64{
	"ratio": func(r RatioCI) float64 { return r.Ratio },
	"ci_lo": func(r RatioCI) float64 { return r.Lo },
	"ci_hi": func(r RatioCI) float64 { return r.Hi },
	"p":     func(r RatioCI) float64 { return r.P },
}

var gateOps = map[string]func(x, v float64) bool{
	"<":  func(x, v float64) bool { return x < v },
	"<=": func(x, v float64) bool { return x <= v },
	">":  func(x, v float64) bool { return x > v },
	">=": func(x, v float64) bool { return x >= v },
}

// Threshold is one condition every compared row must meet:
// METRIC:STAT OP VALUE, e.g. sub_tput:ratio>0.95 (B's subscriber
// throughput at least 95 % of A's) or latency_ms:ci_hi<1.2.
type Threshold struct {
	Text, Metric, Stat, Op string
	Value                  float64
}

var thresholdRe = regexp.MustCompile(`^\s*([a-z_]+)\s*:\s*([a-z_]+)\s*(<=|>=|<|>)\s*([-+0-9.eE]+)\s*$`)

// ParseThreshold reads METRIC:STAT OP VALUE.
func ParseThreshold(s string) (Threshold, error) {
	m := thresholdRe.FindStringSubmatch(s)
	if m == nil {
		return Threshold{}, fmt.Errorf("--threshold %q: want METRIC:STAT OP VALUE, e.g. sub_tput:ratio>0.95 (metrics %s; stats %s; ops <, <=, >, >=)", s, keys(gateMetrics), keys(gateStats))
	}
	t := Threshold{Text: strings.TrimSpace(s), Metric: m[1], Stat: m[2], Op: m[3]}
	var errs []string
	if _, ok := gateMetrics[t.Metric]; !ok {
		errs = append(errs, fmt.Sprintf("unknown metric %q (known: %s)", t.Metric, keys(gateMetrics)))
	}
	if _, ok := gateStats[t.Stat]; !ok {
		errs = append(errs, fmt.Sprintf("unknown statistic %q (known: %s)", t.Stat, keys(gateStats)))
	}
	v, err := strconv.ParseFloat(m[4], 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		errs = append(errs, fmt.Sprintf("%q is not a number", m[4]))
	}
	t.Value = v
	if len(errs) > 0 {
		return t, fmt.Errorf("--threshold %q: %s", s, strings.Join(errs, "; "))
	}
	return t, nil
}

func keys[V any](m map[string]V) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}

// --fail-on conditions.
const (
	FailDiffers      = "differs"      // a row's sub throughput or mean latency differs
	FailInconclusive = "inconclusive" // ... is inconclusive
	FailSettings     = "settings"     // A and B were made with other settings, or are the same records
)

var failOnKinds = map[string]bool{FailDiffers: true, FailInconclusive: true, FailSettings: true}

// ParseFailOn checks --fail-on values.
func ParseFailOn(vals []string) ([]string, error) {
	var out []string
	for _, v := range vals {
		v = strings.TrimSpace(v)
		if !failOnKinds[v] {
			return nil, fmt.Errorf("--fail-on %q: want %s", v, keys(failOnKinds))
		}
		out = append(out, v)
	}
	return out, nil
}

// Gate is a comparison's pass/fail conditions.
type Gate struct {
	Thresholds []Threshold
	FailOn     []string
}

// Violation is one condition a comparison did not meet.
type Violation struct {
	Check string    `json:"check"` // the threshold's text or the --fail-on value
	Row   *GroupKey `json:"row,omitempty"`
	Value Num       `json:"value"`
	Why   string    `json:"why"`
}

// Text is one line for a terminal.
func (v Violation) Text() string {
	s := v.Check
	if v.Row != nil {
		s += ": " + keyText(*v.Row)
	}
	return s + ": " + v.Why
}

// Empty: no condition to check.
func (g Gate) Empty() bool { return len(g.Thresholds) == 0 && len(g.FailOn) == 0 }

// Check lists every condition of g that c violates. A threshold on a
// value the row does not have (no ratio, no CI with one repetition) is
// violated: a gate never passes on what it could not check.
func (g Gate) Check(c Comparison) []Violation {
	var out []Violation
	for _, t := range g.Thresholds {
		for i := range c.Rows {
			r := &c.Rows[i]
			rc := gateMetrics[t.Metric](*r)
			x := gateStats[t.Stat](rc)
			switch {
			case math.IsNaN(x):
				why := fmt.Sprintf("no %s of %s B/A", t.Stat, t.Metric)
				if rc.Reason != "" {
					why += " (" + rc.Reason + ")"
				}
				out = append(out, Violation{Check: t.Text, Row: &r.Key, Value: Num(x), Why: why})
			case !gateOps[t.Op](x, t.Value):
				out = append(out, Violation{Check: t.Text, Row: &r.Key, Value: Num(x), Why: fmt.Sprintf("%s of %s B/A is %.4g", t.Stat, t.Metric, x)})
			}
		}
	}
	for _, f := range g.FailOn {
		switch f {
		case FailDiffers, FailInconclusive:
			verdict := Differs
			if f == FailInconclusive {
				verdict = CompareUndec
			}
			for i := range c.Rows {
				r := &c.Rows[i]
				for _, m := range []struct {
					name string
					rc   RatioCI
				}{{"sub throughput", r.Sub}, {"mean latency", r.Lat}} {
					if m.rc.Verdict == verdict {
						out = append(out, Violation{Check: "--fail-on " + f, Row: &r.Key, Value: Num(m.rc.Ratio),
							Why: fmt.Sprintf("%s B/A %s: %s", m.name, ratioText(m.rc), verdict)})
					}
				}
			}
		case FailSettings:
			for _, w := range c.Warnings() {
				out = append(out, Violation{Check: "--fail-on " + f, Value: Num(math.NaN()), Why: w})
			}
		}
	}
	return out
}
