package plan

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"pslab/internal/results"
)

// The machine time of capacity runs (`pslab plan capacity-budget`): what
// a row of pslab capacity cost in runs and seconds, measured from its
// records, and what the capacity-mode reproduction would cost on that
// evidence (docs/capacity.md, "The capacity-mode reproduction").

// BudgetGroup is what the capacity rows of one broker over one network
// cost: runs per row (every probe and fixed-load run, those run again on
// a busy machine included) and seconds per run.
type BudgetGroup struct {
	Network, Broker string
	Rows            int
	// RunsMedian, RunsMin and RunsMax are the runs per row.
	RunsMedian       float64
	RunsMin, RunsMax int
	// Pilot, Counted and Fixed are the median runs per row of the pilot
	// search, the counted searches and the fixed loads.
	Pilot, Counted, Fixed float64
	// SecPerRun is the median machine time of a run: from its start to
	// the next run's start in the same lab of the same run (set-up, quiet
	// and idle waits, purges and the run itself); a lab's last run counts
	// its own wall time and the purge after it.
	SecPerRun float64
}

// SecPerRow is the median row's runs times the median run's seconds.
func (g BudgetGroup) SecPerRow() float64 { return g.RunsMedian * g.SecPerRun }

// BudgetNetwork is the projection for one network: Rows rows of the
// reproduction, each costing the network's median runs per row times its
// median seconds per run, shared by Labs parallel labs.
type BudgetNetwork struct {
	Network               string
	Rows, Labs            int
	RunsPerRow, SecPerRun float64
	Seconds               float64
}

// Budget is the measured cost of capacity bundles and the projection.
type Budget struct {
	Records  int // capacity-probe and fixed-load records read
	Groups   []BudgetGroup
	Networks []BudgetNetwork
	// Unprojected are the networks measured but not in the rows asked
	// for, and those asked for but not measured.
	Unprojected []string
	Seconds     float64 // projected machine time, all networks
}

