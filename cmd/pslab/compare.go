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
	"pslab/internal/report/htmlreport"
	"pslab/internal/results"
)

type compareFlags struct {
	format     string
	out        string
	plot       string
	margin     string
	pairs      []string
	failOn     []string
	thresholds []string
}

func newCompareCmd() *cobra.Command {
	var f compareFlags
	cmd := &cobra.Command{
		Use:   "compare A B",
		Short: "Compare two result sets case by case: ratio B/A with its CI and a verdict",
		Long: `Read two result sets (run bundle directories, run directories or records.jsonl files) and
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
same run. compare says what else differs between the two sets' compared
records (run settings such as the window or the publish window, the link,
the pslab build, the broker's version and settings, the machine and CPU
sets), and when A and B are the same records. With --pair, the brokers'
versions and settings differ on purpose: they are listed, as a note, and
are not a difference for --fail-on settings.

As a gate (a CI job), --threshold METRIC:STAT OP VALUE must hold on every
compared row (metrics sub_tput, latency_ms, pub_tput; stats ratio, ci_lo,
ci_hi, p; e.g. sub_tput:ratio>0.95), and --fail-on differs (a row's sub
throughput or mean latency differs), inconclusive, or settings (the sets
were made differently, or are the same records) fails the comparison: the
output is written, the violations are listed, and pslab exits with code 99
(as k6 does when its thresholds fail). A threshold on a value a row does
not have (one repetition: no CI) is violated. Use it, for instance, to compare a lab
running alone with one running beside others, or a run before and after a
change.

A missing, empty or malformed records file, two sets with no case in
common, or an output (--out, --plot) that cannot be written is bad input
(exit code 2): every output is checked before anything is written.`,
		Example: `  pslab compare runs/alone runs/parallel
  pslab compare runs/a runs/b --format csv --out cmp.csv --plot plots --margin 5%
  pslab compare runs/main runs/branch --fail-on differs --threshold 'sub_tput:ratio>0.95'
  pslab compare runs/wifi runs/wifi --pair nats=nats-mqtt --pair artemis=artemis-mqtt`,
		Args: argsCheck(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error { return runCompare(cmd, args, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "md", compareFormats.help())
	fl.StringVarP(&f.out, "out", "o", "", "write to this file (atomically) instead of standard output")
	fl.StringVar(&f.plot, "plot", "", "also draw the comparison (PNG and SVG) into this directory")
	fl.StringVar(&f.margin, "margin", "10%", "equivalence margin for \"same\", e.g. 10% or 0.1")
	fl.StringArrayVar(&f.pairs, "pair", nil, "compare broker A of the first set with broker B of the second: A=B (repeatable), e.g. nats=nats-mqtt")
	fl.StringSliceVar(&f.failOn, "fail-on", nil, "exit 99 when a compared row differs, is inconclusive, or the sets' settings differ: differs, inconclusive, settings (comma-separated)")
	fl.StringArrayVar(&f.thresholds, "threshold", nil, "exit 99 unless every compared row meets METRIC:STAT OP VALUE, e.g. sub_tput:ratio>0.95 or latency_ms:ci_hi<1.5 (repeatable)")
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

// compareFormats are compare's --format values.
var compareFormats = formats[report.CompareReport]{
	{"md", "markdown table", report.WriteCompareMarkdown},
	{"csv", "one line per row", report.WriteCompareCSV},
	{"json", "the comparison as data, docs/report.md", func(w io.Writer, cr report.CompareReport) error {
		return report.WriteJSON(w, cr.Doc())
	}},
	{"html", "one self-contained page: warnings, gate, rows to sort and filter, the figure inline", func(w io.Writer, cr report.CompareReport) error {
		fig, err := plot.CompareFigure(cr.Comparison, plot.Options{SVGOnly: true}, "compare")
		if err != nil {
			return err
		}
		return htmlreport.WriteCompare(w, cr.Doc(), &fig)
	}},
}

// parseGate reads --threshold and --fail-on.
func parseGate(f compareFlags) (report.Gate, []error) {
	var g report.Gate
	var errs []error
	for _, t := range f.thresholds {
		th, err := report.ParseThreshold(t)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		g.Thresholds = append(g.Thresholds, th)
	}
	failOn, err := report.ParseFailOn(f.failOn)
	if err != nil {
		errs = append(errs, err)
	}
	g.FailOn = failOn
	return g, errs
}

func runCompare(cmd *cobra.Command, args []string, f compareFlags) error {
	var errs []error
	format, err := compareFormats.get(f.format)
	if err != nil {
		errs = append(errs, err)
	}
	margin, err := parseMargin(f.margin)
	if err != nil {
		errs = append(errs, err)
	}
	gate, gerrs := parseGate(f)
	errs = append(errs, gerrs...)
	errs = append(errs, checkOutputs(output{flag: "--out", path: f.out}, output{flag: "--plot", path: f.plot, dir: true})...)
	pairs := map[string]string{} // broker of B -> broker of A
	var pairList []report.Pair
	for _, p := range f.pairs {
		a, b, ok := strings.Cut(p, "=")
		if !ok || a == "" || b == "" {
			errs = append(errs, fmt.Errorf("--pair %q: want A=B, two broker names", p))
			continue
		}
		pairs[b] = a
		pairList = append(pairList, report.Pair{A: a, B: b})
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
	c.Paired(pairList)
	if len(c.Rows) == 0 {
		var split []string
		for i, d := range sets {
			if n := len(d.Mixing.Rows); n > 0 {
				split = append(split, fmt.Sprintf("%d rows of %s mix pslab builds or broker configurations and are split by them (\"01 ⟨1 of 2⟩\"; pslab report %s lists them)", n, args[i], args[i]))
			}
		}
		why := ""
		if len(split) > 0 {
			why = "; " + strings.Join(split, "; ")
		}
		return badInputf("%s and %s have no case x broker x network in common (%d only in A, %d only in B, %d with different factors)%s",
			args[0], args[1], len(c.OnlyA), len(c.OnlyB), len(c.FactorsDiffer), why)
	}
	cr := report.NewCompareReport(c, args[0], args[1], gate)
	for _, w := range c.Warnings() {
		fmt.Fprintf(cmd.ErrOrStderr(), "compare: warning: %s\n", w)
	}
	// Everything is drawn before anything is written.
	var fig plot.Figure
	if f.plot != "" {
		if fig, err = plot.CompareFigure(c, plot.Options{}, "compare"); err != nil {
			return err
		}
	}
	err = writeOutput(cmd, f.out, "compare", fmt.Sprintf("%d rows", len(c.Rows)), func(w io.Writer) error {
		return format.write(w, cr)
	})
	if err != nil {
		return err
	}
	if f.plot != "" {
		if err := os.MkdirAll(f.plot, 0o755); err != nil {
			return badInput(err)
		}
		files, err := fig.Write(f.plot)
		if err != nil {
			return badInput(err)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "compare: plot -> %s\n", strings.Join(files, ", "))
	}
	if len(cr.Violations) > 0 {
		for _, v := range cr.Violations {
			fmt.Fprintf(cmd.ErrOrStderr(), "compare: violated: %s\n", v.Text())
		}
		return gateFailedError{violations: len(cr.Violations)}
	}
	return nil
}
