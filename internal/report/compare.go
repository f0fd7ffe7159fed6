package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strings"
)

// Comparison verdicts of `pslab compare`.
const (
	Same         = "same"
	Differs      = "differs"
	CompareUndec = "inconclusive"
)

// RatioCI is the ratio B/A of the means of a metric's repetitions, from
// Welch's t on log values: the ratio of geometric means with its 95 % CI,
// the two-sided p-value of "no difference", and the verdict: same when
// TOST shows the ratio within ±margin (even if a smaller difference is
// significant), differs when the CI excludes 1 otherwise, inconclusive
// otherwise.
type RatioCI struct {
	Ratio, Lo, Hi, P float64
	Verdict          string
	NA, NB           int
	Reason           string // why there is no ratio (Ratio NaN)
}

// ratioCI compares two samples.
func ratioCI(a, b []float64, margin float64) RatioCI {
	r := RatioCI{Ratio: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), P: math.NaN(), NA: len(a), NB: len(b), Verdict: CompareUndec}
	la, okA := Logs(a)
	lb, okB := Logs(b)
	if !okA || !okB || len(a) == 0 || len(b) == 0 {
		r.Reason = "a value is 0 or missing"
		return r
	}
	c, err := NewContrast([][]float64{la, lb}, []float64{-1, 1})
	if err != nil {
		r.Ratio = math.Exp(mean(lb) - mean(la))
		r.Reason = err.Error()
		return r
	}
	lo, hi := c.CI(Alpha)
	r.Ratio, r.Lo, r.Hi, r.P = math.Exp(c.Est), math.Exp(lo), math.Exp(hi), c.PTwoSided()
	switch {
	case c.PEquivalent(math.Log(1-margin), math.Log(1+margin)) < Alpha:
		r.Verdict = Same // a difference, if any, shown to be within the margin
	case r.P < Alpha:
		r.Verdict = Differs
	}
	return r
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// CompareRow is one case × broker × network found in both result sets.
type CompareRow struct {
	Key           GroupKey
	Name          string
	Sub, Lat, Pub RatioCI
}

// Comparison is the result of comparing result set B against A.
type Comparison struct {
	Margin             float64
	Rows               []CompareRow
	OnlyA, OnlyB       []GroupKey
	FactorsDiffer      []GroupKey // same case id, different factors: not compared
	RecordsA, RecordsB int
	// SettingsDiffer: what made the compared rows' records in A and B
	// other than the same way (run settings, link, build, broker,
	// machine), each setting with its values on both sides.
	SettingsDiffer []SettingDiff
	// SharedRecords counts records that are in both sets (the same run,
	// case, repetition and start); Identical: A and B are the same records.
	SharedRecords int
	Identical     bool
	// Pairs are the brokers compared across (compare --pair): B's rows of
	// broker Pair.B against A's of Pair.A, under A's name.
	Pairs []Pair
}

// Pair is one broker of A compared with another of B (compare --pair
// nats=nats-mqtt).
type Pair struct {
	A string `json:"a"`
	B string `json:"b"`
}

// Paired notes that B's rows come from other brokers than A's (their
// records renamed to A's broker before Build): the brokers' versions and
// settings then differ on purpose, and are no warning.
func (c *Comparison) Paired(pairs []Pair) {
	c.Pairs = pairs
	if len(pairs) == 0 {
		return
	}
	for i := range c.SettingsDiffer {
		if c.SettingsDiffer[i].Kind == KindBroker {
			c.SettingsDiffer[i].OnPurpose = true
		}
	}
}

