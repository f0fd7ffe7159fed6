package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"pslab/internal/lab"
	"pslab/internal/model"
	"pslab/internal/plot"
)

// henjesExperiments are the scenario files of Henjes et al.'s experiments,
// by short name, in the order they run.
var henjesExperiments = []string{"publishers", "subscribers", "size", "activation", "topics", "or", "and", "grid"}

func newModelMeasureCmd() *cobra.Command {
	var f runFlags
	var dir, exps string
	cmd := &cobra.Command{
		Use:   "measure",
		Short: "Run Henjes et al.'s experiments on a broker, fit the models and draw the figures",
		Long: `One command for "how many filters and subscribers can my broker carry, and
what does each cost": runs the scenario files scenarios/henjes-<experiment>.yaml
(publishers, subscribers, size, activation, topics, or, and, grid) on the
given broker(s), then

  REPORT.md                the command, wall time and, per broker and
                           filter kind, what a message, a filter and a
                           subscriber cost in µs with the fit quality
  fit-demand.md / .json    the three model forms fitted to the simple-filter
                           designs (henjes-grid, the papers' fit, and
                           henjes-activation, whose same vs distinct extra
                           filters SunMQ's form needs) with B = broker CPU s
                           per received message
  fit-capacity.md / .json  the same with B = 1 / received throughput, from
                           the runs the capacity rule calls saturated (or
                           the reason none qualified)
  plots/                   throughput vs filters per r with the model dashed,
                           simple vs OR-filters, AND-filter order

all in --out, one bundle directory per experiment. See docs/filters.md.`,
		Example: `  pslab model measure --broker nats --quick
  pslab model measure --broker artemis --out runs/henjes-artemis
  pslab model measure --broker nats,artemis --experiments grid,or,and --lab p6`,
		Args: argsCheck(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return modelMeasure(cmd, f, dir, exps) },
	}
	addRunFlags(cmd, &f, false)
	fl := cmd.Flags()
	fl.BoolVar(&f.quick, "quick", false, "apply the files' quick overrides (short windows)")
	fl.StringVar(&dir, "scenarios", "scenarios", "directory holding henjes-*.yaml")
	fl.StringVar(&exps, "experiments", "all", "experiments to run: all, or a comma list of "+strings.Join(henjesExperiments, ", "))
	return cmd
}

