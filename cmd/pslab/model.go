package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

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

// filterSource turns a --filters-from/--distinct-from value into a count.
func filterSource(flag, v string, allowSelector bool) (model.FilterCount, error) {
	switch {
	case v == "record" && allowSelector:
		return model.FiltersFromRecord, nil
	case v == "record":
		return model.DistinctFromRecord, nil
	case v == "auto" && allowSelector:
		return model.FiltersAuto, nil
	case v == "name":
		return model.FiltersFromName("filters"), nil
	case strings.HasPrefix(v, "name:") && len(v) > len("name:"):
		return model.FiltersFromName(strings.TrimPrefix(v, "name:")), nil
	case v == "selector" && allowSelector:
		return model.FiltersFromSelector, nil
	}
	want := "record, name or name:KEY"
	if allowSelector {
		want = "record, auto, name, name:KEY or selector"
	}
	return nil, fmt.Errorf("%s %q: want %s", flag, v, want)
}

func pickForms(s string, mix model.FilterMix) ([]model.Form, error) {
	names := model.FormNames
	if s != "all" {
		names = strings.Split(s, ",")
	}
	var out []model.Form
	for _, n := range names {
		f, err := model.NewForm(strings.TrimSpace(n), nil)
		if err != nil {
			return nil, fmt.Errorf("--form: %w", err)
		}
		if sm, ok := f.(model.SunMQ); ok {
			sm.Mix = mix
			f = sm
		}
		out = append(out, f)
	}
	return out, nil
}

func parseMix(s string) (model.FilterMix, error) {
	m := model.FilterMix(s)
	if m != model.AllDifferent && m != model.AllIdentical {
		return "", fmt.Errorf("--sunmq-filters %q: want different or identical", s)
	}
	return m, nil
}

func modelFit(cmd *cobra.Command, args []string, f modelFitFlags) error {
	if f.format != "md" && f.format != "json" {
		return badInputf("--format %q: want md or json", f.format)
	}
	rep, groups, err := fitRecords(args, f)
	if err != nil {
		return err
	}
	fitted := false
	for _, g := range groups {
		fitted = fitted || g.Best != ""
	}
	var buf bytes.Buffer
	if f.format == "json" {
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		err = model.WriteFitMarkdown(&buf, rep)
	}
	if err != nil {
		return err
	}
	if err := writeOut(cmd.OutOrStdout(), f.out, buf.Bytes()); err != nil {
		return err
	}
	if !fitted {
		return badInputf("no form could be fitted to any broker's records (reasons above)")
	}
	return nil
}

