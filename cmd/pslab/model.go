package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"pslab/internal/model"
	"pslab/internal/results"
)

func newModelCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Fit and use Henjes et al.'s broker service-time models",
		Long: `Service-time models of Henjes et al. (FioranoMQ, SunMQ, WebsphereMQ papers):
the broker's time per received message B as a function of the number of
filters n_fltr and the replication grade r. "fit" estimates them from result
records by least squares; "predict" evaluates fitted or published parameters.
See docs/model.md.`,
		Example: `  pslab model fit runs/filters --filters-from name
  pslab model predict --published all --filters 10,40,160 --replication 1,10`,
		Args: argsCheck(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return badInputf("give a subcommand: measure, fit, predict or plot")
		},
	}
	cmd.AddCommand(newModelFitCmd(), newModelPredictCmd(), newModelPlotCmd(), newModelMeasureCmd())
	return cmd
}

func init() { rootCmd.AddCommand(newModelCmd()) }

type modelFitFlags struct {
	form, format, filtersFrom, distinctFrom, response, weighting, mix, broker, out string
	minCPU                                                                         float64
}

func newModelFitCmd() *cobra.Command {
	var f modelFitFlags
	cmd := &cobra.Command{
		Use:   "fit RESULTS...",
		Short: "Fit the service-time models to result records, per broker and network",
		Long: `Read result records (bundle directories or records.jsonl files, pooled) and
fit each model form by weighted linear least squares on B = 1/received
throughput (pub_tput), one fit per broker and network. Prints the parameters
with standard errors, R², adjusted R², residual standard error, the relative
error of the modelled throughput, the best form by AICc, and what a message,
a filter and a dispatched copy cost in µs, next to the papers' values.

--filters-from says where n_fltr (and SunMQ's n_diff) come from:
  record       the record's filter block (filter.n_fltr, filter.n_diff),
               written by every run since the filter factor (default)
  auto         the filter block, or for older records "selector"
  name         "filters=N" in the case name (pslab sweep names cases
               "filters=40 subscribers=10")
  name:KEY     "KEY=N" in the case name
  selector     one filter per subscriber on a message's topic when the
               case's selector factor is on, none when it is off
r is measured: sub_tput / pub_tput.

--response capacity keeps only capacity measurements: runs the capacity
rule calls saturated (client + broker >= 90 % of all cores, broker >= 0.8
core, client < 60 % of all cores; see docs/filters.md) over an unshaped
link. --response demand keeps every run with broker CPU samples: the CPU
seconds per message are measured whether or not the broker was the
bottleneck. Failed runs and records without a filter count are always
skipped. Every skipped run is listed with its reason.
A fit is refused when its parameters are not identifiable from the data
(e.g. every record has the same number of filters) or there are not more
records than parameters. The SunMQ form needs the number of different
filters (--distinct-from); without it, it is refused.

--format json writes everything, covariances included, for
"pslab model predict --broker-params". Exit 2 on bad input or when no form
can be fitted.`,
		Example: `  pslab model fit runs/henjes-grid
  pslab model fit runs/henjes-grid --response demand --broker nats
  pslab model fit runs/filters-20260101 --filters-from name
  pslab model fit runs/a runs/b --filters-from name:nf --form fiorano,websphere
  pslab model fit runs/filters --filters-from name --format json --out fit.json
  pslab model fit runs/set1 --filters-from selector --response demand`,
		Args: argsCheck(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error { return modelFit(cmd, args, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "md", "output format: md or json")
	fl.StringVarP(&f.out, "out", "o", "", "write to this file (atomically) instead of standard output")
	addFitFlags(cmd, &f)
	return cmd
}

// addFitFlags registers the flags that select records and forms (fit, plot).
func addFitFlags(cmd *cobra.Command, f *modelFitFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.form, "form", "all", "forms to fit: all, or a comma list of fiorano, sunmq, websphere")
	fl.StringVar(&f.filtersFrom, "filters-from", "record", "where the number of filters comes from: record, auto, name, name:KEY or selector")
	fl.StringVar(&f.distinctFrom, "distinct-from", "", "where the number of different filters comes from (SunMQ): record or name:KEY (default: record with --filters-from record/auto)")
	fl.StringVar(&f.response, "response", "capacity", "capacity (B = 1/received throughput, the papers') or demand (B = broker CPU s per received message)")
	fl.StringVar(&f.weighting, "weighting", "relative", "relative (weights 1/B², relative errors) or none (ordinary least squares)")
	fl.StringVar(&f.mix, "sunmq-filters", "different", "SunMQ n_diff where records give none: different (n_diff = n_fltr) or identical (1)")
	fl.StringVar(&f.broker, "broker", "", "fit only this broker's records")
	fl.Float64Var(&f.minCPU, "min-broker-cpu", 0, "skip records whose broker used less CPU than this, in % of one core")
}

// settings are the fit flags as the model package takes them.
func (f modelFitFlags) settings() model.FitSettings {
	return model.FitSettings{Forms: f.form, FiltersFrom: f.filtersFrom, DistinctFrom: f.distinctFrom,
		Response: f.response, Weighting: f.weighting, SunMQFilters: f.mix, Broker: f.broker, MinBrokerCPU: f.minCPU}
}

func modelFit(cmd *cobra.Command, args []string, f modelFitFlags) error {
	if f.format != "md" && f.format != "json" {
		return badInputf("--format %q: want md or json", f.format)
	}
	rep, groups, err := model.FitSources(args, f.settings())
	if err != nil {
		return badInput(err)
	}
	data, err := model.EncodeReport(rep, f.format)
	if err != nil {
		return err
	}
	if err := writeOut(cmd.OutOrStdout(), f.out, data); err != nil {
		return err
	}
	if !model.Fitted(groups) {
		return badInputf("no form could be fitted to any broker's records (reasons above)")
	}
	return nil
}

func writeOut(w io.Writer, path string, data []byte) error {
	if path == "" {
		_, err := w.Write(data)
		return err
	}
	if err := results.WriteAtomic(path, data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

type modelPredictFlags struct {
	published, params, broker, network, filter, form, format, mix string
	tRcv, tFltr, tFltrDiff, tTx                                   string
	filters, replication, distinct                                string
}

func newModelPredictCmd() *cobra.Command {
	var f modelPredictFlags
	cmd := &cobra.Command{
		Use:   "predict",
		Short: "Predict received, dispatched and overall throughput from model parameters",
		Long: `Evaluate a service-time model at given numbers of filters and replication
grades: B, received (1/B), dispatched (r/B) and overall ((1+r)/B) msgs/s.
The parameters come from exactly one of:

  --published NAME   a set printed in the papers: fiorano-corrid (alias
                     fiorano), fiorano-appprop, sunmq, websphere, or all
  --broker-params F  the JSON of "pslab model fit --format json"; --broker and
                     --network choose the group, --form the form (default:
                     the group's best); standard errors are propagated
  --form F --t-rcv T --t-fltr T [--t-fltr-diff T] [--t-tx T]
                     your own values; times take a unit (s, ms, us, ns),
                     bare numbers are µs. For sunmq, --t-fltr is t_fltr^all.

--filters and --replication take comma lists; every combination is a row.
--distinct gives SunMQ's number of different filters (default: from
--sunmq-filters, "different" = all of them).`,
		Example: `  pslab model predict --published fiorano --filters 45 --replication 5
  pslab model predict --published all --filters 10,40,160 --replication 1,10
  pslab model predict --broker-params fit.json --broker nats --filters 20 --replication 1,5,10
  pslab model predict --form fiorano --t-rcv 2 --t-fltr 0.3us --t-tx 1.5 --filters 100 --replication 10`,
		Args: argsCheck(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return modelPredict(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.published, "published", "", "published parameter set by name, or all")
	fl.StringVar(&f.params, "broker-params", "", "JSON written by pslab model fit --format json")
	fl.StringVar(&f.broker, "broker", "", "with --broker-params: the broker group")
	fl.StringVar(&f.network, "network", "", "with --broker-params: the network group")
	fl.StringVar(&f.filter, "filter", "", "with --broker-params: the filter kind group (subject, property, header, ...)")
	fl.StringVar(&f.form, "form", "", "form: fiorano, sunmq or websphere (with --t-*, or to pick a fit from --broker-params)")
	fl.StringVar(&f.tRcv, "t-rcv", "", "t_rcv per received message (bare number = µs)")
	fl.StringVar(&f.tFltr, "t-fltr", "", "t_fltr per filter (sunmq: t_fltr^all)")
	fl.StringVar(&f.tFltrDiff, "t-fltr-diff", "", "sunmq: t_fltr^diff per different filter")
	fl.StringVar(&f.tTx, "t-tx", "", "t_tx per dispatched copy (not for websphere)")
	fl.StringVar(&f.filters, "filters", "", "number(s) of filters n_fltr, comma list (required)")
	fl.StringVar(&f.replication, "replication", "1", "replication grade(s) r, comma list")
	fl.StringVar(&f.distinct, "distinct", "", "sunmq: number of different filters (default from --sunmq-filters)")
	fl.StringVar(&f.mix, "sunmq-filters", "different", "sunmq n_diff when --distinct is not given: different (n_fltr) or identical (1)")
	fl.StringVar(&f.format, "format", "md", "output format: md or json")
	return cmd
}

func modelPredict(cmd *cobra.Command, f modelPredictFlags) error {
	if f.format != "md" && f.format != "json" {
		return badInputf("--format %q: want md or json", f.format)
	}
	out, err := model.PredictTable(model.PredictSettings{Published: f.published, BrokerParams: f.params,
		Broker: f.broker, Network: f.network, Filter: f.filter, Form: f.form,
		TRcv: f.tRcv, TFltr: f.tFltr, TFltrDiff: f.tFltrDiff, TTx: f.tTx,
		Filters: f.filters, Replication: f.replication, Distinct: f.distinct, SunMQFilters: f.mix})
	if err != nil {
		return badInput(err)
	}
	if f.format == "json" {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	return model.WritePredictionsMarkdown(cmd.OutOrStdout(), out)
}
