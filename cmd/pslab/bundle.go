package main

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"pslab/internal/brokers"
	"pslab/internal/lab"
	"pslab/internal/metrics"
	"pslab/internal/report"
	"pslab/internal/results"
	"pslab/netem/linkinfo"
)

func newBundleCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bundle",
		Short: "Work on run bundles: set rows aside, where the wall time went, link bounds, CPU per message",
		Long: `Commands over run bundles (a directory with records.jsonl, hist/ and
records.superseded.jsonl): set case rows aside so a resumed run runs them
again, sum where a run's wall time went, set core NATS throughput
against the bound of the emulated link, and what a message cost in CPU.`,
	}
	cmd.AddCommand(newSetAsideCmd(), newWallTimeCmd(), newLinkBoundCmd(), newFramesCmd(), newCPUCmd())
	return cmd
}

func init() { rootCmd.AddCommand(newBundleCmd()) }

func newSetAsideCmd() *cobra.Command {
	var rows results.Rows
	var cases, tag string
	cmd := &cobra.Command{
		Use:   "set-aside BUNDLE --broker B --network N --cases 15,16 --tag TAG",
		Short: "Move every record of some case rows to records.superseded.jsonl, so a resumed run runs them again",
		Long: `Set aside every record of the named case rows (cases of one broker over one
network) of a bundle: the records move from records.jsonl to
records.superseded.jsonl (appended, as written) and their histograms from
hist/ to hist-superseded/TAG/, so that ` + "`pslab run --resume`" + ` runs those rows
again from their first repetition. Whole rows are set aside, never single
records, so that the choice cannot depend on a repetition's outcome.

The superseded file is written before records.jsonl (each atomically), so
a kill in between leaves a record in both files, never in none; a second
call finds nothing left to move. Refuses, changing nothing (exit code 2),
when a case matches no record or TAG's folder already holds one of the
histograms.`,
		Example: "  pslab bundle set-aside results/gaddah-kunz-repro/gaddah-kunz-set1 --broker nats --network wireline --cases 15,16 --tag old-accounting",
		Args:    argsCheck(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, c := range strings.Split(cases, ",") {
				if c = strings.TrimSpace(c); c != "" {
					rows.Cases = append(rows.Cases, c)
				}
			}
			if rows.Broker == "" || rows.Network == "" || len(rows.Cases) == 0 || tag == "" {
				return badInputf("set-aside needs --broker, --network, --cases and --tag")
			}
			res, err := results.SetAside(args[0], rows, tag)
			if err != nil {
				return badInput(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "set aside %d record(s) of case(s) %s on %s over %s; %d histogram(s) to %s; %d record(s) kept\n",
				res.Records, strings.Join(res.Cases, ","), rows.Broker, rows.Network, res.Histograms, res.HistDir, res.Kept)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&rows.Broker, "broker", "", "the rows' broker")
	fl.StringVar(&rows.Network, "network", "", "the rows' network (profile)")
	fl.StringVar(&cases, "cases", "", "comma-separated case ids, e.g. 15,16")
	fl.StringVar(&tag, "tag", "", "folder under hist-superseded/ for the histograms")
	return cmd
}

func newWallTimeCmd() *cobra.Command {
	var total float64
	cmd := &cobra.Command{
		Use:   "wall-time RESULTS... [--total SECONDS]",
		Short: "Where a run's wall time went, per broker and network and per phase",
		Long: `Where a run's wall time went, from its records: per broker x network the
number of case runs, their summed wall time and the mean per run, and per
phase the time inside a run: waiting for an idle link, the purge before
the case, connection set-up, warm-up and window, the drain and the rest of
the load engine, closing (or dropping) the connections, and the purge
after the case (which is outside wall_s). Records written before the
phases were timed have no idle/purge split: it is then in "drain and
rest". With --total (the run's own wall time), what the records do not
explain is set-up between cases: link verification, broker start and
stop, warm-up runs.`,
		Example: "  pslab bundle wall-time results/gaddah-kunz-repro/gaddah-kunz-set1 --total 78279",
		Args:    argsCheck(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			recs, err := report.ReadRecords(args...)
			if err != nil {
				return badInput(err)
			}
			results.WriteWallTimes(cmd.OutOrStdout(), results.WallTimes(recs), total)
			return nil
		},
	}
	cmd.Flags().Float64Var(&total, "total", 0, "the run's own wall time in seconds, to show what happened between case runs")
	return cmd
}

func newLinkBoundCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "link-bound RESULTS...",
		Short: "Subscriber throughput against the bound of the emulated link, per record",
		Long: `For each record over an emulated link, the most messages per second the
link can carry: the TCP goodput the profile's verification measured before
the run (payload bytes per second, with the profile's loss) over the bytes
one message puts on the link, the publish to the broker and the delivery
to a subscriber, as the record's broker frames them on its case's own
subject (each broker's descriptor says; a broker that cannot say is
refused). On a half-duplex profile both share one budget, on a
full-duplex one the slower direction bounds. Prints each repetition's
subscriber throughput, the bound and their ratio, and the mean ratio.`,
		Example: "  pslab bundle link-bound results/wifi-link-bound",
		Args:    argsCheck(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			recs, err := report.ReadRecords(args...)
			if err != nil {
				return badInput(err)
			}
			return writeLinkBounds(cmd, recs)
		},
	}
}

func newFramesCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "frames RESULTS...",
		Short: "The bytes one message of each record puts on the wire, as its broker frames it",
		Long: `For each record, the bytes (TCP payload) one message of its case puts on
the wire: the publish to the broker and the delivery to one subscriber,
as pslab's driver of the record's broker frames them on the case's own
subject or destination (the broker's descriptor says; a broker that
cannot say is refused). One line per record: case, repetition, broker,
bytes to the broker, bytes to a subscriber. Records of a pslab whose
driver framed messages otherwise are counted as today's driver frames
them.`,
		Example: "  pslab bundle frames /tmp/pslab-bench-run",
		Args:    argsCheck(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			recs, err := report.ReadRecords(args...)
			if err != nil {
				return badInput(err)
			}
			for i := range recs {
				r := &recs[i]
				toBroker, toClient, err := wireBytes(r)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s %d %s %d %d\n", r.CaseID, r.Rep, r.Broker, toBroker, toClient)
			}
			return nil
		},
	}
}

func newCPUCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "cpu RESULTS...",
		Short: "What one delivered message cost the load client and the broker in CPU, per record",
		Long: `For each record, the load client's and the broker's mean CPU over the
window (resources.client_cpu_pct, broker_cpu_pct; 100 = one core) divided
by the subscribers' throughput in it (result.sub_tput): CPU microseconds
per delivered message. The client publishes and subscribes, so its cost
covers a message sent and received. One line per record, after a header:
case, repetition, broker, network, offered rate per publisher (0:
saturating), subscriber msg/s, client CPU %, broker CPU %, CPU % used
outside the run (other), client and broker µs per message, the
open-loop pacer's tick (µs) and mean lag (ms; - when saturating), and the
mean latency (ms). Then one line per case, broker and network: the
repetitions, the mean client and broker µs per message, each with the
half-width of its 95 % confidence interval (Student's t; "-" for one
repetition), and the mean subscriber msg/s. A failed record, or one
without CPU samples, is refused with the reason (exit 2).
scripts/client-cost.sh reads it.`,
		Example: "  pslab bundle cpu results/client-cost/records/after",
		Args:    argsCheck(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			recs, err := report.ReadRecords(args...)
			if err != nil {
				return badInput(err)
			}
			return writeCPUCosts(cmd, recs)
		},
	}
}

