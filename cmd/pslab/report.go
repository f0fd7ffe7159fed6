package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"pslab/internal/brokers"
	"pslab/internal/lab"
	"pslab/internal/plot"
	"pslab/internal/record"
	"pslab/internal/report"
	"pslab/internal/report/claims"
	"pslab/internal/report/htmlreport"
	"pslab/internal/results"
)

type reportFlags struct {
	format string
	out    string
}

func newReportCmd() *cobra.Command {
	var f reportFlags
	cmd := &cobra.Command{
		Use:   "report RESULTS...",
		Short: "Tables of measured results next to the paper's, and a check of the paper's claims",
		Long: `Read result records (run bundle directories, run directories, whose suites
are each taken, or records.jsonl files; several are pooled) and write a
report:

  - a validity table per broker x network: the rows whose 95 % CI is within
    ±5 % of the mean on each metric, repetitions used, flags, loss against
    backlog, and every row that missed the standard with the reason;
  - a claims check: each of Gaddah & Kunz's qualitative conclusions evaluated
    on the paper's own values and on each broker's measurements (tested on
    the repetitions: Welch's t on log values, TOST for "similar"), as holds /
    does not hold / inconclusive / not measurable, with the p-value and the
    numbers behind each verdict;
  - per suite, one row per case x broker x network: publisher and subscriber
    throughput (mean ± 95 % half-width over repetitions) and mean latency next
    to the paper's values (wireline against the paper's wireline column,
    wifi-paper against its wireless column), the wireless/wireline ratios,
    errata notes, a summary of the records' flags, and failed runs.

--format csv writes the per-case table only, one row per case x broker x
network; --format json the whole report as data (rows, validity, claims
with their items and p-values, flags, provenance; the schema is in
docs/report.md). See docs/report.md for how each claim is evaluated.

A missing, empty or malformed records file, a record with impossible
numbers (negative throughput, say) or an --out that cannot be written is
bad input (exit code 2, nothing written); a bad line is reported as
file:line, all problems at once.`,
		Example: `  pslab report runs/gaddah-kunz-set1-20260101-120000
  pslab report runs/set1 runs/set2 --out results/REPORT.md
  pslab report runs/set2/records.jsonl --format csv --out set2.csv
  pslab report runs/repro --format json | jq '.rows[] | select(.sub_tput.mean < 100)'`,
		Args: argsCheck(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error { return runReport(cmd, args, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "md", reportFormats.help())
	fl.StringVarP(&f.out, "out", "o", "", "write to this file (atomically) instead of standard output")
	return cmd
}

func init() { rootCmd.AddCommand(newReportCmd()) }

// reportInput is what every report format writes from.
type reportInput struct {
	data    *report.Dataset
	sources []string
}

// reportFormats are report's --format values.
var reportFormats = formats[reportInput]{
	{"md", "markdown, with the claims check", func(w io.Writer, in reportInput) error {
		return report.WriteMarkdown(w, in.data, claims.Check(in.data), in.sources)
	}},
	{"csv", "the per-case table", func(w io.Writer, in reportInput) error { return report.WriteCSV(w, in.data) }},
	{"json", "the whole report as data, docs/report.md", func(w io.Writer, in reportInput) error {
		return report.WriteJSON(w, report.BuildDoc(in.data, claims.Check(in.data), in.sources))
	}},
	{"html", "one self-contained page to open in a browser: tables to sort and filter, claims to open, the figures inline", writeReportHTML},
}

// writeReportHTML draws the report's figures (SVG) and writes its page.
func writeReportHTML(w io.Writer, in reportInput) error {
	doc := report.BuildDoc(in.data, claims.Check(in.data), in.sources)
	var figs []plot.Figure
	skipped, err := plot.Render(in.data, plot.Options{Figures: htmlreport.Figures, SVGOnly: true}, func(f plot.Figure) error {
		figs = append(figs, f)
		return nil
	})
	if err != nil {
		return err
	}
	return htmlreport.WriteReport(w, in.data, doc, figs, skipped)
}

func runReport(cmd *cobra.Command, args []string, f reportFlags) error {
	var errs []error
	format, err := reportFormats.get(f.format)
	if err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, checkOutputs(output{flag: "--out", path: f.out})...)
	recs, err := report.ReadRecords(args...)
	if err != nil { // missing, empty or malformed input: nothing to report on
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return badInput(errors.Join(errs...))
	}
	in := reportInput{data: report.Build(recs), sources: args}
	in.data.Caveats = brokerCaveats()
	bundles, err := capacityBundles(cmd, args)
	if err != nil {
		return err
	}
	if len(bundles) > 0 {
		check := claims.CheckCapacity(bundles)
		in.data.CapacityClaims = &check
	}
	if in.data.Partial, err = unfinishedRun(args); err != nil {
		return err
	}
	return writeOutput(cmd, f.out, "report", fmt.Sprintf("%d records", in.data.Records), func(w io.Writer) error {
		return format.write(w, in)
	})
}

// capacityBundles are the capacity bundles among the inputs (each
// records file's directory whose run.json says pslab capacity made it),
// with their rows replayed under the flags they ran with.
func capacityBundles(cmd *cobra.Command, paths []string) ([]claims.CapacityBundle, error) {
	var out []claims.CapacityBundle
	seen := map[string]bool{}
	for _, p := range paths {
		files, err := report.RecordFiles(p)
		if err != nil {
			return nil, badInput(err)
		}
		for _, f := range files {
			dir := filepath.Dir(f)
			if seen[dir] || !madeByCapacity(dir) {
				continue
			}
			seen[dir] = true
			params, err := bundleParams(cmd, dir)
			if err != nil {
				return nil, err
			}
			recs, err := results.Read(dir)
			if err != nil {
				return nil, badInput(err)
			}
			out = append(out, claims.CapacityBundle{Source: dir, Params: params, Results: params.Results(recs)})
		}
	}
	return out, nil
}

// madeByCapacity: dir (or its parent, for a suite of a run of several
// files) has a run.json of pslab capacity.
func madeByCapacity(dir string) bool {
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if _, err := os.Stat(filepath.Join(d, lab.RunInfoFile)); err != nil {
			continue
		}
		info, err := lab.ReadRunInfo(d)
		return err == nil && info.Command == capacityCommand
	}
	return false
}

// unfinishedRun says how the run the inputs belong to stopped when its
// parts.log (in the run's directory: an input bundle or its parent, the
// one with run.json) says its last part did not finish; "" for a finished
// run or inputs of no resumable run.
func unfinishedRun(paths []string) (string, error) {
	seen := map[string]bool{}
	for _, p := range paths {
		dir := p
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			dir = filepath.Dir(p)
		}
		for _, d := range []string{dir, filepath.Dir(dir)} {
			if seen[d] {
				continue
			}
			seen[d] = true
			if _, err := os.Stat(filepath.Join(d, lab.RunInfoFile)); err != nil {
				continue
			}
			line, finished, n, err := results.LastPart(d)
			if err != nil {
				return "", err
			}
			if line != "" && !finished {
				return fmt.Sprintf("the run in %s has not finished: part %d of its %s stopped (%s)", d, n, results.PartsFile, partOutcome(line)), nil
			}
		}
	}
	return "", nil
}

// partOutcome is the outcome field of a parts.log line: "exit 130",
// "running (no end recorded)".
func partOutcome(line string) string {
	fields := strings.SplitN(line, ", ", 4)
	if len(fields) < 3 {
		return line
	}
	if strings.HasPrefix(fields[1], "running") {
		return fields[1]
	}
	return fields[1] + ", " + fields[2]
}

// brokerCaveats are the registered brokers' notes for reports.
func brokerCaveats() []record.Caveat {
	var out []record.Caveat
	for _, n := range brokers.Names() {
		d, _ := brokers.Lookup(n)
		out = append(out, d.Caveats...)
	}
	return out
}
