// Package henjes is the workflow of "pslab model measure": it runs Henjes
// et al.'s filter and capacity experiments (scenarios/henjes-*.yaml) on
// brokers, fits the service-time models (internal/model) to what was
// measured, draws the figures (internal/plot) and writes REPORT.md.
package henjes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"pslab/internal/lab"
	"pslab/internal/model"
	"pslab/internal/plot"
	"pslab/internal/results"
)

// Experiments are the scenario files of Henjes et al.'s experiments, by
// short name, in the order they run.
var Experiments = []string{"publishers", "subscribers", "size", "activation", "topics", "or", "and", "grid"}

// fitExperiments are the simple-filter designs the models are fitted to:
// the joint grid (the papers' fit) and the activation series (same vs
// distinct extra filters, which SunMQ's t_fltr^diff needs).
var fitExperiments = []string{"grid", "activation"}

// ParseExperiments reads "all" or a comma list of experiment names.
func ParseExperiments(s string) ([]string, error) {
	if s == "all" {
		return Experiments, nil
	}
	var names []string
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		if !slices.Contains(Experiments, e) {
			return nil, fmt.Errorf("--experiments %q: unknown experiment %q (known: %s)", s, e, strings.Join(Experiments, ", "))
		}
		names = append(names, e)
	}
	return names, nil
}

// Files are the scenario files of the experiments names in dir.
func Files(dir string, names []string) []string {
	files := make([]string, len(names))
	for i, n := range names {
		files[i] = filepath.Join(dir, "henjes-"+n+".yaml")
	}
	return files
}

// DefaultOut is the output directory when none is given.
func DefaultOut(brokers []string, now time.Time) string {
	return filepath.Join("runs", fmt.Sprintf("henjes-%s-%s", strings.Join(brokers, "-"), now.Format("20060102-150405")))
}

// Options configure Measure.
type Options struct {
	// Experiments are the names the plans were made from (for REPORT.md
	// and to pick the fitted designs).
	Experiments []string
	// Brokers name the brokers measured (REPORT.md's title).
	Brokers []string
	// Out receives one bundle directory per plan (named after its suite),
	// the fits, plots/ and REPORT.md.
	Out string
	// Command is the command line, quoted in REPORT.md.
	Command string
	// Run runs one plan into bundle; a failed case run is recorded there
	// and reported as an error.
	Run func(p lab.Plan, bundle string) error
	// Stdout gets the fits and the closing line, Stderr progress and what
	// was skipped.
	Stdout, Stderr io.Writer
}

// Measure runs each plan, then fits and draws what was measured, even when
// some case runs failed (their error is returned at the end). When ctx
// has ended after a failed run, it stops and returns that run's error.
func Measure(ctx context.Context, plans []lab.Plan, o Options) error {
	start := time.Now()
	var runErr error
	var bundles []string
	for _, p := range plans {
		bundle := filepath.Join(o.Out, p.Suite.Name)
		bundles = append(bundles, bundle)
		if err := o.Run(p, bundle); err != nil {
			if ctx != nil && ctx.Err() != nil {
				return err
			}
			runErr = errors.Join(runErr, fmt.Errorf("%s: %w", p.Suite.Name, err))
		}
	}
	fmt.Fprintf(o.Stderr, "measured in %s\n", time.Since(start).Round(time.Second))
	var fitBundles []string
	for _, n := range fitExperiments {
		if slices.Contains(o.Experiments, n) {
			fitBundles = append(fitBundles, filepath.Join(o.Out, "henjes-"+n))
		}
	}
	var summary bytes.Buffer
	if len(fitBundles) > 0 {
		for _, resp := range []model.Response{model.Demand, model.Capacity} {
			o.writeFit(fitBundles, filepath.Join(o.Out, "fit-"+string(resp)), resp, &summary)
		}
	}
	if _, groups, err := model.FitSources(bundles, model.DefaultFitSettings(model.Demand)); err == nil {
		p, err := plot.Henjes(groups, plot.HenjesOptions{OutDir: filepath.Join(o.Out, "plots"), Response: model.Demand})
		for _, s := range p.Skipped {
			fmt.Fprintln(o.Stderr, "plot skipped:", s)
		}
		if err != nil {
			fmt.Fprintln(o.Stderr, "plots:", err)
		}
	} else {
		fmt.Fprintln(o.Stderr, "plots: no fit:", err)
	}
	wall := time.Since(start).Round(time.Second)
	var rep bytes.Buffer
	fmt.Fprintf(&rep, "# Henjes et al. on %s\n\n", strings.Join(o.Brokers, " and "))
	fmt.Fprintf(&rep, "Command: `%s`  \nWall time: %s (measurement and fits). Experiments: %s. Details: docs/filters.md.\n\n",
		o.Command, wall, strings.Join(o.Experiments, ", "))
	rep.Write(summary.Bytes())
	rep.WriteString("Full fits (all forms, standard errors, skipped runs): fit-demand.md, fit-capacity.md; figures: plots/.\n")
	if err := writeFile(filepath.Join(o.Out, "REPORT.md"), rep.Bytes()); err != nil {
		fmt.Fprintln(o.Stderr, err)
	}
	fmt.Fprintf(o.Stdout, "results in %s (REPORT.md, fit-demand.md, fit-capacity.md, plots/), wall time %s\n", o.Out, wall)
	return runErr
}

// writeFit fits bundles with resp and writes base.md and base.json (a
// refusal is written into base.md instead), and appends the cost summary
// to summary.
func (o Options) writeFit(bundles []string, base string, resp model.Response, summary *bytes.Buffer) {
	rep, _, err := model.FitSources(bundles, model.DefaultFitSettings(resp))
	var md bytes.Buffer
	fmt.Fprintf(summary, "## Response %s\n\n", resp)
	if err != nil {
		fmt.Fprintf(&md, "# Service-time model fits (%s)\n\nNo fit: %v\n", resp, err)
		fmt.Fprintf(summary, "No fit: %v\n\n", err)
	} else {
		if err := model.WriteFitMarkdown(&md, rep); err != nil {
			fmt.Fprintln(o.Stderr, "fit:", err)
			return
		}
		used := 0
		for _, g := range rep.Groups {
			used += g.N
		}
		fmt.Fprintf(summary, "%d of %d runs used (skipped: %s).\n\n", used, rep.Records, model.SkippedText(rep.Skipped))
		_ = model.WriteCostSummary(summary, rep)
		summary.WriteString("\n")
		js, _ := json.MarshalIndent(rep, "", "  ")
		if err := writeFile(base+".json", js); err != nil {
			fmt.Fprintln(o.Stderr, err)
		}
	}
	if err := writeFile(base+".md", md.Bytes()); err != nil {
		fmt.Fprintln(o.Stderr, err)
	}
	fmt.Fprintf(o.Stdout, "\n%s", md.String())
}

// writeFile writes data to path atomically.
func writeFile(path string, data []byte) error {
	if err := results.WriteAtomic(path, data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
