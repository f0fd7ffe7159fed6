package main

import (
	"strings"

	"github.com/spf13/cobra"

	"pslab/internal/lab"
	"pslab/internal/scenario"
)

// sweepFlags are sweep's own flags (besides run's).
type sweepFlags struct {
	vary, set []string
	name      string
}

func addSweepFlags(cmd *cobra.Command, sw *sweepFlags) {
	cmd.Flags().StringArrayVar(&sw.vary, "vary", nil, "field=value1,value2,... to sweep (repeatable)")
	cmd.Flags().StringArrayVar(&sw.set, "set", nil, "field=value fixed for every case (repeatable)")
	cmd.Flags().StringVar(&sw.name, "name", "sweep", "suite name in records and the output directory")
}

func newSweepCmd() *cobra.Command {
	var f runFlags
	var sw sweepFlags
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Run a factor grid given on the command line, without a scenario file",
		Long: `Build cases from the command line and run them like ` + "`pslab run`" + `: --set fixes a
field for every case (same names and values as in scenario files), --vary
sweeps a field over values; every combination of the --vary values is one
case. Fields neither set nor varied take the built-in defaults of scenario
files (README, "Case fields"); the suite runs on nats over wireline unless
--broker and --network say otherwise. Durable cases name their
subscriptions "{prefix}-sub{sub}".

Each case carries its varied values into its records ("varied"), so
report, compare and plot label it by them (03 size=2048 subscription=durable)
and plot draws each metric against each varied field (--figure sweep). A
sweep writes run.json into its output directory like a run: an interrupted
sweep is continued with pslab run --resume DIR.`,
		Example: `  pslab sweep --vary size=100,2048,5120 --vary subscription=durable,non-durable --network wireline,wifi-paper
  pslab sweep --set publishers=10 --set subscribers=100 --set topics=10 --vary delivery=persistent,non-persistent --reps 3
  pslab sweep --vary size=100,1024 --vary publishers=1,10 --dry-run`,
		Args: argsCheck(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := optionsFrom(cmd, f)
			if err != nil {
				return err
			}
			p, err := sweepPlan(sw, opts)
			if err != nil {
				return err
			}
			plans := []lab.Plan{p}
			if f.dryRun {
				return dryRun(cmd, plans, opts, f.out)
			}
			root, lock, err := startRunInfo(cmd, nil, plans, f.out)
			if err != nil {
				return err
			}
			defer lock.Release()
			return runPlans(cmd, plans, opts, root)
		},
	}
	addRunFlags(cmd, &f, false)
	addSweepFlags(cmd, &sw)
	return cmd
}

func init() { rootCmd.AddCommand(newSweepCmd()) }

// sweepPlan builds the sweep's suite from its flags and plans it; every
// problem is bad input.
func sweepPlan(sw sweepFlags, opts lab.Options) (lab.Plan, error) {
	if len(sw.vary) == 0 {
		return lab.Plan{}, badInputf("give at least one --vary key=v1,v2")
	}
	var vs []scenario.Vary
	for _, v := range sw.vary {
		pv, err := scenario.ParseVary(v)
		if err != nil {
			return lab.Plan{}, badInput(err)
		}
		vs = append(vs, pv)
	}
	var base []scenario.Setting
	for _, s := range sw.set {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return lab.Plan{}, badInputf("--set %q: want key=value", s)
		}
		base = append(base, scenario.Setting{Key: k, Value: v})
	}
	suite, err := scenario.SweepSuite(sw.name, base, vs)
	if err != nil {
		return lab.Plan{}, badInput(err)
	}
	p, err := lab.MakePlan(suite, opts)
	if err != nil {
		return lab.Plan{}, badInput(err)
	}
	return p, nil
}
