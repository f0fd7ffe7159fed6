package main

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"pslab/internal/henjes"
	"pslab/internal/lab"
)

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
	fl.StringVar(&exps, "experiments", "all", "experiments to run: all, or a comma list of "+strings.Join(henjes.Experiments, ", "))
	return cmd
}

func modelMeasure(cmd *cobra.Command, f runFlags, dir, exps string) error {
	names, err := henjes.ParseExperiments(exps)
	if err != nil {
		return badInput(err)
	}
	opts, err := optionsFrom(cmd, f)
	if err != nil {
		return err
	}
	opts.WarmupRun = true // always: the first case after a broker start is an outlier otherwise
	if f.out == "" {
		f.out = henjes.DefaultOut(opts.Brokers, time.Now())
	}
	plans, err := loadPlans(henjes.Files(dir, names), f.quick, opts)
	if err != nil {
		return err
	}
	lock, err := lockOut(f.out) // one writer: the bundles, fits and REPORT.md
	if err != nil {
		return err
	}
	defer lock.Release()
	// One signal watch for every experiment: the first SIGINT stops the
	// whole measurement, not only the experiment in progress.
	ctx, stop := interruptible(context.Background(), cmd.ErrOrStderr())
	defer stop()
	return henjes.Measure(ctx, plans, henjes.Options{
		Experiments: names, Brokers: opts.Brokers, Out: f.out,
		Command: "pslab " + strings.Join(os.Args[1:], " "),
		Run: func(p lab.Plan, bundle string) error {
			return runPlansIn(ctx, cmd, []lab.Plan{p}, opts, bundle)
		},
		Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr(),
	})
}
