package report

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"pslab/internal/results"
)

// WriteMarkdown writes the full report: inputs, the claims check, and per
// suite the measured numbers next to the paper's, the wireless/wireline
// ratios, errata notes, flags and failed runs. sources are the paths the
// records came from (for the header only).
func WriteMarkdown(w io.Writer, d *Dataset, check ClaimsCheck, sources []string) error {
	bw := bufio.NewWriter(w)
	m := &mdWriter{w: bw}
	if d.Partial != "" {
		m.p("> **PARTIAL**: %s.\n> Only the rows that have run so far are here, with the repetitions they have so far;\n"+
			"> rows still to run are missing or short, and claims over them are not measurable.\n"+
			"> A report written once every repetition is done has no such note.\n", d.Partial)
	}
	m.header(d, sources)
	writeMixing(m.w, d.Mixing)
	m.validity(d)
	if d.Records > 0 || d.CapacityClaims == nil {
		m.claims(d, check)
	}
	if d.CapacityClaims != nil {
		m.capacityClaims(d, *d.CapacityClaims)
	}
	for _, s := range d.Suites {
		m.suite(d, s)
	}
	return bw.Flush()
}

type mdWriter struct{ w *bufio.Writer }

func (m *mdWriter) p(format string, a ...any) { fmt.Fprintf(m.w, format+"\n", a...) }

func (m *mdWriter) row(cells ...string) {
	for i, c := range cells {
		cells[i] = mdCell(c)
	}
	m.p("| %s |", strings.Join(cells, " | "))
}

func (m *mdWriter) head(cells ...string) {
	m.row(cells...)
	seps := make([]string, len(cells))
	for i := range seps {
		seps[i] = "---"
	}
	m.p("|%s|", strings.Join(seps, "|"))
}

// columns makes a table's cell filter: the cells whose column is shown.
func columns(shown ...bool) func(cells ...string) []string {
	return func(cells ...string) []string {
		var out []string
		for i, c := range cells {
			if shown[i] {
				out = append(out, c)
			}
		}
		return out
	}
}

// suiteHasPaper: some case of the suite ("": any suite) carries published
// values.
func suiteHasPaper(d *Dataset, suite string) bool {
	for _, g := range d.Groups {
		if (suite == "" || g.Suite == suite) && len(g.Paper) > 0 {
			return true
		}
	}
	return false
}

func (m *mdWriter) header(d *Dataset, sources []string) {
	m.p("# pslab report")
	m.p("")
	m.p("Records: %d from %s (%d failed repetitions). Suites: %s. Brokers: %s. Networks: %s. Runs: %s.",
		d.Records, strings.Join(sources, ", "), d.Failed, orNone(d.Suites),
		orNone(d.Brokers), orNone(d.Networks), orNone(d.RunIDs))
	m.p("")
	if d.Interrupted > 0 {
		m.p("%d interrupted case run(s) left out (cut short by SIGINT/SIGTERM: neither results nor failed repetitions).", d.Interrupted)
		m.p("")
	}
	if d.Quick > 0 {
		m.p("**%d of %d records come from --quick runs** (short windows, reduced client counts in the big cases): they check that the pipeline works and are not comparable with the paper.", d.Quick, d.Records)
		m.p("")
	}
	paper := ` "paper" is the published value for the same case: wireline against the paper's wireline column, wifi-paper against its emulated 802.11 column.`
	if !suiteHasPaper(d, "") {
		paper = ""
	}
	m.p("Throughput is msgs/s summed over publishers (pub) or subscribers (sub), mean ± 95 %% confidence half-width over repetitions; latency is the mean over every delivery in the window, in ms, averaged over repetitions.%s See docs/report.md for how to read this report and how each claim is evaluated.", paper)
	m.p("")
	if n, st := stoppedRows(d); n > 0 {
		m.p("%d row(s) were repeated until their CIs reached a target (`ci:` ±%.3g %%, %d-%d repetitions): stopping at the first narrow enough interval would cover less than 95 %%, so their intervals are corrected for the repeated looks (%s: each of the %d looks at %.2f %% confidence, so that the interval at the stop covers with at least 95 %%, docs/capacity.md).",
			n, 100*st.Target, st.MinReps, st.MaxReps, st.Method, st.Looks, 100*st.Level)
		m.p("")
	}
}

// stoppedRows counts the rows repeated to a CI target (Group.Stopping)
// and returns the widest of their rules.
func stoppedRows(d *Dataset) (int, *results.Stopping) {
	n := 0
	var widest *results.Stopping
	for _, g := range d.Groups {
		if g.Stopping == nil {
			continue
		}
		n++
		if widest == nil || g.Stopping.Looks > widest.Looks {
			widest = g.Stopping
		}
	}
	return n, widest
}

