package capacity

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"pslab/internal/lab"
	"pslab/internal/report"
	"pslab/internal/results"
	"pslab/internal/scenario"
)

// RowKey identifies a row.
type RowKey struct {
	Suite   string `json:"suite"`
	Case    string `json:"case"`
	Broker  string `json:"broker"`
	Network string `json:"network"`
	Quick   bool   `json:"quick,omitempty"`
}

// LevelResult is a row's latency at one fixed load.
type LevelResult struct {
	Fraction  float64 `json:"fraction"`
	Load      float64 `json:"offered_per_s"`
	Delivered float64 `json:"delivered_per_s"` // mean over runs
	N         int     `json:"runs"`
	Need      int     `json:"runs_needed"`
	// Unreachable: the runs the CI targets would need, beyond the cap
	// (the level kept its first stage).
	Unreachable int     `json:"runs_target_needs,omitempty"`
	MeanMs      float64 `json:"mean_ms"`
	MeanHalf    float64 `json:"mean_ci_ms"`
	P99Ms       float64 `json:"p99_ms"`
	P99Half     float64 `json:"p99_ci_ms"`
	// Within: both CIs within the latency target or the floor.
	Within bool `json:"within"`
	// Sustained counts the runs whose verdict was sustained.
	Sustained int `json:"sustained"`
}

// Result is one row's capacity and latencies, for tables, plots and JSON.
type Result struct {
	RowKey
	Name    string           `json:"name,omitempty"`
	Factors scenario.Factors `json:"factors"`
	// Capacity is in offered messages per second (all publishers);
	// Delivered the deliveries per second it means (replication
	// included). Lo and Hi: its 95 % CI; HalfPct: the half-width in %.
	Capacity   float64   `json:"capacity_per_s"`
	Delivered  float64   `json:"delivered_per_s"`
	Lo         float64   `json:"ci_lo"`
	Hi         float64   `json:"ci_hi"`
	HalfPct    float64   `json:"ci_half_pct"`
	LowerBound bool      `json:"lower_bound,omitempty"`
	Outcome    string    `json:"outcome,omitempty"`
	Text       string    `json:"text"`
	Bound      Bound     `json:"bound"`
	Estimates  []float64 `json:"estimates"`
	Searches   int       `json:"searches"`
	// Unestimated: counted searches that sustained no load (Row).
	Unestimated int `json:"searches_without_estimate,omitempty"`
	Probes      int `json:"probes"`
	// Busy counts the probes and runs run again because the machine was
	// busy (busy.go).
	Busy int  `json:"busy_repeats"`
	Done bool `json:"done"`
	// LinkBound: the link's computed bound (shaped), in offered msgs/s.
	LinkBound float64       `json:"link_bound_per_s,omitempty"`
	Levels    []LevelResult `json:"levels,omitempty"`
	// Identities lists the builds and broker configurations of the
	// row's records: more than one means the row mixes them (a forced
	// resume).
	Identities []string `json:"identities"`
	FloorMs    float64  `json:"floor_ms,omitempty"`
	WallS      float64  `json:"wall_s"` // the row's case runs, summed
	row        Row
	records    []*results.Record
}

// Records are the row's records (probes and fixed-load runs), in order.
func (r Result) Records() []*results.Record { return r.records }

// Replayed is the row's replay (Analyze).
func (r Result) Replayed() Row { return r.row }

// Results groups capacity-probe and fixed-load records by row and
// replays each (records of other modes are left out), in the order the
// rows first appear.
func (p Params) Results(recs []results.Record) []Result {
	var keys []RowKey
	byKey := map[RowKey][]results.Record{}
	for _, r := range recs {
		if m := r.ModeOf(); m != results.ModeCapacityProbe && m != results.ModeFixedLoad || !r.Finished() {
			continue
		}
		k := RowKey{Suite: r.Suite, Case: r.CaseID, Broker: r.Broker, Network: r.Network.Profile, Quick: r.Quick}
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], r)
	}
	var out []Result
	for _, k := range keys {
		out = append(out, p.result(k, byKey[k]))
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case a.Suite != b.Suite:
			return false
		case a.Case != b.Case:
			return report.CaseLess(a.Case, b.Case)
		case a.Broker != b.Broker:
			return a.Broker < b.Broker
		}
		return networkRank(a.Network) < networkRank(b.Network)
	})
	return out
}

