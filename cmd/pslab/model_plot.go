package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"pslab/internal/model"
	"pslab/internal/plot"
)

func newModelPlotCmd() *cobra.Command {
	var f modelFitFlags
	var out, line string
	var dpi int
	cmd := &cobra.Command{
		Use:   "plot RESULTS...",
		Short: "Draw Henjes et al.'s filter figures with the fitted model (PNG and SVG)",
		Long: `Fit the models as "pslab model fit" does (same record selection and flags)
and draw, from the observations the fits used, into --out:

  filters-<broker>-<network>-<kind>  throughput vs the number of installed
                                     filters n_fltr, one line per replication
                                     grade r, the fitted model dashed (the
                                     papers' Figures 13 and 14)
  or-<broker>-<network>              simple filters vs OR-filters over the
                                     number of values n (Figure 11)
  and-<broker>-<network>             AND-filter length with the distinguishing
                                     term first, in the middle or last (Figure 12)

With --response capacity (default) the y axis is the measured overall
throughput (received + dispatched msgs/s) and the model is (1+r)/B. With
--response demand it is the overall throughput per broker CPU core,
(received + dispatched) / broker cores, and the model (1+r)/D: what one
fully used core of the broker carries, the papers' single-CPU server.
--line picks the form drawn (default: each group's best).`,
		Example: `  pslab model plot runs/henjes-grid runs/henjes-or runs/henjes-and --out plots
  pslab model plot runs/henjes --response demand --line fiorano --out plots`,
		Args: argsCheck(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dpi <= 0 || dpi > 600 {
				return badInputf("--dpi %d: want 1..600", dpi)
			}
			if line != "" {
				if _, err := model.NewForm(line, nil); err != nil {
					return badInputf("--line: %v", err)
				}
			}
			_, groups, err := model.FitSources(args, f.settings())
			if err != nil {
				return badInput(err)
			}
			o, err := plot.Henjes(groups, plot.HenjesOptions{OutDir: out, DPI: dpi, Response: model.Response(f.response), Form: line})
			for _, file := range o.Files {
				fmt.Fprintln(cmd.OutOrStdout(), file)
			}
			for _, s := range o.Skipped {
				fmt.Fprintln(cmd.ErrOrStderr(), "skipped:", s)
			}
			if err != nil {
				return err
			}
			if len(o.Files) == 0 {
				return fmt.Errorf("no figure drawn (%s)", strings.Join(o.Skipped, "; "))
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&out, "out", "o", "plots", "directory for the PNG and SVG files")
	fl.StringVar(&line, "line", "", "form drawn as the model line: fiorano, sunmq or websphere (default: each group's best)")
	fl.IntVar(&dpi, "dpi", 96, "PNG resolution")
	addFitFlags(cmd, &f)
	return cmd
}