// Compare compares every case × broker × network of b with the same one
// of a (full and --quick runs are matched separately).
func Compare(a, b *Dataset, margin float64) Comparison {
	cmp := Comparison{Margin: margin, RecordsA: a.Records, RecordsB: b.Records}
	sd := newSettingsDiff()
	for _, ga := range a.Groups {
		gb := b.index[ga.GroupKey]
		switch {
		case gb == nil:
			cmp.OnlyA = append(cmp.OnlyA, ga.GroupKey)
			continue
		case gb.Factors != ga.Factors:
			cmp.FactorsDiffer = append(cmp.FactorsDiffer, ga.GroupKey)
			continue
		}
		ra, rb := ga.Samples(), gb.Samples()
		cmp.Rows = append(cmp.Rows, CompareRow{Key: ga.GroupKey, Name: ga.Name,
			Sub: ratioCI(ra.Sub, rb.Sub, margin), Lat: ratioCI(ra.Lat, rb.Lat, margin), Pub: ratioCI(ra.Pub, rb.Pub, margin)})
		sd.add(ga.Records, gb.Records)
	}
	for _, gb := range b.Groups {
		if a.index[gb.GroupKey] == nil {
			cmp.OnlyB = append(cmp.OnlyB, gb.GroupKey)
		}
	}
	cmp.SettingsDiffer = sd.diffs()
	cmp.SharedRecords, cmp.Identical = sharedRecords(a.all, b.all)
	return cmp
}

func keyText(k GroupKey) string {
	s := fmt.Sprintf("%s %s %s %s", k.Suite, k.Case, k.Broker, k.Network)
	if k.Quick {
		s += " (quick)"
	}
	return s
}

func ratioText(r RatioCI) string {
	switch {
	case math.IsNaN(r.Ratio):
		return "– (" + r.Reason + ")"
	case math.IsNaN(r.Lo):
		return fmt.Sprintf("%s (no CI: %s)", FormatRatio(r.Ratio), r.Reason)
	}
	return fmt.Sprintf("%s [%.3g, %.3g] %s", FormatRatio(r.Ratio), r.Lo, r.Hi, FormatP(r.P))
}

// Tally counts verdicts of a metric.
func (c Comparison) Tally(sub bool) map[string]int {
	n := map[string]int{}
	for _, r := range c.Rows {
		if sub {
			n[r.Sub.Verdict]++
		} else {
			n[r.Lat.Verdict]++
		}
	}
	return n
}

// CompareReport is a comparison as the formats write it: the two sets'
// names, and the gate's conditions with what violated them.
type CompareReport struct {
	Comparison
	NameA, NameB string
	Gate         Gate
	Violations   []Violation
}

// NewCompareReport checks the gate on c.
func NewCompareReport(c Comparison, nameA, nameB string, g Gate) CompareReport {
	return CompareReport{Comparison: c, NameA: nameA, NameB: nameB, Gate: g, Violations: g.Check(c)}
}