// orNone joins a list, "none" when it is empty.
func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

func (m *mdWriter) claims(d *Dataset, check ClaimsCheck) {
	m.p("## Claims check")
	m.p("")
	shown := check.Shown()
	if len(shown) == 0 {
		m.p("None of the paper's %d claims can be evaluated on these records: each needs cases that differ in one factor the way the paper's do (see docs/report.md, *The claims check*).", len(check.Claims))
		m.p("")
		return
	}
	if check.PaperValues {
		m.p("Each of the paper's qualitative conclusions, evaluated on the paper's own printed values (a check that the rule says what the paper's numbers say: single numbers, judged by ±%.0f %%, (k/n) = k of n comparisons agree, a claim holds when more than half agree) and on each broker's measurements, where every comparison is a test on the repetitions at the %.0f %% level: \"beats\"/\"cuts\" Welch's t on log values, \"similar\" an equivalence test (TOST) with a ±%.0f %% margin. An item holds, does not hold (significant the other way, or equivalent where a difference was claimed), or is inconclusive; a claim holds when more than half of its items hold, does not hold when it could not reach that even if every inconclusive item held, and is inconclusive otherwise. Each item prints its p-value and its repetitions and deliveries per record. Flagged: comparisons involving records with flags (see the suite sections).", 100*check.Tolerance, 100*check.Alpha, 100*check.Tolerance)
	} else {
		m.p("The paper's qualitative conclusions that these records can test, on each broker's measurements: every comparison is a test on the repetitions at the %.0f %% level (\"beats\"/\"cuts\" Welch's t on log values, \"similar\" an equivalence test (TOST) with a ±%.0f %% margin); a claim holds when more than half of its items hold, does not hold when it could not reach that even if every inconclusive item held, and is inconclusive otherwise. The records carry no published values (`paper:` in the scenario file), so there is no paper column.", 100*check.Alpha, 100*check.Tolerance)
	}
	m.p("")
	m.claimTables(d, check)
}

// claimTables writes a check's notes, its table of claims by source and
// each claim's detail.
func (m *mdWriter) claimTables(d *Dataset, check ClaimsCheck) {
	shown := check.Shown()
	brokers := check.BrokersOf(d)
	for _, n := range check.Notes {
		m.p("%s", n)
		m.p("")
	}
	cols := []string{"claim"}
	if check.PaperValues {
		cols = append(cols, "paper's values")
	}
	m.head(append(cols, brokers...)...)
	for _, c := range shown {
		cells := []string{fmt.Sprintf("[%s](#%s): %s", c.ID, check.AnchorOf(c.ID), c.Statement)}
		if check.PaperValues {
			cells = append(cells, c.Paper.Summary())
		}
		for _, b := range brokers {
			cells = append(cells, c.ByBroker[b].Summary())
		}
		m.row(cells...)
	}
	m.p("")
	if un := check.Unmeasured(); len(un) > 0 {
		m.p("Not measurable on these records (their cases are not in them): %s.", strings.Join(un, ", "))
		m.p("")
	}
	for _, c := range shown {
		m.claimDetail(d, check, c)
	}
}

// capacityClaims writes the claims on capacity and on latency at equal
// offered load.
func (m *mdWriter) capacityClaims(d *Dataset, check ClaimsCheck) {
	m.p("## Claims on capacity and on latency at equal offered load")
	m.p("")
	if len(check.Shown()) == 0 {
		m.p("None of the %d claims on capacity rows can be evaluated on these bundles: each needs rows that differ in one factor the way the paper's cases do (see docs/report.md, *Claims on capacity*).", len(check.Claims))
		m.p("")
		return
	}
	m.p("The paper's conclusions on the rows of the capacity bundles (`pslab capacity`): throughput claims compare capacities (delivered msgs/s), latency claims the mean latency of two rows at an equal offered load (their fixed loads within ±%.0f %% of each other, every run sustained), never a saturated backlog. Each item is the ratio of the two rows with its 95 %% CI (Stein's two-stage CIs of the rows combined; a capacity's CI widened by half of each search's resolution), judged against the claim's stated margin, not by significance alone: \"more than %.0f %%\" holds when the whole CI lies above ×%.2f, \"similar\" when it lies within ×%.2f-×%.2f. A row whose capacity is a lower bound (client-bound `≥ X`) is no evidence about the broker: its items are inconclusive. A pair on different broker mechanisms is left out of a claim about another factor, with the reason. A claim holds when more than half of its items hold, does not hold when it could not reach that even if every inconclusive item held, and is inconclusive otherwise.",
		100*check.EqualLoad, 100*check.Tolerance, 1+check.Tolerance, 1-check.Tolerance, 1+check.Tolerance)
	m.p("")
	m.claimTables(d, check)
}