// fitRecords reads the records of args and fits every selected form per
// broker, network and filter kind. Errors are bad input.
func fitRecords(args []string, f modelFitFlags) (model.Report, []model.Group, error) {
	var rep model.Report
	filters, err := filterSource("--filters-from", f.filtersFrom, true)
	if err != nil {
		return rep, nil, badInput(err)
	}
	mix, err := parseMix(f.mix)
	if err != nil {
		return rep, nil, badInput(err)
	}
	forms, err := pickForms(f.form, mix)
	if err != nil {
		return rep, nil, badInput(err)
	}
	opt := model.FitOptions{Response: model.Response(f.response), Weighting: model.Weighting(f.weighting)}
	if opt.Response != model.Capacity && opt.Response != model.Demand {
		return rep, nil, badInputf("--response %q: want capacity or demand", f.response)
	}
	if opt.Weighting != model.Relative && opt.Weighting != model.Unweighted {
		return rep, nil, badInputf("--weighting %q: want relative or none", f.weighting)
	}
	bo := model.BuildOptions{Response: opt.Response, MinBrokerCPU: f.minCPU}
	if f.distinctFrom == "" && (f.filtersFrom == "record" || f.filtersFrom == "auto") {
		f.distinctFrom = "record"
	}
	if f.distinctFrom != "" {
		if bo.Distinct, err = filterSource("--distinct-from", f.distinctFrom, false); err != nil {
			return rep, nil, badInput(err)
		}
	}
	var recs []results.Record
	for _, a := range args {
		rs, err := results.Read(a)
		if err != nil {
			return rep, nil, badInput(err)
		}
		recs = append(recs, rs...)
	}
	if len(recs) == 0 {
		return rep, nil, badInputf("no records in %s", strings.Join(args, ", "))
	}
	if f.broker != "" {
		var keep []results.Record
		for _, r := range recs {
			if r.Broker == f.broker {
				keep = append(keep, r)
			}
		}
		if len(keep) == 0 {
			return rep, nil, badInputf("--broker %s: no records of that broker", f.broker)
		}
		recs = keep
	}
	obs, skips, err := model.FromRecords(recs, filters, bo)
	if err != nil {
		return rep, nil, badInput(err)
	}
	rep = model.Report{Response: opt.Response, Weighting: opt.Weighting, Sources: args, Records: len(recs),
		Skipped: model.CountSkips(skips), SkippedRuns: skips}
	if len(obs) == 0 {
		var s []string
		for _, c := range rep.Skipped {
			s = append(s, fmt.Sprintf("%d %s", c.Count, c.Reason))
		}
		hint := ""
		if opt.Response == model.Capacity {
			hint = "; with --response capacity only saturated runs count, try --response demand"
		}
		return rep, nil, badInputf("none of the %d records can be used (skipped: %s%s)", len(recs), strings.Join(s, ", "), hint)
	}
	groups := model.FitGroups(obs, forms, opt)
	for _, g := range groups {
		rep.Groups = append(rep.Groups, model.NewGroupReport(g))
	}
	return rep, groups, nil
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

type paramSet struct {
	name string
	form model.Form
	cov  [][]float64
}

func modelPredict(cmd *cobra.Command, f modelPredictFlags) error {
	if f.format != "md" && f.format != "json" {
		return badInputf("--format %q: want md or json", f.format)
	}
	sources := 0
	for _, set := range []bool{f.published != "", f.params != "", f.tRcv != "" || f.tFltr != "" || f.tTx != "" || f.tFltrDiff != ""} {
		if set {
			sources++
		}
	}
	if sources != 1 {
		return badInputf("give exactly one parameter source: --published, --broker-params, or --form with --t-rcv/--t-fltr/--t-tx")
	}
	if f.filters == "" {
		return badInputf("--filters is required")
	}
	nf, err := parseList("--filters", f.filters)
	if err != nil {
		return badInput(err)
	}
	rs, err := parseList("--replication", f.replication)
	if err != nil {
		return badInput(err)
	}
	nd := 0.0
	if f.distinct != "" {
		v, err := parseList("--distinct", f.distinct)
		if err != nil || len(v) != 1 {
			return badInputf("--distinct %q: want one number", f.distinct)
		}
		nd = v[0]
	}
	mix, err := parseMix(f.mix)
	if err != nil {
		return badInput(err)
	}
	var sets []paramSet
	switch {
	case f.published != "":
		sets, err = publishedSets(f.published)
	case f.params != "":
		sets, err = fittedSet(f)
	default:
		sets, err = manualSet(f)
	}
	if err != nil {
		return badInput(err)
	}
	var out []model.LabeledPrediction
	for _, s := range sets {
		if sm, ok := s.form.(model.SunMQ); ok && sm.Mix == "" {
			sm.Mix = mix
			s.form = sm
		}
		for _, n := range nf {
			for _, r := range rs {
				p := model.Point{NFilters: n, R: r}
				if s.form.Name() == "sunmq" {
					p.NDistinct = nd
				}
				pr, err := model.Predict(s.form, s.cov, p)
				if err != nil {
					return badInput(err)
				}
				out = append(out, model.LabeledPrediction{Set: s.name, Prediction: pr})
			}
		}
	}
	if f.format == "json" {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	return model.WritePredictionsMarkdown(cmd.OutOrStdout(), out)
}

func parseList(flag, s string) ([]float64, error) {
	var out []float64
	for _, part := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || v < 0 || v != v {
			return nil, fmt.Errorf("%s %q: want non-negative numbers separated by commas", flag, s)
		}
		out = append(out, v)
	}
	return out, nil
}

func publishedSets(name string) ([]paramSet, error) {
	if name == "all" {
		var out []paramSet
		for _, p := range model.PublishedSets() {
			out = append(out, paramSet{name: p.Name, form: p.Form})
		}
		return out, nil
	}
	p, err := model.PublishedByName(name)
	if err != nil {
		return nil, err
	}
	return []paramSet{{name: p.Name, form: p.Form}}, nil
}

func fittedSet(f modelPredictFlags) ([]paramSet, error) {
	data, err := os.ReadFile(f.params)
	if err != nil {
		return nil, err
	}
	var rep model.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("%s: not the JSON of pslab model fit: %w", f.params, err)
	}
	var match []model.GroupReport
	var all []string
	for _, g := range rep.Groups {
		all = append(all, g.Broker+"/"+g.Network+"/"+orNone(g.Filter))
		if (f.broker == "" || g.Broker == f.broker) && (f.network == "" || g.Network == f.network) &&
			(f.filter == "" || g.Filter == f.filter) {
			match = append(match, g)
		}
	}
	if len(match) != 1 {
		return nil, fmt.Errorf("%s: %d groups match --broker %q --network %q --filter %q; the file has (broker/network/filter): %s",
			f.params, len(match), f.broker, f.network, f.filter, strings.Join(all, ", "))
	}
	g := match[0]
	form := f.form
	if form == "" {
		form = g.Best
	}
	for _, fr := range g.Fits {
		if fr.Form == form {
			m, cov, err := fr.Restore()
			if err != nil {
				return nil, err
			}
			return []paramSet{{name: fmt.Sprintf("%s/%s/%s %s (fit)", g.Broker, g.Network, orNone(g.Filter), form), form: m, cov: cov}}, nil
		}
	}
	return nil, fmt.Errorf("%s: group %s/%s has no fit of form %q", f.params, g.Broker, g.Network, form)
}

func manualSet(f modelPredictFlags) ([]paramSet, error) {
	if f.form == "" {
		return nil, fmt.Errorf("--t-rcv/--t-fltr/--t-tx need --form fiorano, sunmq or websphere")
	}
	need := map[string][]string{
		"fiorano":   {"t-rcv", "t-fltr", "t-tx"},
		"sunmq":     {"t-rcv", "t-fltr", "t-fltr-diff", "t-tx"},
		"websphere": {"t-rcv", "t-fltr"},
	}[f.form]
	if need == nil {
		return nil, fmt.Errorf("--form %q: want fiorano, sunmq or websphere", f.form)
	}
	given := map[string]string{"t-rcv": f.tRcv, "t-fltr": f.tFltr, "t-fltr-diff": f.tFltrDiff, "t-tx": f.tTx}
	var vals []float64
	for _, k := range need {
		if given[k] == "" {
			return nil, fmt.Errorf("--form %s needs --%s", f.form, k)
		}
		v, err := model.ParseTime(given[k])
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", k, err)
		}
		vals = append(vals, v)
		delete(given, k)
	}
	for k, v := range given {
		if v != "" {
			return nil, fmt.Errorf("--%s does not belong to form %s (%v)", k, f.form, need)
		}
	}
	m, err := model.NewForm(f.form, vals)
	if err != nil {
		return nil, err
	}
	return []paramSet{{name: f.form + " (given)", form: m}}, nil
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
