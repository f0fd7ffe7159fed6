package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"pslab/internal/brokers"
	"pslab/internal/lab"
	"pslab/internal/record"
	"pslab/internal/report"
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
		Long: `Read result records (run bundle directories or records.jsonl files; several
are pooled) and write a report:

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
network. See docs/report.md for how each claim is evaluated.

A missing, empty or malformed records file is bad input (exit code 2); a bad
line is reported as file:line.`,
		Example: `  pslab report runs/gaddah-kunz-set1-20260101-120000
  pslab report runs/set1 runs/set2 --out results/REPORT.md
  pslab report runs/set2/records.jsonl --format csv --out set2.csv`,
		Args: argsCheck(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error { return runReport(cmd, args, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "md", "output format: md (markdown, with the claims check) or csv (per-case table)")
	fl.StringVarP(&f.out, "out", "o", "", "write to this file (atomically) instead of standard output")
	return cmd
}

func init() { rootCmd.AddCommand(newReportCmd()) }

func runReport(cmd *cobra.Command, args []string, f reportFlags) error {
	if f.format != "md" && f.format != "csv" {
		return badInputf("--format %q: want md or csv", f.format)
	}
	recs, err := report.ReadRecords(args...)
	if err != nil {
		// Missing, empty or malformed input: nothing to report on.
		return badInput(err)
	}
	d := report.Build(recs)
	d.Caveats = brokerCaveats()
	partial, err := unfinishedRun(args)
	if err != nil {
		return err
	}
	return writeOutput(cmd, f.out, "report", fmt.Sprintf("%d records", d.Records), func(w io.Writer) error {
		if f.format == "csv" {
			return report.WriteCSV(w, d)
		}
		if partial != "" {
			fmt.Fprintf(w, "> **PARTIAL**: %s.\n> Only the rows that have run so far are here, with the repetitions they have so far;\n"+
				"> rows still to run are missing or short, and claims over them are not measurable.\n"+
				"> A report written once every repetition is done has no such note.\n\n", partial)
		}
		return report.WriteMarkdown(w, d, report.EvaluateClaims(d), args)
	})
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

// writeOutput writes a command's output to standard output, or, with
// --out, atomically to a file (nothing is written when write fails).
func writeOutput(cmd *cobra.Command, out, command, what string, write func(io.Writer) error) error {
	var buf bytes.Buffer
	var w io.Writer = cmd.OutOrStdout()
	if out != "" {
		w = &buf
	}
	if err := write(w); err != nil {
		return err
	}
	if out != "" {
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		if err := results.WriteAtomic(out, buf.Bytes()); err != nil {
			return fmt.Errorf("write %s: %w", out, err)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s -> %s\n", command, what, out)
	}
	return nil
}
