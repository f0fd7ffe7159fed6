package main

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"pslab/internal/metrics"
	"pslab/internal/plan"
	"pslab/internal/report"
	"pslab/internal/scenario"
)

func newPlanCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Size runs from evidence: repetitions, windows, machine time",
	}
	cmd.AddCommand(newPlanRepsCmd(), newPlanNoiseCmd(), newPlanCapacityBudgetCmd())
	return cmd
}

func init() { rootCmd.AddCommand(newPlanCmd()) }

func newPlanRepsCmd() *cobra.Command {
	o := plan.DefaultOptions()
	var scenarioFile, ci string
	cmd := &cobra.Command{
		Use:   "reps RESULTS... --scenario FILE",
		Short: "Repetitions, windows and machine time for a scenario file's run settings, from earlier records",
		Long: `Read the records of earlier runs and the run settings a scenario file chose
(its per_network: warm-up, window and drain, and max_reps:), and print in
Markdown, per network and broker:

  1. the noise: the between-repetition CV of subscriber throughput and of
     mean latency (median over case rows), the within-window CV of the
     per-second delivery counts, the deliveries in the window;
  2. per shaped network and case row, the deliveries per second and the
     window that holds --min-deliveries, and what each window of
     --windows would cost;
  3. the repetitions a row needs for a 95 % confidence interval within
     ±--ci of the mean (the fewest n with t(0.975, n-1) · CV / √n ≤ CI, at
     least 3) and the machine time of the whole plan.

The model is stated, not hidden: a window of W seconds averages W
per-second counts, so a shaped network's CV shrinks as √(W0 / W) from the
one measured at W0; the wireline's CV is the machine's own and does not
shrink (in the "floor" columns it bounds the shaped ones). The run's own
sequential rule (ci:) corrects the estimate: a wrong model costs time,
not validity. docs/report.md, "Run settings of the reproduction", reads
this output.`,
		Example: `  pslab plan reps results/gaddah-kunz-set1 results/gaddah-kunz-set2 --scenario scenarios/gaddah-kunz-set1.yaml`,
		Args:    argsCheck(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if scenarioFile == "" {
				return badInputf("--scenario: name the scenario file whose run settings to plan for")
			}
			s, err := scenario.Load(scenarioFile, scenario.Options{})
			if err != nil {
				return badInput(err)
			}
			chosen, maxReps, err := plan.ChosenFrom(s)
			if err != nil {
				return badInput(err)
			}
			o.Chosen = chosen
			if maxReps > 0 && !cmd.Flags().Changed("max-reps") {
				o.MaxReps = maxReps
			}
			if o.CI, err = scenario.ParsePercent(ci); err != nil || o.CI <= 0 {
				return badInputf("--ci %q: want a percentage, e.g. 5%%", ci)
			}
			if o.Parallel < 1 || o.MaxReps < 1 || o.MinDeliveries < 1 {
				return badInputf("--parallel, --max-reps and --min-deliveries must be at least 1")
			}
			recs, err := report.ReadRecords(args...)
			if err != nil {
				return badInput(err)
			}
			if err := plan.Reps(cmd.OutOrStdout(), recs, o); err != nil {
				return badInput(err)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&scenarioFile, "scenario", "", "the scenario file whose per_network: run settings (and max_reps:) to plan for")
	fl.IntVar(&o.Parallel, "parallel", o.Parallel, "labs the shaped networks' rows share")
	fl.IntVar(&o.MaxReps, "max-reps", o.MaxReps, "repetitions at most per row (default: the file's max_reps:, else 10)")
	fl.IntVar(&o.MinDeliveries, "min-deliveries", o.MinDeliveries, "deliveries a window should hold")
	fl.StringVar(&ci, "ci", "5%", "the 95 % confidence half-width to reach, as a share of the mean")
	fl.Float64SliceVar(&o.Windows, "windows", o.Windows, "windows (s) to weigh on each shaped network")
	return cmd
}

func newPlanNoiseCmd() *cobra.Command {
	var ci string
	var first int
	cmd := &cobra.Command{
		Use:   "noise < NUMBERS",
		Short: "Mean, CV and the repetitions a CI needs, of numbers on standard input",
		Long: `Read numbers (one sample, whitespace-separated) from standard input and print
one tab-separated line: how many, mean, min, max, the coefficient of
variation (sample standard deviation over the mean) and the repetitions a
95 % confidence interval within ±--ci of the mean needs at that CV (the
fewest n from --first with t(0.975, n-1) · CV / √n ≤ CI). CV and
repetitions are "-" for fewer than two numbers. scripts/machine-noise.sh
uses it for each core's rates.`,
		Example: `  printf '101 99 100 102\n' | pslab plan noise --first 2`,
		Args:    argsCheck(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := scenario.ParsePercent(ci)
			if err != nil || c <= 0 {
				return badInputf("--ci %q: want a percentage, e.g. 5%%", ci)
			}
			var xs []float64
			sc := bufio.NewScanner(cmd.InOrStdin())
			sc.Split(bufio.ScanWords)
			for sc.Scan() {
				x, err := strconv.ParseFloat(sc.Text(), 64)
				if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
					return badInputf("not a number: %q", sc.Text())
				}
				xs = append(xs, x)
			}
			if err := sc.Err(); err != nil {
				return err
			}
			if len(xs) == 0 {
				return badInputf("no numbers on standard input")
			}
			mean, _ := metrics.MeanCI95(xs)
			cv, reps := "-", "-"
			if v, ok := metrics.CV(xs); ok {
				cv, reps = strconv.FormatFloat(v, 'f', 6, 64), strconv.Itoa(metrics.RepsFor(v, c, first, 1000))
			}
			fmt.Fprintln(cmd.OutOrStdout(), strings.Join([]string{strconv.Itoa(len(xs)), fmtNum(mean),
				fmtNum(slices.Min(xs)), fmtNum(slices.Max(xs)), cv, reps}, "\t"))
			return nil
		},
	}
	cmd.Flags().StringVar(&ci, "ci", "5%", "the 95 % confidence half-width to reach, as a share of the mean")
	cmd.Flags().IntVar(&first, "first", 3, "the fewest repetitions to answer")
	return cmd
}

func fmtNum(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

func newPlanCapacityBudgetCmd() *cobra.Command {
	var rows, labs []string
	cmd := &cobra.Command{
		Use:   "capacity-budget RESULTS...",
		Short: "Machine time per run and runs per row of pslab capacity bundles, and the capacity-mode reproduction's projection",
		Long: `Read the records of pslab capacity bundles (modes capacity-probe and
fixed-load; others are left out) and print in Markdown:

  1. per network and broker: the rows, the runs per row (the pilot
     search's probes, the counted searches' probes, the fixed-load runs;
     runs again on a busy machine included) and the machine time of a
     run: from its start to the next run's start in the same lab of the
     same run (set-up, quiet and idle waits, purges and the run itself; a
     lab's last run counts its own wall time and the purge after it);
  2. the projection: per network, --rows rows x the median runs per row x
     the median seconds per run, over --labs parallel labs.

docs/capacity.md, "The capacity-mode reproduction", reads this output.`,
		Example: `  pslab plan capacity-budget results/capacity-pilots/*
  pslab plan capacity-budget runs/cap1 --rows wireline=100,wifi-paper=100 --labs wifi-paper=4`,
		Args: argsCheck(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			var bad []string
			rowsOf, err := namedCounts("rows", rows, 0)
			if err != nil {
				bad = append(bad, err.Error())
			}
			labsOf, err := namedCounts("labs", labs, 1)
			if err != nil {
				bad = append(bad, err.Error())
			}
			if len(bad) > 0 {
				return badInputf("%s", strings.Join(bad, "\n"))
			}
			recs, err := report.ReadRecords(args...)
			if err != nil {
				return badInput(err)
			}
			b, err := plan.CapacityBudget(recs, rowsOf, labsOf)
			if err != nil {
				return badInputf("%s: %v", strings.Join(args, " "), err)
			}
			plan.WriteCapacityBudget(cmd.OutOrStdout(), b)
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&rows, "rows", []string{"wireline=100", "wifi-paper=100"}, "rows of the reproduction per network (50 cases x 2 brokers each)")
	cmd.Flags().StringSliceVar(&labs, "labs", []string{"wifi-paper=4"}, "parallel labs per network (1 when not given)")
	return cmd
}

// namedCounts reads NETWORK=N values of flag, each N at least least.
func namedCounts(flag string, vals []string, least int) (map[string]int, error) {
	out := map[string]int{}
	var bad []string
	for _, v := range vals {
		name, ns, ok := strings.Cut(v, "=")
		n, err := strconv.Atoi(ns)
		if !ok || name == "" || err != nil || n < least {
			bad = append(bad, fmt.Sprintf("--%s %s: want NETWORK=N with N at least %d", flag, v, least))
			continue
		}
		out[name] = n
	}
	if len(bad) > 0 {
		return nil, errors.New(strings.Join(bad, "\n"))
	}
	return out, nil
}