func networkRank(n string) string {
	if n == "wireline" {
		return "0"
	}
	return "1" + n
}

// RowOf is the policy's view of a row rebuilt from one of its records.
func RowOf(r *results.Record) lab.PolicyRow {
	row := lab.PolicyRow{Suite: r.Suite, Broker: r.Broker, Network: r.Network.Profile,
		Case: scenario.Case{ID: r.CaseID, Name: r.Name, Factors: r.Factors}, Verify: r.Network.Verify, Floor: r.LatencyFloor}
	if r.Network.Spec != nil {
		row.Link = *r.Network.Spec
	}
	return row
}

func (p Params) result(k RowKey, recs []results.Record) Result {
	first := &recs[0]
	row := RowOf(first)
	rw := p.Analyze(row, recs)
	res := Result{RowKey: k, Name: first.Name, Factors: first.Factors, row: rw,
		Capacity: round4(rw.Capacity), Lo: round4(rw.Lo), Hi: round4(rw.Hi), HalfPct: round4(rw.HalfPct),
		LowerBound: rw.LowerBound, Outcome: rw.Outcome, Text: rw.String(), Bound: rw.Bound,
		Searches: len(rw.Searches), Unestimated: rw.Unestimated, LinkBound: round4(rw.LinkBound)}
	for _, e := range rw.Estimates {
		res.Estimates = append(res.Estimates, round4(e))
	}
	for _, s := range append([]Search{rw.Pilot}, rw.Searches...) {
		res.Busy += s.Busy
	}
	for _, lv := range rw.Fixed {
		res.Busy += lv.Busy
	}
	if first.Result != nil && first.Result.Counts.Sent > 0 {
		res.Delivered = round4(rw.Capacity * float64(first.Result.Counts.Expected) / float64(first.Result.Counts.Sent))
	} else {
		res.Delivered = round4(rw.Capacity * first.Factors.Counts().RExpected)
	}
	ids := map[string]bool{}
	for i := range recs {
		r := &recs[i]
		res.records = append(res.records, r)
		res.WallS += r.WallS
		if r.Mode == results.ModeCapacityProbe {
			res.Probes++
		}
		if id := r.IdentityOf().String(); !ids[id] {
			ids[id] = true
			res.Identities = append(res.Identities, id)
		}
		if r.LatencyFloor != nil {
			res.FloorMs = r.LatencyFloor.FloorMs
		}
	}
	sort.Strings(res.Identities)
	_, more := p.policyNext(row, recs)
	res.Done = !more
	for _, lv := range rw.Fixed {
		st := p.Stat(lv, res.FloorMs)
		lr := LevelResult{Fraction: lv.Fraction, Load: round4(lv.Load), N: st.N, Need: lv.Need, Unreachable: lv.Unreachable,
			MeanMs: round4(st.Mean), MeanHalf: round4(st.MeanHalf), P99Ms: round4(st.P99), P99Half: round4(st.P99Half), Within: st.Within}
		var del float64
		for _, r := range lv.Runs {
			if r.Probe != nil && r.Probe.Sustained {
				lr.Sustained++
			}
			if r.Result != nil {
				del += r.Result.SubTput
			}
		}
		if len(lv.Runs) > 0 {
			lr.Delivered = round4(del / float64(len(lv.Runs)))
		}
		res.Levels = append(res.Levels, lr)
	}
	return res
}

// policyNext is Policy.Next's done flag for a row (more: it wants runs).
func (p Params) policyNext(row lab.PolicyRow, recs []results.Record) (lab.PolicyRun, bool) {
	run, done := Policy{P: p}.Next(row, recs)
	return run, !done
}

// WithinTarget reports whether the capacity's CI is within ±Target.
func (r Result) WithinTarget(p Params) bool {
	return r.Capacity > 0 && !math.IsNaN(r.HalfPct) && r.HalfPct <= 100*p.Target*(1+1e-9) && !math.IsInf(r.Hi, 1)
}

