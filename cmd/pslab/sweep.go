package main

import (
	"strings"

	"github.com/spf13/cobra"

	"pslab/internal/lab"
	"pslab/internal/scenario"
)

func newSweepCmd() *cobra.Command {
	var f runFlags
	var vary, set []string
	var name string
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Run a factor grid given on the command line, without a scenario file",
		Long: `Build cases from the command line and run them like ` + "`pslab run`" + `: --set fixes a
field for every case (same names and values as in scenario files), --vary
sweeps a field over values; every combination of the --vary values is one
case. Durable cases name their subscriptions "{prefix}-sub{sub}".`,
		Example: `  pslab sweep --vary size=100,2048,5120 --vary subscription=durable,non-durable --network wireline,wifi-paper
  pslab sweep --set publishers=10 --set subscribers=100 --set topics=10 --vary delivery=persistent,non-persistent --reps 3`,
		Args: argsCheck(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(vary) == 0 {
				return badInputf("give at least one --vary key=v1,v2")
			}
			var vs []scenario.Vary
			for _, v := range vary {
				pv, err := scenario.ParseVary(v)
				if err != nil {
					return badInput(err)
				}
				vs = append(vs, pv)
			}
			var base []scenario.Setting
			for _, s := range set {
				k, v, ok := strings.Cut(s, "=")
				if !ok {
					return badInputf("--set %q: want key=value", s)
				}
				base = append(base, scenario.Setting{Key: k, Value: v})
			}
			suite, err := scenario.SweepSuite(name, base, vs)
			if err != nil {
				return badInput(err)
			}
			opts, err := optionsFrom(cmd, f)
			if err != nil {
				return err
			}
			p, err := lab.MakePlan(suite, opts)
			if err != nil {
				return badInput(err)
			}
			if f.dryRun {
				return dryRun(cmd, []lab.Plan{p}, opts, f.out)
			}
			return runPlans(cmd, []lab.Plan{p}, opts, f.out)
		},
	}
	addRunFlags(cmd, &f, false)
	cmd.Flags().StringArrayVar(&vary, "vary", nil, "field=value1,value2,... to sweep (repeatable)")
	cmd.Flags().StringArrayVar(&set, "set", nil, "field=value fixed for every case (repeatable)")
	cmd.Flags().StringVar(&name, "name", "sweep", "suite name in records and the output directory")
	return cmd
}

func init() { rootCmd.AddCommand(newSweepCmd()) }