func (m *mdWriter) claimDetail(d *Dataset, check ClaimsCheck, c Claim) {
	m.p(`<a id="%s"></a>`, check.AnchorOf(c.ID))
	m.p("### %s", c.ID)
	m.p("")
	m.p("%s.", c.Statement)
	m.p("")
	m.p("- Paper: %s", c.Source)
	m.p("- Rule: %s", c.Rule)
	m.p("- Needs: %s", c.Needs)
	sources := check.Sources(check.BrokersOf(d))
	for _, s := range sources {
		o := c.Outcome(s)
		line := fmt.Sprintf("- %s: **%s**", s, o.Summary())
		if o.Reason != "" {
			line += ": " + o.Reason
		}
		m.p("%s", line)
	}
	m.p("")
	// One row per comparison, one column per source.
	keys := c.ItemKeys(sources)
	if len(keys) > 0 {
		m.head(append([]string{"comparison"}, sources...)...)
		for _, k := range keys {
			cells := []string{k}
			for _, s := range sources {
				cells = append(cells, itemCell(c.Outcome(s).Items, k))
			}
			m.row(cells...)
		}
		m.p("")
		m.p("✓ agrees with the claim (measured: the test holds), ✗ does not, ? inconclusive; p is the p-value of the claim's test; † involves flagged records.")
		m.p("")
	}
	for _, s := range sources {
		if sk := c.Outcome(s).Skipped; len(sk) > 0 {
			m.p("Not compared (%s): %s.", s, strings.Join(sk, "; "))
			m.p("")
		}
	}
}

func itemCell(items []Item, key string) string {
	for _, it := range items {
		if it.Key != key {
			continue
		}
		s := it.Mark() + " " + it.Text
		if it.Test != "" {
			s += fmt.Sprintf(" (%s; %s)", FormatP(it.P), it.Evidence)
		}
		if len(it.Flags) > 0 {
			s += " † " + strings.Join(it.Flags, ",")
		}
		return s
	}
	return "–"
}

// paperCell prints a published value, with the erratum's reading if any.
func paperCell(g *Group, metric string) string {
	v, ok := LookupPaper(g.Paper, metric, g.Network)
	if !ok {
		return "–"
	}
	if v.HasErrata {
		return fmt.Sprintf("%s (printed %s)", asPrinted(v.Corrected), asPrinted(v.Printed))
	}
	return asPrinted(v.Printed)
}

