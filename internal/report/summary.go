// Package report turns result records into tables: the summary printed at
// the end of a run (networks side by side, with the wireless/wireline
// ratio), and comparisons against the paper's published values.
package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"pslab/internal/metrics"
	"pslab/internal/results"
)

// Cell aggregates the repetitions of one case x broker x network.
type Cell struct {
	PubTput, PubCI float64
	SubTput, SubCI float64
	LatMeanMs      float64
	LatP99Ms       float64
	Lost, Dup      int64
	Reps, Failed   int
	Flags          map[string]bool
}

// key identifies one row of the summary: a case of a suite (full or
// quick settings) on a broker.
type key struct {
	suite, caseID, broker string
	quick                 bool
}

// aggregate groups records by case, broker and network.
func aggregate(recs []results.Record) (rows []key, nets []string, cells map[key]map[string]*Cell) {
	cells = map[key]map[string]*Cell{}
	seenNet := map[string]bool{}
	type acc struct{ pub, sub, lat, p99 []float64 }
	accs := map[key]map[string]*acc{}
	for _, r := range recs {
		k := key{r.Suite, r.CaseID, r.Broker, r.Quick}
		if cells[k] == nil {
			cells[k] = map[string]*Cell{}
			accs[k] = map[string]*acc{}
			rows = append(rows, k)
		}
		n := r.Network.Profile
		if !seenNet[n] {
			seenNet[n] = true
			nets = append(nets, n)
		}
		c := cells[k][n]
		if c == nil {
			c = &Cell{Flags: map[string]bool{}}
			cells[k][n] = c
			accs[k][n] = &acc{}
		}
		if r.Error != "" || r.Result == nil {
			c.Failed++
			continue
		}
		a := accs[k][n]
		c.Reps++
		a.pub = append(a.pub, r.Result.PubTput)
		a.sub = append(a.sub, r.Result.SubTput)
		if r.Result.Latency.Count > 0 { // no deliveries: no latency, not 0
			a.lat = append(a.lat, r.Result.Latency.MeanMs)
			a.p99 = append(a.p99, r.Result.Latency.P99Ms)
		}
		c.Lost += r.Result.Counts.Lost
		c.Dup += r.Result.Counts.Duplicated
		for _, f := range r.Flags {
			c.Flags[strings.SplitN(f, ":", 2)[0]] = true
		}
	}
	for k, byNet := range accs {
		for n, a := range byNet {
			c := cells[k][n]
			if c.Reps == 0 {
				continue
			}
			c.PubTput, c.PubCI = metrics.MeanCI95(a.pub)
			c.SubTput, c.SubCI = metrics.MeanCI95(a.sub)
			c.LatMeanMs, c.LatP99Ms = math.NaN(), math.NaN()
			if len(a.lat) > 0 {
				c.LatMeanMs, _ = metrics.MeanCI95(a.lat)
				c.LatP99Ms, _ = metrics.MeanCI95(a.p99)
			}
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].suite != rows[j].suite {
			return rows[i].suite < rows[j].suite
		}
		if rows[i].caseID != rows[j].caseID {
			return rows[i].caseID < rows[j].caseID
		}
		return rows[i].broker < rows[j].broker
	})
	return rows, nets, cells
}

// WriteSummary prints one row per case x broker with each network's
// numbers side by side and, when wireline and another network are both
// present, the ratio of subscriber throughput (other / wireline).
func WriteSummary(w io.Writer, recs []results.Record) {
	rows, nets, cells := aggregate(recs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	suites := map[string]bool{}
	for _, k := range rows {
		suites[k.suite] = true
	}
	head := []string{"case", "broker"}
	for _, n := range nets {
		head = append(head, n+" pub/s", "sub/s", "lat ms", "p99 ms", "lost", "dup")
	}
	ratioNets := ratioColumns(nets)
	for _, n := range ratioNets {
		head = append(head, n+"/wireline")
	}
	head = append(head, "flags")
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, k := range rows {
		id := k.caseID
		if len(suites) > 1 {
			id = k.suite + "/" + id
		}
		if k.quick {
			id += " (quick)"
		}
		line := []string{id, k.broker}
		var flags []string
		for _, n := range nets {
			c := cells[k][n]
			if c == nil || c.Reps == 0 {
				status := "-"
				if c != nil && c.Failed > 0 {
					status = "FAILED"
				}
				line = append(line, status, "", "", "", "", "")
				continue
			}
			line = append(line, withCI(c.PubTput, c.PubCI, c.Reps), withCI(c.SubTput, c.SubCI, c.Reps),
				fmtMs(c.LatMeanMs), fmtMs(c.LatP99Ms),
				fmt.Sprint(c.Lost), fmt.Sprint(c.Dup))
			for f := range c.Flags {
				flags = append(flags, n+":"+f)
			}
		}
		for _, n := range ratioNets {
			wl, other := cells[k]["wireline"], cells[k][n]
			if wl == nil || other == nil || wl.Reps == 0 || other.Reps == 0 || wl.SubTput == 0 {
				line = append(line, "-")
				continue
			}
			line = append(line, fmt.Sprintf("%.3f", other.SubTput/wl.SubTput))
		}
		sort.Strings(flags)
		line = append(line, strings.Join(flags, ","))
		fmt.Fprintln(tw, strings.Join(line, "\t")+"\t")
	}
	tw.Flush()
}

func ratioColumns(nets []string) []string {
	hasWireline := false
	for _, n := range nets {
		hasWireline = hasWireline || n == "wireline"
	}
	if !hasWireline {
		return nil
	}
	var out []string
	for _, n := range nets {
		if n != "wireline" {
			out = append(out, n)
		}
	}
	return out
}

// fmtMs formats milliseconds; NaN (nothing delivered) as "-".
func fmtMs(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}

// withCI formats a mean, with its 95 % half-width when there are reps.
func withCI(mean, half float64, reps int) string {
	if reps < 2 {
		return fmt.Sprintf("%.1f", mean)
	}
	return fmt.Sprintf("%.1f±%.1f", mean, half)
}
