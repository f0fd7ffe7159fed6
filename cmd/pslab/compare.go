package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"pslab/internal/plot"
	"pslab/internal/report"
	"pslab/internal/results"
)

type compareFlags struct {
	format string
	out    string
	plot   string
	margin string
	pairs  []string
}

func newCompareCmd() *cobra.Command {
	var f compareFlags
	cmd := &cobra.Command{
		Use:   "compare A B",
		Short: "Compare two result sets case by case: ratio B/A with its CI and a verdict",
		Long: `Read two result sets (run bundle directories or records.jsonl files) and
compare every case x broker x network found in both: the ratio B/A of
subscriber throughput and of mean latency (ratio of geometric means over the
repetitions) with its 95 % confidence interval from Welch's t on log values,
and a verdict:

  same          an equivalence test (TOST) puts the ratio within ±margin
                (a smaller difference may still be significant)
  differs       otherwise, the CI excludes 1 (p < 0.05)
  inconclusive  neither (too few repetitions, or too much noise)

Rows found in one set only, and case ids whose factors differ between the
sets, are listed and not compared. --pair A=B compares broker A's rows of
the first set with broker B's of the second (e.g. a broker's own protocol
against its MQTT listener: --pair nats=nats-mqtt); both sets may be the
same run. Use it, for instance, to compare a lab
running alone with one running beside others, or a run before and after a
change.

A missing, empty or malformed records file, or two sets with no case in
common, is bad input (exit code 2).`,
		Example: `  pslab compare runs/alone runs/parallel
  pslab compare runs/a runs/b --format csv --out cmp.csv --plot plots --margin 5%
  pslab compare runs/wifi runs/wifi --pair nats=nats-mqtt --pair artemis=artemis-mqtt`,
		Args: argsCheck(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error { return runCompare(cmd, args, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "md", "output format: md or csv")
	fl.StringVarP(&f.out, "out", "o", "", "write to this file (atomically) instead of standard output")
	fl.StringVar(&f.plot, "plot", "", "also draw the comparison (PNG and SVG) into this directory")
	fl.StringVar(&f.margin, "margin", "10%", "equivalence margin for \"same\", e.g. 10% or 0.1")
	fl.StringArrayVar(&f.pairs, "pair", nil, "compare broker A of the first set with broker B of the second: A=B (repeatable), e.g. nats=nats-mqtt")
	return cmd
}

func init() { rootCmd.AddCommand(newCompareCmd()) }

// pairRecords keeps, with --pair, the records of the paired brokers: of
// the first set those of each A, of the second those of each B, named A
// so that they meet A's rows.
func pairRecords(recs []results.Record, pairs map[string]string, second bool) []results.Record {
	var out []results.Record
	for _, r := range recs {
		if a, ok := pairs[r.Broker]; ok && second {
			r.Broker = a
			out = append(out, r)
			continue
		}
		if !second {
			for _, x := range pairs {
				if r.Broker == x {
					out = append(out, r)
					break
				}
			}
		}
	}
	return out
}

// parseMargin reads "10%" or "0.1".
func parseMargin(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(t, "%")), 64)
	if err != nil {
		return 0, fmt.Errorf("--margin %q: want a number like 10%% or 0.1", s)
	}
	if pct {
		v /= 100
	}
	if !(v > 0 && v < 1) {
		return 0, fmt.Errorf("--margin %q: want a margin between 0 and 100 %%", s)
	}
	return v, nil
}

func runCompare(cmd *cobra.Command, args []string, f compareFlags) error {
	var errs []error
	if f.format != "md" && f.format != "csv" {
		errs = append(errs, fmt.Errorf("--format %q: want md or csv", f.format))
	}
	margin, err := parseMargin(f.margin)
	if err != nil {
		errs = append(errs, err)
	}
	pairs := map[string]string{} // broker of B -> broker of A
	for _, p := range f.pairs {
		a, b, ok := strings.Cut(p, "=")
		if !ok || a == "" || b == "" {
			errs = append(errs, fmt.Errorf("--pair %q: want A=B, two broker names", p))
			continue
		}
		pairs[b] = a
	}
	var sets []*report.Dataset
	for i, a := range args {
		recs, err := report.ReadRecords(a)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(pairs) > 0 {
			recs = pairRecords(recs, pairs, i == 1)
		}
		sets = append(sets, report.Build(recs))
	}
	if len(errs) > 0 {
		return badInput(errors.Join(errs...))
	}
	c := report.Compare(sets[0], sets[1], margin)
	if len(c.Rows) == 0 {
		return badInputf("%s and %s have no case x broker x network in common (%d only in A, %d only in B, %d with different factors)",
			args[0], args[1], len(c.OnlyA), len(c.OnlyB), len(c.FactorsDiffer))
	}
	err = writeOutput(cmd, f.out, "compare", fmt.Sprintf("%d rows", len(c.Rows)), func(w io.Writer) error {
		if f.format == "csv" {
			return report.WriteCompareCSV(w, c)
		}
		return report.WriteCompareMarkdown(w, c, args[0], args[1])
	})
	if err != nil {
		return err
	}
	if f.plot != "" {
		if err := os.MkdirAll(f.plot, 0o755); err != nil {
			return err
		}
		files, err := plot.CompareFigure(c, plot.Options{OutDir: f.plot}, "compare")
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "compare: plot -> %s\n", strings.Join(files, ", "))
	}
	return nil
}
