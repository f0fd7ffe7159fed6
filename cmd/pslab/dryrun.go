package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"pslab/internal/lab"
)

// --dry-run: everything a run checks, and the plan with its estimated
// machine time, then exit without building anything.

func addDryRunFlag(cmd *cobra.Command, dry *bool) {
	cmd.Flags().BoolVar(dry, "dry-run", false, "check everything, print the plan (cases x brokers x networks x repetitions, estimated machine time) and exit without building anything: no namespace, no broker, no file")
}

// dryRun checks what a new run into out would check besides the plans
// (a root that already holds a run), then prints the plans.
func dryRun(cmd *cobra.Command, plans []lab.Plan, opts lab.Options, out string) error {
	root := out
	if root == "" && len(plans) == 1 {
		root = outDir("", plans[0].Suite.Name, false)
	}
	if root != "" {
		if err := checkNewRunRoot(root); err != nil {
			return err
		}
	}
	return printPlans(cmd, plans, opts, out)
}

// printPlans writes the plans of a run into out (as the run would lay
// them out) and their estimated machine time. It writes nothing else.
func printPlans(cmd *cobra.Command, plans []lab.Plan, opts lab.Options, out string) error {
	w := cmd.OutOrStdout()
	var least, most time.Duration
	runsLeast, runsMost := 0, 0
	for _, p := range plans {
		o := opts
		dir := out
		if dir == "" {
			dir = outDir("", p.Suite.Name, false)
		} else {
			dir = outDir(out, p.Suite.Name, len(plans) > 1)
		}
		e := p.Estimate(o)
		writePlan(w, p, e, dir, o.Policy)
		least, most = least+e.Least, most+e.Most
		runsLeast, runsMost = runsLeast+e.RunsLeast, runsMost+e.RunsMost
	}
	fmt.Fprintf(w, "total: %s case runs, estimated machine time %s\n", span(runsLeast, runsMost), durSpan(least, most))
	fmt.Fprintln(w, "dry run: nothing was built (no namespace, no broker) and nothing was written")
	return nil
}

// writePlan writes plan p, its estimate e and its directory dir; pol is
// the run's row policy (nil for the paper's repetitions).
func writePlan(w io.Writer, p lab.Plan, e lab.Estimate, dir string, pol lab.RowPolicy) {
	fmt.Fprintf(w, "suite %s (%s) -> %s\n", p.Suite.Name, p.Suite.File, dir)
	mode := "x " + p.RepsText()
	if d, ok := pol.(interface{ Describe() string }); ok { // pslab capacity's searches
		mode = d.Describe()
	}
	fmt.Fprintf(w, "  %d case(s) x %d broker(s) (%s) x %d network(s) (%s) %s\n",
		len(p.Cases), len(p.Brokers), strings.Join(p.Brokers, ", "), len(p.Networks), strings.Join(p.Networks, ", "), mode)
	for _, n := range p.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  network\tlabs\twarm-up / window / drain\tcase runs\tper run\tset-up\tmachine time")
	for i, ne := range e.Networks {
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%s\t%s\t%s\n", ne.Network, ne.Labs, phasesOf(p, p.Networks[i], pol),
			span(ne.RunsLeast, ne.RunsMost), durSpan(ne.PerRun, ne.PerRunMost), ne.SetUp.Round(time.Second), durSpan(ne.Least, ne.Most))
	}
	tw.Flush()
	fmt.Fprintln(w, "  cases:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range p.Cases {
		brokers := ""
		if len(c.Brokers) > 0 {
			brokers = "only on " + strings.Join(c.Brokers, ", ")
		}
		fmt.Fprintf(tw, "    %s\t%s\t%s\n", c.ID, c.Factors.String(), strings.TrimSpace(c.Name+"  "+brokers))
	}
	tw.Flush()
}

// phasesOf is the cases' warm-up / window / drain on a network, as a
// range when the cases differ, or those the policy gives its runs there
// (pslab capacity's probe phases).
func phasesOf(p lab.Plan, network string, pol lab.RowPolicy) string {
	if w, win, d, ok := lab.PolicyPhases(pol, network); ok {
		return w.String() + " / " + win.String() + " / " + d.String()
	}
	var w, win, d []time.Duration
	for _, c := range p.Cases {
		c = p.Suite.ForNetwork(c, network)
		w, win, d = append(w, c.Warmup), append(win, c.Window), append(d, c.Drain)
	}
	return durRange(w) + " / " + durRange(win) + " / " + durRange(d)
}

func durRange(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	lo, hi := ds[0], ds[0]
	for _, d := range ds {
		lo, hi = min(lo, d), max(hi, d)
	}
	if lo == hi {
		return lo.String()
	}
	return lo.String() + "-" + hi.String()
}

func span(least, most int) string {
	if most > least {
		return fmt.Sprintf("%d-%d", least, most)
	}
	return fmt.Sprint(least)
}

func durSpan(least, most time.Duration) string {
	s := lab.FormatDuration(least)
	if most > least {
		s += " to " + lab.FormatDuration(most)
	}
	return s
}
