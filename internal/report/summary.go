// Package report turns result records into what people read, gate on and
// script: the aggregation of repetitions (Build), the summary printed at
// the end of a run, the report's tables against the paper's values with
// the validity table, comparisons of two result sets with their warnings
// and gate, the statistics behind them, and the markdown, CSV and JSON
// formats (the HTML page is package report/htmlreport, the paper's claims
// package report/claims).
package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"pslab/internal/results"
)

// rowKey is one line of the summary: a case of a suite (full or quick
// settings) on a broker; the networks are its columns.
type rowKey struct {
	suite, caseID, broker string
	quick                 bool
}

// WriteSummary prints one row per case x broker with each network's
// numbers side by side and, when wireline and another network are both
// present, the ratio of subscriber throughput (other / wireline). It reads
// the same aggregation as the report (Build).
func WriteSummary(w io.Writer, recs []results.Record) {
	d := Build(recs)
	var rows []rowKey
	seen := map[rowKey]bool{}
	labels := map[rowKey]string{}
	for _, g := range d.Groups {
		k := rowKey{g.Suite, g.Case, g.Broker, g.Quick}
		if !seen[k] {
			seen[k] = true
			rows = append(rows, k)
			labels[k] = g.Label()
		}
	}
	cell := func(k rowKey, network string) *Group {
		return d.index[GroupKey{Suite: k.suite, Case: k.caseID, Broker: k.broker, Network: network, Quick: k.quick}]
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"case", "broker"}
	for _, n := range d.Networks {
		head = append(head, n+" pub/s", "sub/s", "lat ms", "p99 ms", "B/msg up/down", "lost", "dup")
	}
	ratioNets := ratioColumns(d.Networks)
	for _, n := range ratioNets {
		head = append(head, n+"/wireline")
	}
	head = append(head, "flags")
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, k := range rows {
		id := labels[k] // the case id, with a sweep's values
		if len(d.Suites) > 1 {
			id = k.suite + "/" + id
		}
		if k.quick {
			id += " (quick)"
		}
		line := []string{id, k.broker}
		var flags []string
		for _, n := range d.Networks {
			g := cell(k, n)
			if g == nil || g.Reps == 0 {
				status := "-"
				if g != nil && len(g.Failed) > 0 {
					status = "FAILED"
				}
				line = append(line, status, "", "", "", "", "", "")
				continue
			}
			line = append(line, withCI(g.Pub), withCI(g.Sub), fmtMs(g.Lat.Mean), fmtMs(g.P99.Mean),
				strings.ReplaceAll(wireCell(g), "–", "-"), lostCell(g), fmt.Sprint(g.Dup))
			for f := range g.Flags {
				flags = append(flags, n+":"+f)
			}
		}
		for _, n := range ratioNets {
			wl, other := cell(k, "wireline"), cell(k, n)
			if wl == nil || other == nil || wl.Reps == 0 || other.Reps == 0 || wl.Sub.Mean == 0 {
				line = append(line, "-")
				continue
			}
			line = append(line, fmt.Sprintf("%.3f", other.Sub.Mean/wl.Sub.Mean))
		}
		sort.Strings(flags)
		line = append(line, strings.Join(flags, ","))
		fmt.Fprintln(tw, strings.Join(line, "\t")+"\t")
	}
	tw.Flush()
	if anyLostUnverified(d) {
		fmt.Fprintln(w, lostNote)
	}
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
func withCI(s Stat) string {
	if s.N < 2 || math.IsNaN(s.CI) {
		return fmt.Sprintf("%.1f", s.Mean)
	}
	return fmt.Sprintf("%.1f±%.1f", s.Mean, s.CI)
}