// WriteMarkdown writes the capacity tables: a validity table per broker ×
// network, the capacity of every row with its CI and bound, and the
// latency at each fixed load.
func WriteMarkdown(w io.Writer, p Params, rs []Result, sources []string) {
	fmt.Fprintf(w, "# Capacity\n\nFrom %s. Capacity: the highest offered load (messages per second, all publishers together; open loop, latency from the intended send time) the row sustains: arrivals ≥ %.0f %% of what is due, a backlog that does not grow by more than %.0f %% of it, nothing lost, p99 latency within the network's bound. Geometric mean of the counted searches (each to ±%.0f %% resolution), 95 %% CI by Stein's two-stage rule on log values, widened by half the resolution (docs/capacity.md).\n\n",
		strings.Join(sources, ", "), 100*(1-p.Tolerance), 100*p.Tolerance, 100*p.Resolution)
	writeValidity(w, p, rs)
	fmt.Fprintf(w, "\n## Capacity per row\n\n")
	fmt.Fprintln(w, "| suite | case | factors | broker | network | capacity msg/s (95 % CI) | delivered msg/s | bound | searches | probes | link bound | why |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---:|---|---:|---:|---:|---|")
	for _, r := range rs {
		link := "–"
		if r.LinkBound > 0 {
			link = fmtLoad(r.LinkBound)
			if r.Capacity > 0 {
				link += fmt.Sprintf(" (×%.2f)", r.Capacity/r.LinkBound)
			}
		}
		text := r.Text
		if !r.Done {
			text += " (not finished)"
		}
		if len(r.Identities) > 1 {
			text += fmt.Sprintf(" **mixed: %d builds/configurations**", len(r.Identities))
		}
		probes := strconv.Itoa(r.Probes)
		if r.Busy > 0 {
			probes += fmt.Sprintf(" (%d again: machine busy)", r.Busy)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %d | %s | %s | %s |\n", r.Suite, r.Case, shortFactors(r.Factors), r.Broker, r.Network,
			text, fmtLoad(r.Delivered), r.Bound, r.Searches, probes, link, r.Bound.Why)
	}
	if len(p.Loads) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Latency at fixed loads\n\nEach load a fraction of the row's capacity, open loop; mean and p99 latency (ms) over the runs with Stein's 95 %% CI (first stage %d runs, at most %d), ✓ when both are within ±%.0f %% or within the latency floor measured on the machine. A load whose first stage showed the targets need more runs than the cap keeps its first stage and says how many.\n\n",
		p.LatencyMinReps, p.LatencyMaxReps, 100*p.LatencyTarget)
	fmt.Fprintln(w, "| suite | case | broker | network | load | offered msg/s | delivered msg/s | mean ms | p99 ms | runs | within | sustained |")
	fmt.Fprintln(w, "|---|---|---|---|---:|---:|---:|---|---|---:|---|---:|")
	for _, r := range rs {
		for _, l := range r.Levels {
			if l.N == 0 {
				continue
			}
			mark := "✗"
			switch {
			case l.Within:
				mark = "✓"
			case l.Unreachable > 0:
				mark = fmt.Sprintf("✗ (needs %d runs)", l.Unreachable)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %.0f %% | %s | %s | %s | %s | %d | %s | %d/%d |\n", r.Suite, r.Case, r.Broker, r.Network, 100*l.Fraction,
				fmtLoad(l.Load), fmtLoad(l.Delivered), pm(l.MeanMs, l.MeanHalf), pm(l.P99Ms, l.P99Half), l.N, mark, l.Sustained, l.N)
		}
	}
}