// WriteCompareMarkdown writes the comparison as a markdown table, after
// what the reader must know first (the warnings) and, with a gate, its
// verdict.
func WriteCompareMarkdown(w io.Writer, cr CompareReport) error {
	c := cr.Comparison
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	p("# pslab compare")
	p("")
	p("A = %s (%d records), B = %s (%d records). Per case × broker × network: the ratio B/A of subscriber throughput and of mean latency (ratio of geometric means over the repetitions) with its 95 %% CI from Welch's t on log values, and the verdict: **same** when an equivalence test (TOST) puts the ratio within ±%.0f %% (a smaller difference may still be significant), **differs** when otherwise the CI excludes 1 (p < %.2f), **inconclusive** otherwise.", cr.NameA, c.RecordsA, cr.NameB, c.RecordsB, 100*c.Margin, Alpha)
	p("")
	if len(c.Pairs) > 0 {
		p("Paired (--pair): %s. Each row is named by A's broker.", PairsText(c.Pairs))
		p("")
	}
	for _, w := range c.Warnings() {
		p("**Warning:** %s.", w)
		p("")
	}
	if len(c.SettingsDiffer) > 0 {
		p("| setting | A | B | rows |")
		p("|---|---|---|---|")
		for _, d := range c.SettingsDiffer {
			p("| %s %s | %s | %s | %d |", d.KindText(), mdCell(d.Key), mdCell(countsText(d.A)), mdCell(countsText(d.B)), d.Rows)
		}
		p("")
	}
	for _, m := range []struct {
		name string
		sub  bool
	}{{"sub throughput", true}, {"mean latency", false}} {
		t := c.Tally(m.sub)
		p("- %s: %d same, %d differ, %d inconclusive of %d", m.name, t[Same], t[Differs], t[CompareUndec], len(c.Rows))
	}
	p("")
	if !cr.Gate.Empty() {
		var conds []string
		for _, t := range cr.Gate.Thresholds {
			conds = append(conds, "`"+t.Text+"`")
		}
		for _, f := range cr.Gate.FailOn {
			conds = append(conds, "`--fail-on "+f+"`")
		}
		if len(cr.Violations) == 0 {
			p("**Gate passed**: %s.", strings.Join(conds, ", "))
		} else {
			p("**Gate failed** (%s): %d violation(s).", strings.Join(conds, ", "), len(cr.Violations))
			p("")
			for _, v := range cr.Violations {
				p("- %s", mdCell(v.Text()))
			}
		}
		p("")
	}
	p("| case | broker | network | name | sub B/A [95 %% CI] | verdict | latency B/A [95 %% CI] | verdict | reps A/B |")
	p("|---|---|---|---|---|---|---|---|---|")
	for _, r := range c.Rows {
		id := r.Key.Suite + " " + r.Key.Case
		if r.Key.Quick {
			id += " (quick)"
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %s | %d/%d |", id, r.Key.Broker, r.Key.Network, mdCell(r.Name),
			ratioText(r.Sub), r.Sub.Verdict, ratioText(r.Lat), r.Lat.Verdict, r.Sub.NA, r.Sub.NB)
	}
	p("")
	for _, l := range []struct {
		what string
		ks   []GroupKey
	}{{"Only in A", c.OnlyA}, {"Only in B", c.OnlyB}, {"Not compared (the same case id ran different factors)", c.FactorsDiffer}} {
		if len(l.ks) == 0 {
			continue
		}
		var ss []string
		for _, k := range l.ks {
			ss = append(ss, keyText(k))
		}
		p("%s: %s.", l.what, strings.Join(ss, "; "))
		p("")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdCell escapes a markdown table cell.
func mdCell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

// countsText is "v1 (n1), v2 (n2)".
func countsText(cs []Count) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s (%d)", c.Value, c.Records))
	}
	return strings.Join(parts, ", ")
}

// WriteCompareCSV writes one line per compared row.
func WriteCompareCSV(w io.Writer, cr CompareReport) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"suite", "case", "broker", "network", "quick", "reps_a", "reps_b",
		"sub_ratio", "sub_ci_lo", "sub_ci_hi", "sub_p", "sub_verdict",
		"lat_ratio", "lat_ci_lo", "lat_ci_hi", "lat_p", "lat_verdict",
		"pub_ratio", "pub_ci_lo", "pub_ci_hi", "pub_p", "pub_verdict"})
	f := func(x float64) string {
		if math.IsNaN(x) {
			return ""
		}
		return fmt.Sprintf("%.6g", x)
	}
	for _, r := range cr.Rows {
		_ = cw.Write([]string{r.Key.Suite, r.Key.Case, r.Key.Broker, r.Key.Network, fmt.Sprint(r.Key.Quick),
			fmt.Sprint(r.Sub.NA), fmt.Sprint(r.Sub.NB),
			f(r.Sub.Ratio), f(r.Sub.Lo), f(r.Sub.Hi), f(r.Sub.P), r.Sub.Verdict,
			f(r.Lat.Ratio), f(r.Lat.Lo), f(r.Lat.Hi), f(r.Lat.P), r.Lat.Verdict,
			f(r.Pub.Ratio), f(r.Pub.Lo), f(r.Pub.Hi), f(r.Pub.P), r.Pub.Verdict})
	}
	cw.Flush()
	return cw.Error()
}

// CompareDocSchema names the layout of the JSON comparison.
const CompareDocSchema = "pslab-compare/1"