func writeCPUCosts(cmd *cobra.Command, recs []results.Record) error {
	if len(recs) == 0 {
		return badInputf("no records")
	}
	var errs []error
	costs := make([]results.CPUCost, len(recs))
	for i := range recs {
		c, err := results.CPUCostOf(&recs[i])
		if err != nil {
			errs = append(errs, err)
		}
		costs[i] = c
	}
	if len(errs) > 0 {
		return badInput(errors.Join(errs...))
	}
	out := cmd.OutOrStdout()
	fmt.Fprintln(out, "case rep broker network rate sub_tput client_cpu_pct broker_cpu_pct other_cpu_pct client_us_msg broker_us_msg pacer_tick_us pacer_lag_ms latency_ms")
	for i := range recs {
		r, c := &recs[i], costs[i]
		tick, lag := "-", "-"
		if p := r.Result.Pacer; p != nil {
			tick, lag = fmt.Sprintf("%.0f", p.TickUs), fmt.Sprintf("%.3f", p.LagMeanMs)
		}
		fmt.Fprintf(out, "%s %d %s %s %g %.1f %.2f %.2f %.2f %.3f %.3f %s %s %.3f\n",
			r.CaseID, r.Rep, r.Broker, r.Network.Profile, r.Settings.Rate, c.SubTput, c.ClientCPU, c.BrokerCPU,
			c.OtherCPU, c.ClientUsMsg, c.BrokerUsMsg, tick, lag, r.Result.Latency.MeanMs)
	}
	type row struct{ cas, broker, network string }
	var order []row
	by := map[row][]results.CPUCost{}
	for i := range recs {
		k := row{recs[i].CaseID, recs[i].Broker, recs[i].Network.Profile}
		if _, ok := by[k]; !ok {
			order = append(order, k)
		}
		by[k] = append(by[k], costs[i])
	}
	fmt.Fprintln(out, "# case broker network reps client_us_msg ci95 broker_us_msg ci95 sub_tput")
	for _, k := range order {
		cs := by[k]
		var cl, br, tp []float64
		for _, c := range cs {
			cl, br, tp = append(cl, c.ClientUsMsg), append(br, c.BrokerUsMsg), append(tp, c.SubTput)
		}
		cm, cci := metrics.MeanCI95(cl)
		bm, bci := metrics.MeanCI95(br)
		tm, _ := metrics.MeanCI95(tp)
		fmt.Fprintf(out, "# %s %s %s %d %.3f %s %.3f %s %.1f\n", k.cas, k.broker, k.network, len(cs), cm, ciText(cci), bm, ciText(bci), tm)
	}
	return nil
}

// ciText is a confidence half-width, "-" when there is none (one value).
func ciText(hw float64) string {
	if math.IsNaN(hw) {
		return "-"
	}
	return fmt.Sprintf("%.3f", hw)
}

// wireBytes is what one message of r's case puts on the wire, by r's
// broker's descriptor.
func wireBytes(r *results.Record) (toBroker, toClient int, err error) {
	d, err := brokers.Default.Get(r.Broker)
	if err != nil {
		return 0, 0, badInput(err)
	}
	if d.WireBytes == nil {
		return 0, 0, badInputf("%s: pslab cannot say what one %s message puts on the wire", r.CaseID, r.Broker)
	}
	toBroker, toClient = d.WireBytes(lab.CasePrefix(r.RunID, r.CaseID, r.Rep), r.Factors)
	return toBroker, toClient, nil
}

// verifiedGoodput says what the link bound of a record's network is made
// of: its link's verified goodput, or each role's link's.
func verifiedGoodput(n results.Network) string {
	one := func(v *linkinfo.Verification, spec *linkinfo.Profile) string {
		if v == nil || spec == nil {
			return "unshaped"
		}
		return fmt.Sprintf("verified goodput %.0f / %.0f B/s up/down, %s duplex", v.ToBroker.GoodputKbit*1000/8, v.ToClient.GoodputKbit*1000/8, spec.Duplex)
	}
	if len(n.Links) == 0 {
		return one(n.Verify, n.Spec)
	}
	var parts []string
	for _, l := range n.Links {
		parts = append(parts, fmt.Sprintf("%s' link %s: %s", l.Role, l.Profile, one(l.Verify, l.Spec)))
	}
	return strings.Join(parts, "; ")
}

func writeLinkBounds(cmd *cobra.Command, recs []results.Record) error {
	out := cmd.OutOrStdout()
	var sum float64
	n := 0
	for i := range recs {
		r := &recs[i]
		if r.Error != "" || r.Result == nil {
			continue
		}
		toBroker, toClient, err := wireBytes(r)
		if err != nil {
			return err
		}
		bound, ok := results.LinkBound(r, toBroker, toClient)
		if !ok {
			return badInputf("case %s rep %d on %s: no verification of the link in the record", r.CaseID, r.Rep, r.Network.Profile)
		}
		if n == 0 {
			fmt.Fprintf(out, "rep  sub msgs/s  bound msgs/s  ratio  (%s: %d B to the broker + %d B to the subscriber per message; %s)\n",
				r.Broker, toBroker, toClient, verifiedGoodput(r.Network))
		}
		ratio := r.Result.SubTput / bound
		fmt.Fprintf(out, "%3d  %10.2f  %12.2f  %5.3f\n", r.Rep, r.Result.SubTput, bound, ratio)
		sum += ratio
		n++
	}
	if n == 0 {
		return badInputf("no measured records")
	}
	fmt.Fprintf(out, "mean ratio: %.3f\n", sum/float64(n))
	return nil
}