func modelMeasure(cmd *cobra.Command, f runFlags, dir, exps string) error {
	names := henjesExperiments
	if exps != "all" {
		names = nil
		for _, e := range strings.Split(exps, ",") {
			e = strings.TrimSpace(e)
			if !contains(henjesExperiments, e) {
				return badInputf("--experiments %q: unknown experiment %q (known: %s)", exps, e, strings.Join(henjesExperiments, ", "))
			}
			names = append(names, e)
		}
	}
	opts, err := optionsFrom(cmd, f)
	if err != nil {
		return err
	}
	opts.WarmupRun = true // always: the first case after a broker start is an outlier otherwise
	if f.out == "" {
		f.out = filepath.Join("runs", fmt.Sprintf("henjes-%s-%s", strings.Join(opts.Brokers, "-"), time.Now().Format("20060102-150405")))
	}
	files := make([]string, len(names))
	for i, n := range names {
		files[i] = filepath.Join(dir, "henjes-"+n+".yaml")
	}
	plans, err := loadPlans(files, f.quick, opts)
	if err != nil {
		return err
	}
	start := time.Now()
	// Failed case runs are recorded; fit and draw what was measured, then
	// report the failure.
	var runErr error
	for _, p := range plans {
		if err := runPlans(cmd, []lab.Plan{p}, opts, filepath.Join(f.out, p.Suite.Name)); err != nil {
			if cmd.Context() != nil && cmd.Context().Err() != nil {
				return err
			}
			runErr = errors.Join(runErr, fmt.Errorf("%s: %w", p.Suite.Name, err))
		}
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "measured in %s\n", time.Since(start).Round(time.Second))
	var bundles []string
	for _, p := range plans {
		bundles = append(bundles, filepath.Join(f.out, p.Suite.Name))
	}
	// The models are fitted to the simple-filter designs: the joint grid
	// (the papers' fit) and the activation series (same vs distinct extra
	// filters, which SunMQ's t_fltr^diff needs).
	var fitBundles []string
	for _, n := range []string{"grid", "activation"} {
		if contains(names, n) {
			fitBundles = append(fitBundles, filepath.Join(f.out, "henjes-"+n))
		}
	}
	var summary bytes.Buffer
	if len(fitBundles) > 0 {
		for _, resp := range []model.Response{model.Demand, model.Capacity} {
			writeMeasureFit(cmd, fitBundles, filepath.Join(f.out, "fit-"+string(resp)), resp, &summary)
		}
	}
	ff := modelFitFlags{form: "all", filtersFrom: "record", response: string(model.Demand), weighting: "relative", mix: "different"}
	if _, groups, err := fitRecords(bundles, ff); err == nil {
		o, err := plot.Henjes(groups, plot.HenjesOptions{OutDir: filepath.Join(f.out, "plots"), Response: model.Demand})
		for _, s := range o.Skipped {
			fmt.Fprintln(cmd.ErrOrStderr(), "plot skipped:", s)
		}
		if err != nil {
			fmt.Fprintln(cmd.ErrOrStderr(), "plots:", err)
		}
	} else {
		fmt.Fprintln(cmd.ErrOrStderr(), "plots: no fit:", err)
	}
	wall := time.Since(start).Round(time.Second)
	var rep bytes.Buffer
	fmt.Fprintf(&rep, "# Henjes et al. on %s\n\n", strings.Join(opts.Brokers, " and "))
	fmt.Fprintf(&rep, "Command: `pslab %s`  \nWall time: %s (measurement and fits). Experiments: %s. Details: docs/filters.md.\n\n",
		strings.Join(os.Args[1:], " "), wall, strings.Join(names, ", "))
	rep.Write(summary.Bytes())
	rep.WriteString("Full fits (all forms, standard errors, skipped runs): fit-demand.md, fit-capacity.md; figures: plots/.\n")
	if err := writeOut(nil, filepath.Join(f.out, "REPORT.md"), rep.Bytes()); err != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "results in %s (REPORT.md, fit-demand.md, fit-capacity.md, plots/), wall time %s\n", f.out, wall)
	return runErr
}

// writeMeasureFit fits bundles with resp and writes base.md and base.json
// (a refusal is written into base.md instead), and appends the cost
// summary to summary.
func writeMeasureFit(cmd *cobra.Command, bundles []string, base string, resp model.Response, summary *bytes.Buffer) {
	ff := modelFitFlags{form: "all", filtersFrom: "record", response: string(resp), weighting: "relative", mix: "different"}
	rep, _, err := fitRecords(bundles, ff)
	var md bytes.Buffer
	fmt.Fprintf(summary, "## Response %s\n\n", resp)
	if err != nil {
		fmt.Fprintf(&md, "# Service-time model fits (%s)\n\nNo fit: %v\n", resp, err)
		fmt.Fprintf(summary, "No fit: %v\n\n", err)
	} else {
		if err := model.WriteFitMarkdown(&md, rep); err != nil {
			fmt.Fprintln(cmd.ErrOrStderr(), "fit:", err)
			return
		}
		used := 0
		for _, g := range rep.Groups {
			used += g.N
		}
		fmt.Fprintf(summary, "%d of %d runs used (skipped: %s).\n\n", used, rep.Records, skippedText(rep.Skipped))
		_ = model.WriteCostSummary(summary, rep)
		summary.WriteString("\n")
		js, _ := json.MarshalIndent(rep, "", "  ")
		if err := writeOut(nil, base+".json", js); err != nil {
			fmt.Fprintln(cmd.ErrOrStderr(), err)
		}
	}
	if err := writeOut(nil, base+".md", md.Bytes()); err != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "\n%s", md.String())
}

func skippedText(cs []model.ReasonCount) string {
	if len(cs) == 0 {
		return "none"
	}
	var s []string
	for _, c := range cs {
		s = append(s, fmt.Sprintf("%d %s", c.Count, c.Reason))
	}
	return strings.Join(s, ", ")
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