// CompareDoc is a comparison as data (`pslab compare --format json`,
// docs/report.md).
type CompareDoc struct {
	Schema         string                    `json:"schema"`
	A              CompareSide               `json:"a"`
	B              CompareSide               `json:"b"`
	Margin         float64                   `json:"margin"`
	Alpha          float64                   `json:"alpha"`
	Tally          map[string]map[string]int `json:"tally"`
	Rows           []CompareDocRow           `json:"rows"`
	OnlyA          []GroupKey                `json:"only_a"`
	OnlyB          []GroupKey                `json:"only_b"`
	FactorsDiffer  []GroupKey                `json:"factors_differ"`
	SettingsDiffer []SettingDiff             `json:"settings_differ"`
	SharedRecords  int                       `json:"shared_records"`
	Identical      bool                      `json:"identical"`
	Pairs          []Pair                    `json:"pairs,omitempty"`
	Warnings       []string                  `json:"warnings"`
	Gate           *CompareGate              `json:"gate,omitempty"`
}

// CompareSide names one compared set.
type CompareSide struct {
	Source  string `json:"source"`
	Records int    `json:"records"`
}

// CompareDocRow is one compared case × broker × network.
type CompareDocRow struct {
	GroupKey
	Name string       `json:"name"`
	Sub  CompareRatio `json:"sub_tput"`
	Lat  CompareRatio `json:"latency_ms"`
	Pub  CompareRatio `json:"pub_tput"`
}

// CompareRatio is a RatioCI in JSON.
type CompareRatio struct {
	Ratio   Num    `json:"ratio"`
	Lo      Num    `json:"ci_lo"`
	Hi      Num    `json:"ci_hi"`
	P       Num    `json:"p"`
	Verdict string `json:"verdict"`
	NA      int    `json:"reps_a"`
	NB      int    `json:"reps_b"`
	Reason  string `json:"reason,omitempty"`
}

// CompareGate is the gate's conditions and verdict.
type CompareGate struct {
	Thresholds []string    `json:"thresholds"`
	FailOn     []string    `json:"fail_on"`
	Passed     bool        `json:"passed"`
	Violations []Violation `json:"violations"`
}

func compareRatio(r RatioCI) CompareRatio {
	return CompareRatio{Ratio: Num(r.Ratio), Lo: Num(r.Lo), Hi: Num(r.Hi), P: Num(r.P), Verdict: r.Verdict, NA: r.NA, NB: r.NB, Reason: r.Reason}
}

// Doc is the comparison as data.
func (cr CompareReport) Doc() CompareDoc {
	c := cr.Comparison
	d := CompareDoc{Schema: CompareDocSchema, A: CompareSide{cr.NameA, c.RecordsA}, B: CompareSide{cr.NameB, c.RecordsB},
		Margin: c.Margin, Alpha: Alpha, Tally: map[string]map[string]int{},
		Rows: []CompareDocRow{}, OnlyA: nonNilKeys(c.OnlyA), OnlyB: nonNilKeys(c.OnlyB), FactorsDiffer: nonNilKeys(c.FactorsDiffer),
		SettingsDiffer: c.SettingsDiffer, SharedRecords: c.SharedRecords, Identical: c.Identical, Warnings: nonNil(c.Warnings()),
		Pairs: c.Pairs}
	if d.SettingsDiffer == nil {
		d.SettingsDiffer = []SettingDiff{}
	}
	for name, sub := range map[string]bool{"sub_tput": true, "latency_ms": false} {
		t := c.Tally(sub)
		d.Tally[name] = map[string]int{Same: t[Same], Differs: t[Differs], CompareUndec: t[CompareUndec]}
	}
	for _, r := range c.Rows {
		d.Rows = append(d.Rows, CompareDocRow{GroupKey: r.Key, Name: r.Name, Sub: compareRatio(r.Sub), Lat: compareRatio(r.Lat), Pub: compareRatio(r.Pub)})
	}
	if !cr.Gate.Empty() {
		g := &CompareGate{Thresholds: []string{}, FailOn: nonNil(cr.Gate.FailOn), Passed: len(cr.Violations) == 0, Violations: cr.Violations}
		for _, t := range cr.Gate.Thresholds {
			g.Thresholds = append(g.Thresholds, t.Text)
		}
		if g.Violations == nil {
			g.Violations = []Violation{}
		}
		d.Gate = g
	}
	return d
}

func nonNilKeys(ks []GroupKey) []GroupKey {
	if ks == nil {
		return []GroupKey{}
	}
	return ks
}
