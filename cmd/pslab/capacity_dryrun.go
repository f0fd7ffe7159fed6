package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"pslab/internal/capacity"
	"pslab/internal/lab"
	"pslab/netem"
)

// pslab capacity --dry-run: everything a capacity run checks, then the
// plan of its rows and the bounds of its machine time, without building
// anything or writing a file.

// capacityRowRuns are the runs (probes and fixed-load runs) of one row
// at the least and at the most under p on prof: a search has at least two
// probes (one sustained, one failing) and at most MaxProbes, each run
// again on a busy machine up to its attempts; the pilot is a search; each
// load runs LatencyMinReps to LatencyMaxReps times.
func capacityRowRuns(p capacity.Params, prof netem.Profile) (least, most int) {
	attempts := 1
	if !prof.Shaped() {
		attempts = max(p.BusyAttempts, 1)
	}
	searchesLeast, searchesMost := 1+p.MinSearches, 1+p.MaxSearches
	least = 2*searchesLeast + len(p.Loads)*p.LatencyMinReps
	most = searchesMost*p.MaxProbes*attempts + len(p.Loads)*p.LatencyMaxReps
	return least, most
}

// printCapacityPlans writes the plans of a capacity run into out and the
// bounds of its machine time. It writes nothing else. resumed: the rows
// already finished in out are not taken off (the bounds are an upper
// bound).
func printCapacityPlans(cmd *cobra.Command, plans []lab.Plan, opts lab.Options, p capacity.Params, out string, resumed bool) error {
	w := cmd.OutOrStdout()
	var least, most time.Duration
	runsLeast, runsMost := 0, 0
	fmt.Fprintf(w, "capacity mode: a pilot search and %d-%d counted searches per row (Stein's rule for ±%g %%), at most %d probes a search, to ±%g %% resolution; fixed loads %s, %d-%d runs each\n",
		p.MinSearches, p.MaxSearches, 100*p.Target, p.MaxProbes, 100*p.Resolution, loadsText(p.Loads), p.LatencyMinReps, p.LatencyMaxReps)
	for _, pl := range plans {
		dir := out
		if dir == "" {
			dir = outDir("", pl.Suite.Name, false)
		} else {
			dir = outDir(out, pl.Suite.Name, len(plans) > 1)
		}
		l, m, rl, rm, err := writeCapacityPlan(w, pl, opts, p, dir)
		if err != nil {
			return err
		}
		least, most, runsLeast, runsMost = least+l, most+m, runsLeast+rl, runsMost+rm
	}
	fmt.Fprintf(w, "total: %s runs, estimated machine time %s (waits for a quiet machine not included)\n", span(runsLeast, runsMost), durSpan(least, most))
	if resumed {
		fmt.Fprintln(w, "resume: the rows already finished are not taken off; the figures are an upper bound")
	}
	fmt.Fprintln(w, "an estimate from measured bundles: pslab plan capacity-budget DIR (docs/capacity.md)")
	fmt.Fprintln(w, "dry run: nothing was built (no namespace, no broker) and nothing was written")
	return nil
}

// writeCapacityPlan writes one plan's rows per network and returns its
// machine time and runs at the least and the most.
func writeCapacityPlan(w io.Writer, pl lab.Plan, opts lab.Options, p capacity.Params, dir string) (least, most time.Duration, runsLeast, runsMost int, err error) {
	rows := 0
	for _, c := range pl.Cases {
		for _, b := range pl.Brokers {
			if c.ForBroker(b) {
				rows++
			}
		}
	}
	fmt.Fprintf(w, "suite %s (%s) -> %s\n", pl.Suite.Name, pl.Suite.File, dir)
	fmt.Fprintf(w, "  %d case(s) x %d broker(s) (%s) x %d network(s) (%s): %d row(s) per network\n",
		len(pl.Cases), len(pl.Brokers), strings.Join(pl.Brokers, ", "), len(pl.Networks), strings.Join(pl.Networks, ", "), rows)
	for _, n := range pl.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	e := pl.Estimate(opts) // for the labs and their set-up
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  network\tlabs\tprobe warm-up/window/drain\tp99 bound\truns per row\truns\tper run\tset-up\tmachine time")
	for i, name := range pl.Networks {
		prof, perr := netem.LoadProfile(name)
		if perr != nil {
			return 0, 0, 0, 0, perr
		}
		ne := e.Networks[i]
		ph := p.PhasesFor(prof)
		rowLeast, rowMost := capacityRowRuns(p, prof)
		perRun := ph.Warmup + ph.Window + lab.RunOverheadEstimate
		perRunMost := perRun + ph.Drain
		labs := time.Duration(max(ne.Labs, 1))
		nl, nm := rows*rowLeast, rows*rowMost
		tl := ne.SetUp + time.Duration(nl)*perRun/labs
		tm := ne.SetUp + time.Duration(nm)*perRunMost/labs
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", ne.Network, ne.Labs, ph, p.Bound(prof),
			span(rowLeast, rowMost), span(nl, nm), durSpan(perRun, perRunMost), ne.SetUp.Round(time.Second), durSpan(tl, tm))
		least, most, runsLeast, runsMost = least+tl, most+tm, runsLeast+nl, runsMost+nm
	}
	tw.Flush()
	writeCases(w, pl)
	return least, most, runsLeast, runsMost, nil
}
