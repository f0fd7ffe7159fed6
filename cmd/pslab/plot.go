package main

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/spf13/cobra"

	"pslab/internal/plot"
	"pslab/internal/report"
)

type plotFlags struct {
	out    string
	figure string
	dpi    int
}

func newPlotCmd() *cobra.Command {
	var f plotFlags
	cmd := &cobra.Command{
		Use:   "plot RESULTS...",
		Short: "Draw the paper's Figures 8-14, latency percentiles and per-second series (PNG and SVG)",
		Long: `Read result records (run bundle directories, run directories or records.jsonl
files; several are pooled) and draw figures as PNG and SVG into --out:

  fig08..fig14-<suite>-<broker>   counterparts of Gaddah & Kunz's Figures 8-14:
                                  throughput vs N for the one-to-one model (8: 100 B,
                                  9: 5 KB), bars for few-to-many (10), many-to-few
                                  (11) and set 2 (12: delivery/ack modes, 13:
                                  selector, 14: body type); wireline and wireless
                                  panels; the paper's values drawn as diamonds
  latency-<suite>-<broker>        p50/p90/p99/p99.9/max and mean latency per case,
                                  one panel per network, with the paper's mean
  series-<suite>-<broker>-<net>   per-second published/delivered messages per case
                                  and repetition, with the measurement window
  sweep-<suite>-<broker>-<net>-<key>
                                  a sweep: subscriber and publisher throughput and
                                  mean latency against each varied key, a line per
                                  combination of the other keys' values
  resources-<suite>-<case>-...    long runs (a soak): the client's memory and
                                  goroutines per second, faults shaded

Throughput and latency axes are logarithmic. A figure whose cases are not in
the results is skipped and the reason printed; a panel without measurements
says so. The paper's values are not drawn for --quick records (their client
counts may be reduced).`,
		Example: `  pslab plot runs/gaddah-kunz-set1-20260101-120000 --out plots
  pslab plot runs/set1 runs/set2 --figure 8,9,latency
  pslab plot runs/set2/records.jsonl --figure 14 --out /tmp/fig14`,
		Args: argsCheck(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error { return runPlot(cmd, args, f) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.out, "out", "o", "plots", "directory for the PNG and SVG files")
	fl.StringVar(&f.figure, "figure", "all", "figures to draw: 8..14, latency, series, sweep, resources or all (comma-separated)")
	fl.IntVar(&f.dpi, "dpi", 96, "PNG resolution")
	return cmd
}

func init() { rootCmd.AddCommand(newPlotCmd()) }

func runPlot(cmd *cobra.Command, args []string, f plotFlags) error {
	var errs []error
	figs, err := plot.ParseFigures(f.figure)
	if err != nil {
		errs = append(errs, err)
	}
	if f.dpi <= 0 || f.dpi > 600 {
		errs = append(errs, fmt.Errorf("--dpi %d: want 1..600", f.dpi))
	}
	errs = append(errs, checkOutputs(output{flag: "--out", path: f.out, dir: true})...)
	recs, err := report.ReadRecords(args...)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return badInput(errors.Join(errs...))
	}
	out, err := plot.Generate(report.Build(recs), plot.Options{OutDir: f.out, Figures: figs, DPI: f.dpi})
	for _, file := range out.Files {
		fmt.Fprintln(cmd.OutOrStdout(), file)
	}
	for _, s := range out.Skipped {
		fmt.Fprintln(cmd.ErrOrStderr(), "skipped:", s)
	}
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		return badInput(fmt.Errorf("--out %s: %w", f.out, err)) // an output that could not be written
	}
	if err != nil {
		return err
	}
	if len(out.Files) == 0 {
		return fmt.Errorf("no figure drawn (see the reasons above)")
	}
	return nil
}