// CapacityBudget measures the runs per row and seconds per run of the
// capacity records among recs (other modes are left out) and projects the
// reproduction: rows[network] rows over labs[network] parallel labs (1
// when not given). An error when recs hold no capacity record.
func CapacityBudget(recs []results.Record, rows, labs map[string]int) (Budget, error) {
	var b Budget
	var caps []*results.Record
	for i := range recs {
		if m := recs[i].ModeOf(); m == results.ModeCapacityProbe || m == results.ModeFixedLoad {
			caps = append(caps, &recs[i])
		}
	}
	b.Records = len(caps)
	if len(caps) == 0 {
		return b, fmt.Errorf("no capacity record (mode capacity-probe or fixed-load) among %d record(s): give bundles of pslab capacity", len(recs))
	}
	cost := runCosts(caps)

	type rowKey struct{ suite, caseID string }
	groups := map[nb]map[rowKey][]*results.Record{}
	for _, r := range caps {
		k := nb{r.Network.Profile, r.Broker}
		if groups[k] == nil {
			groups[k] = map[rowKey][]*results.Record{}
		}
		rk := rowKey{r.Suite, r.CaseID}
		groups[k][rk] = append(groups[k][rk], r)
	}
	keys := make([]nb, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sortPairs(keys)
	netRuns, netSecs := map[string][]float64{}, map[string][]float64{}
	for _, k := range keys {
		var runs, pilot, counted, fixed, secs []float64
		for _, rs := range groups[k] {
			var p, c, f float64
			for _, r := range rs {
				switch {
				case r.ModeOf() == results.ModeFixedLoad:
					f++
				case r.Probe != nil && r.Probe.Search == 0:
					p++
				default:
					c++
				}
				secs = append(secs, cost[r])
			}
			runs = append(runs, float64(len(rs)))
			pilot, counted, fixed = append(pilot, p), append(counted, c), append(fixed, f)
		}
		g := BudgetGroup{Network: k.net, Broker: k.broker, Rows: len(groups[k]),
			RunsMedian: median(runs), RunsMin: int(slices.Min(runs)), RunsMax: int(slices.Max(runs)),
			Pilot: median(pilot), Counted: median(counted), Fixed: median(fixed), SecPerRun: median(secs)}
		b.Groups = append(b.Groups, g)
		netRuns[k.net] = append(netRuns[k.net], runs...)
		netSecs[k.net] = append(netSecs[k.net], secs...)
	}
	nets := make([]string, 0, len(netRuns))
	for n := range netRuns {
		nets = append(nets, n)
	}
	sort.Strings(nets)
	for _, n := range nets {
		rowsN, ok := rows[n]
		if !ok {
			b.Unprojected = append(b.Unprojected, n+": measured, but no rows given for it (--rows)")
			continue
		}
		l := max(labs[n], 1)
		bn := BudgetNetwork{Network: n, Rows: rowsN, Labs: l, RunsPerRow: median(netRuns[n]), SecPerRun: median(netSecs[n])}
		bn.Seconds = bn.RunsPerRow * bn.SecPerRun * float64(rowsN) / float64(l)
		b.Networks = append(b.Networks, bn)
		b.Seconds += bn.Seconds
	}
	for n := range rows {
		if _, ok := netRuns[n]; !ok {
			b.Unprojected = append(b.Unprojected, n+": rows given, but no capacity record of it: not projected")
		}
	}
	sort.Strings(b.Unprojected)
	return b, nil
}

// runCosts is each record's machine time: from its start to the next
// start in the same run and lab, or, for a lab's last, its wall time and
// the purge after it.
func runCosts(recs []*results.Record) map[*results.Record]float64 {
	type labKey struct{ run, net, lab string }
	byLab := map[labKey][]*results.Record{}
	for _, r := range recs {
		k := labKey{r.RunID, r.Network.Profile, r.Network.Lab}
		byLab[k] = append(byLab[k], r)
	}
	cost := map[*results.Record]float64{}
	for _, rs := range byLab {
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].Started.Before(rs[j].Started) })
		for i, r := range rs {
			if i+1 < len(rs) {
				cost[r] = rs[i+1].Started.Sub(r.Started).Seconds()
				continue
			}
			cost[r] = r.WallS
			if r.Phases != nil {
				cost[r] += r.Phases.PurgeAfterS
			}
		}
	}
	return cost
}

// WriteCapacityBudget writes b as Markdown: the measured cost per network
// and broker, then the projection.
func WriteCapacityBudget(w io.Writer, b Budget) {
	fmt.Fprintf(w, "## Measured: %d capacity record(s)\n\n", b.Records)
	fmt.Fprintln(w, "| network | broker | rows | runs/row median (min-max) | pilot + counted + fixed (medians) | s/run median | s/row median |")
	fmt.Fprintln(w, "|---|---|---:|---|---|---:|---:|")
	for _, g := range b.Groups {
		fmt.Fprintf(w, "| %s | %s | %d | %g (%d-%d) | %g + %g + %g | %.1f | %.0f |\n", g.Network, g.Broker, g.Rows,
			g.RunsMedian, g.RunsMin, g.RunsMax, g.Pilot, g.Counted, g.Fixed, g.SecPerRun, g.SecPerRow())
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "## Projected")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| network | rows | runs/row | s/run | labs | machine time |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
	for _, n := range b.Networks {
		fmt.Fprintf(w, "| %s | %d | %g | %.1f | %d | %.0f s (%.1f h) |\n", n.Network, n.Rows, n.RunsPerRow, n.SecPerRun, n.Labs, n.Seconds, n.Seconds/3600)
	}
	fmt.Fprintf(w, "\nProjected machine time: %.0f s (%.1f h): each network's rows x its median runs per row x its median seconds per run, over its labs.\n", b.Seconds, b.Seconds/3600)
	if len(b.Unprojected) > 0 {
		fmt.Fprintf(w, "\nNot projected:\n\n- %s\n", strings.Join(b.Unprojected, "\n- "))
	}
}