// writeValidity is the table per broker × network: rows, rows within
// ±Target on capacity, how rows were bound, and rows within the latency
// target at each load.
func writeValidity(w io.Writer, p Params, rs []Result) {
	type agg struct {
		rows, within, done int
		bounds             map[string]int
		latRows, latWithin map[float64]int
		probes             int
		wall               float64
	}
	var keys []string
	aggs := map[string]*agg{}
	for _, r := range rs {
		k := r.Broker + " | " + r.Network
		a := aggs[k]
		if a == nil {
			a = &agg{bounds: map[string]int{}, latRows: map[float64]int{}, latWithin: map[float64]int{}}
			aggs[k] = a
			keys = append(keys, k)
		}
		a.rows++
		a.probes += r.Probes
		a.wall += r.WallS
		if r.Done {
			a.done++
		}
		if r.WithinTarget(p) {
			a.within++
		}
		a.bounds[r.Bound.String()]++
		for _, l := range r.Levels {
			if l.N > 0 {
				a.latRows[l.Fraction]++
				if l.Within {
					a.latWithin[l.Fraction]++
				}
			}
		}
	}
	sort.Strings(keys)
	head := "| broker | network | rows (finished) | capacity ±" + strconv.FormatFloat(100*p.Target, 'g', -1, 64) + " % | bound |"
	sep := "|---|---|---|---|---|"
	for _, f := range p.Loads {
		head += fmt.Sprintf(" latency at %.0f %% |", 100*f)
		sep += "---|"
	}
	fmt.Fprintf(w, "## Validity\n\n%s probes | case-run time |\n%s---:|---:|\n", head, sep)
	for _, k := range keys {
		a := aggs[k]
		var bs []string
		for b, n := range a.bounds {
			bs = append(bs, fmt.Sprintf("%s %d", b, n))
		}
		sort.Strings(bs)
		line := fmt.Sprintf("| %s | %d (%d) | %d/%d | %s |", k, a.rows, a.done, a.within, a.rows, strings.Join(bs, ", "))
		for _, f := range p.Loads {
			line += fmt.Sprintf(" %d/%d |", a.latWithin[f], a.latRows[f])
		}
		fmt.Fprintf(w, "%s %d | %.0f s |\n", line, a.probes, a.wall)
	}
}

func pm(v, h float64) string {
	if math.IsNaN(h) {
		return fmt.Sprintf("%.3g (no CI)", v)
	}
	return fmt.Sprintf("%.3g ± %.2g", v, h)
}

// shortFactors: 1/1/1 D/P auto bytes 100B.
func shortFactors(f scenario.Factors) string {
	sub := map[scenario.Subscription]string{scenario.Durable: "D", scenario.NonDurable: "ND"}[f.Subscription]
	del := map[scenario.Delivery]string{scenario.Persistent: "P", scenario.NonPersistent: "NP"}[f.Delivery]
	s := fmt.Sprintf("%d/%d/%d %s/%s %s %s %dB", f.Publishers, f.Subscribers, f.Topics, sub, del, f.Ack, f.Body, f.Size)
	if f.Selector {
		s += " sel"
	}
	return s
}

// WriteCSV writes one line per row and load (the capacity columns repeat).
func WriteCSV(w io.Writer, rs []Result) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"suite", "case", "broker", "network", "quick", "capacity_per_s", "ci_lo", "ci_hi", "ci_half_pct", "lower_bound", "outcome",
		"bound", "bound_basis", "searches", "probes", "link_bound_per_s", "load_fraction", "load_per_s", "runs", "mean_ms", "mean_ci_ms", "p99_ms", "p99_ci_ms", "latency_within"})
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
	for _, r := range rs {
		base := []string{r.Suite, r.Case, r.Broker, r.Network, strconv.FormatBool(r.Quick), f(r.Capacity), f(r.Lo), f(r.Hi), f(r.HalfPct),
			strconv.FormatBool(r.LowerBound), r.Outcome, r.Bound.Name, r.Bound.Basis, strconv.Itoa(r.Searches), strconv.Itoa(r.Probes), f(r.LinkBound)}
		if len(r.Levels) == 0 {
			_ = cw.Write(append(base, "", "", "", "", "", "", "", ""))
		}
		for _, l := range r.Levels {
			_ = cw.Write(append(append([]string{}, base...), f(l.Fraction), f(l.Load), strconv.Itoa(l.N), f(l.MeanMs), f(l.MeanHalf), f(l.P99Ms), f(l.P99Half), strconv.FormatBool(l.Within)))
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes the results as a JSON array (NaN and infinities as
// null).
func WriteJSON(w io.Writer, rs []Result) error {
	clean := make([]Result, len(rs))
	for i, r := range rs {
		r.Lo, r.Hi, r.HalfPct = finiteOr0(r.Lo), finiteOr0(r.Hi), finiteOr0(r.HalfPct)
		r.Levels = append([]LevelResult(nil), r.Levels...)
		for j := range r.Levels {
			l := &r.Levels[j]
			l.MeanHalf, l.P99Half = finiteOr0(l.MeanHalf), finiteOr0(l.P99Half)
		}
		clean[i] = r
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(clean)
}

// finiteOr0: NaN and infinities cannot be JSON; 0 says "none".
func finiteOr0(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}