// asPrinted shows a published value with the digits the paper printed.
func asPrinted(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func (m *mdWriter) suite(d *Dataset, suite string) {
	cases := d.Cases(suite)
	m.p("## Suite %s", suite)
	m.p("")
	m.p("### Throughput and latency")
	m.p("")
	// The paper columns only where the suite has published values.
	paper, wire := suiteHasPaper(d, suite), hasWire(d, suite)
	pick := columns(true, true, true, true, true, true, paper, true, paper, true, paper, true, wire, true, true, true)
	m.head(pick("case", "factors", "broker", "network", "reps", "pub msgs/s", "paper", "sub msgs/s", "paper",
		"latency ms", "paper", "p99 ms", "wire B/msg up/down", "lost", "late", "flags")...)
	for _, g := range d.Groups {
		if g.Suite != suite {
			continue
		}
		id := g.Label()
		if g.Quick {
			id += " (quick)"
		}
		factors := g.Factors.String()
		if g.MixedFactors {
			factors += " (records disagree on factors)"
		}
		reps := fmt.Sprint(g.Reps)
		if len(g.Failed) > 0 {
			reps += fmt.Sprintf(" (+%d failed)", len(g.Failed))
		}
		if g.Reps == 0 {
			m.row(pick(id, factors, g.Broker, g.Network, reps, "FAILED", paperCell(g, PubTput), "FAILED", paperCell(g, SubTput),
				"FAILED", paperCell(g, LatencyMs), "", "", "", "", "")...)
			continue
		}
		p99 := "–"
		if g.P99.Valid() {
			p99 = FormatNum(g.P99.Mean)
		}
		m.row(pick(id, factors, g.Broker, g.Network, reps,
			FormatStat(g.Pub), paperCell(g, PubTput), FormatStat(g.Sub), paperCell(g, SubTput),
			FormatStat(g.Lat), paperCell(g, LatencyMs), p99, wireCell(g), lostCell(g), fmt.Sprint(g.Late), flagList(g))...)
	}
	m.p("")
	if anyLostUnverified(d) {
		m.p(lostNote)
		m.p("")
	}
	m.ratios(d, suite, cases)
	m.tlsCost(d, suite)
	m.audit(d, suite)
	m.trends(d, suite)
	m.notes(cases)
	m.flags(d, suite)
	m.failures(d, suite)
}

// ratios prints other network / wireline for each case and broker, measured
// and published.
func (m *mdWriter) ratios(d *Dataset, suite string, cases []*Group) {
	var others []string
	for _, n := range d.Networks {
		if n != Wireline {
			others = append(others, n)
		}
	}
	if len(others) == 0 {
		return
	}
	paper := suiteHasPaper(d, suite)
	pick := columns(true, true, true, paper, true, paper, true, paper)
	for _, n := range others {
		m.p("### %s / wireline ratios", n)
		m.p("")
		m.head(pick("case", "broker", "pub measured", "pub paper", "sub measured", "sub paper", "latency measured", "latency paper")...)
		for _, c := range cases {
			for _, b := range d.Brokers {
				wl, ot := d.Get(suite, c.Case, b, Wireline), d.Get(suite, c.Case, b, n)
				if wl == nil && ot == nil {
					continue
				}
				m.row(pick(c.Case, b,
					measuredRatio(wl, ot, func(g *Group) Stat { return g.Pub }),
					paperRatio(c.Paper, PubTput, n),
					measuredRatio(wl, ot, func(g *Group) Stat { return g.Sub }),
					paperRatio(c.Paper, SubTput, n),
					measuredRatio(wl, ot, func(g *Group) Stat { return g.Lat }),
					paperRatio(c.Paper, LatencyMs, n))...)
			}
		}
		m.p("")
	}
}

func measuredRatio(wl, ot *Group, get func(*Group) Stat) string {
	if wl == nil || ot == nil || wl.Reps == 0 || ot.Reps == 0 {
		return "–"
	}
	a, b := get(wl), get(ot)
	if !a.Valid() || !b.Valid() {
		return "–"
	}
	return FormatRatio(Ratio(b.Mean, a.Mean))
}

func paperRatio(paper map[string]float64, metric, network string) string {
	a, ok1 := LookupPaper(paper, metric, Wireline)
	b, ok2 := LookupPaper(paper, metric, network)
	if !ok1 || !ok2 {
		return "–"
	}
	return FormatRatio(Ratio(b.Value(), a.Value()))
}

func (m *mdWriter) notes(cases []*Group) {
	var lines []string
	for _, c := range cases {
		if c.Note != "" {
			lines = append(lines, fmt.Sprintf("- Case %s (%s): %s", c.Case, c.Name, c.Note))
		}
	}
	if len(lines) == 0 {
		return
	}
	m.p("### Notes and errata")
	m.p("")
	for _, l := range lines {
		m.p("%s", l)
	}
	m.p("")
}

func flagList(g *Group) string {
	var names []string
	for n := range g.Flags {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		names[i] = fmt.Sprintf("%s×%d", n, g.Flags[n])
	}
	return strings.Join(names, ", ")
}

func (m *mdWriter) flags(d *Dataset, suite string) {
	fs := FlagsOf(d, suite)
	if len(fs) == 0 {
		return
	}
	m.p("### Flags")
	m.p("")
	m.p("Reasons not to take a record's numbers at face value, as the run recorded them.")
	m.p("")
	m.head("flag", "records", "case/broker/network", "first seen as")
	for _, f := range fs {
		where := f.Where
		if len(where) > 12 {
			where = append(where[:12:12], fmt.Sprintf("and %d more", len(f.Where)-12))
		}
		m.row(f.Name, fmt.Sprint(f.Records), strings.Join(where, ", "), f.First)
	}
	m.p("")
}

func (m *mdWriter) failures(d *Dataset, suite string) {
	var rows [][]string
	for _, g := range d.Groups {
		if g.Suite != suite {
			continue
		}
		for _, f := range g.Failed {
			rows = append(rows, []string{g.Case, g.Broker, g.Network, fmt.Sprint(f.Rep), f.RunID, f.Error})
		}
	}
	if len(rows) == 0 {
		return
	}
	m.p("### Failed runs")
	m.p("")
	m.head("case", "broker", "network", "rep", "run", "error")
	for _, r := range rows {
		m.row(r...)
	}
	m.p("")
}

// finite maps NaN and infinities to ok=false.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
