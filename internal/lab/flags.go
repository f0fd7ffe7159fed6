package lab

import (
	"fmt"
	"strings"

	"pslab/internal/audit"
	"pslab/internal/load"
	"pslab/internal/results"
	"pslab/netem/linkinfo"
)

// Thresholds behind the flags. The paper kept every machine under 60 % CPU;
// here clients and broker share one machine, so the flags say when the
// machine, and which side of it, bounded the numbers.
const (
	machineSaturated = 0.90                   // client+broker CPU as a share of all cores
	clientHigh       = results.ClientMaxShare // client CPU as a share of all cores
)

// flagsFor lists reasons a reader should not take a record's numbers at
// face value.
func flagsFor(r *results.Record) []results.Flag {
	var flags []results.Flag
	res, rs := r.Result, r.Resources
	if rs.Isolated() {
		flags = append(flags, cpuSetFlags(rs)...)
	} else if rs != nil && rs.Cores > 0 {
		capacity := float64(rs.Cores) * 100
		total := rs.ClientCPUPct + rs.BrokerCPUPct
		if total >= machineSaturated*capacity {
			side := "broker"
			if rs.ClientCPUPct > rs.BrokerCPUPct {
				side = "client"
			}
			flags = append(flags, results.NewFlag(results.FlagCPUSaturated, "client %.0f%% + broker %.0f%% of %.0f%% (%d cores); the %s used more, the machine bounds this number",
				rs.ClientCPUPct, rs.BrokerCPUPct, capacity, rs.Cores, side))
		}
		if rs.ClientCPUPct >= clientHigh*capacity {
			flags = append(flags, results.NewFlag(results.FlagClientBound, "the client process used %.0f%% of %.0f%% CPU (the paper kept hosts under 60%%)",
				rs.ClientCPUPct, capacity))
		}
	}
	if f, ok := machineBusyFlag(rs); ok {
		flags = append(flags, f)
	}
	if res != nil {
		c := res.Counts
		flags = append(flags, accountingFlags(res)...)
		if c.PublishErrors > 0 {
			flags = append(flags, results.NewFlag(results.FlagPublishErrors, "%d (%s)", c.PublishErrors, res.FirstError))
		}
		if c.DecodeErrors > 0 || c.Unexpected > 0 {
			flags = append(flags, results.NewFlag(results.FlagBadDeliveries, "%d failed decoding, %d unexpected", c.DecodeErrors, c.Unexpected))
		}
		if res.Unclosed > 0 {
			flags = append(flags, results.NewFlag(results.FlagSlowClose, "%d connection(s) still closing %.0f s after the case", res.Unclosed, res.CloseS))
		}
		if n := audit.Failed(r.Audit); n > 0 {
			flags = append(flags, results.NewFlag(results.FlagAuditFailed, "%d delivery promise(s) not kept (see audit)", n))
		}
		if res.InFlightStalls > 0 {
			flags = append(flags, results.NewFlag(results.FlagInFlightStalled, "%d time(s) a publisher waited %.0f s at the in_flight bound with no delivery arriving (deliveries went missing) and went on", res.InFlightStalls, load.StallAfter.Seconds()))
		}
		if res.UnexplainedOutages > 0 {
			byBroker := ""
			if a := res.Accounting; a != nil && a.Held != nil && len(a.Held.ReplacedReasons) > 0 {
				byBroker = fmt.Sprintf("; the broker had closed subscriber connections their clients replaced, by its reason: %s", countsText(a.Held.ReplacedReasons))
			}
			flags = append(flags, results.NewFlag(results.FlagConnectionsLost, "%d client connection(s) dropped without a scheduled fault (all outages by cause: %s)%s", res.UnexplainedOutages, countsText(res.OutageCauses), byBroker))
		}
		if c.ReceivedInWindow == 0 {
			flags = append(flags, results.NewFlag(results.FlagNoDeliveries, "throughput and latency are not measured"))
		}
		if c.ReceivedInWindow > 0 && c.ReceivedInWindow < minDeliveries {
			flags = append(flags, fewDeliveriesFlag(c.ReceivedInWindow))
		}
	}
	if t := r.Throughput; t != nil && r.Settings.Capacity && !t.Saturation.Saturated && !t.Saturation.ClientBound {
		flags = append(flags, results.NewFlag(results.FlagNotSaturated, "not a capacity measurement: %s", t.Saturation.Why))
	}
	if r.Network.Path == "loopback" {
		flags = append(flags, results.NewFlag(results.FlagLoopback, "no emulating router on the path (not root)"))
	}
	flags = append(flags, linkOffFlags(r.Network)...)
	if r.Network.Path == PathHostNetwork {
		flags = append(flags, results.NewFlag(results.FlagHostNetwork, "an external broker (--url) reached over the host network, no emulating router on the path"))
	}
	return flags
}

// linkOffFlags flags each link whose verification from outside (before
// the cases) was out of pslab netem verify's default tolerances: the
// numbers were measured over a link that was not quite its profile.
func linkOffFlags(n results.Network) []results.Flag {
	type verified struct {
		what string
		v    *linkinfo.Verification
	}
	all := []verified{{n.Profile, n.Verify}}
	for _, l := range n.Links {
		all = append(all, verified{l.Role + " on " + l.Profile, l.Verify})
	}
	var flags []results.Flag
	for _, x := range all {
		if x.v == nil {
			continue
		}
		if err := x.v.Check(linkinfo.DefaultRateTol, linkinfo.DefaultLossTolPts); err != nil {
			flags = append(flags, results.NewFlag(results.FlagLinkOff, "%s: %s", x.what, strings.ReplaceAll(err.Error(), "\n", "; ")))
		}
	}
	return flags
}

// progressLine is the one-line summary printed after each case run.
func progressLine(r *results.Record) string {
	head := fmt.Sprintf("case %s %s %s rep %d (%s)", r.CaseID, r.Broker, r.Network.Profile, r.Rep, r.Factors)
	if r.Error != "" {
		return head + ": FAILED: " + r.Error
	}
	res := r.Result
	if r.Interrupted() {
		head += ": INTERRUPTED (not a result)"
	}
	s := fmt.Sprintf("%s: %s, lost %d dup %d", head, measuredText(res), res.Counts.Lost, res.Counts.Duplicated)
	if t := r.Throughput; t != nil && (r.Settings.Capacity || r.Factors.Filtered()) {
		s += fmt.Sprintf(", r %.2f", t.Replication)
		if r.Filter != nil {
			s += fmt.Sprintf(" (design %.4g, n_fltr %d)", r.Filter.RExpected, r.Filter.NFilters)
		}
		if r.Resources != nil {
			s += fmt.Sprintf(", broker %.2f cores", r.Resources.BrokerCPUPct/100)
		}
	}
	if res.Counts.Backlog > 0 {
		s += fmt.Sprintf(", backlog %d", res.Counts.Backlog)
	}
	for _, f := range res.Faults {
		s += fmt.Sprintf("; %s at %.1f-%.1f s", f.Kind, f.StartS, f.EndS)
		if f.Backlog > 0 {
			s += fmt.Sprintf(" (backlog %d, caught up in %.2f s)", f.Backlog, f.CatchupS)
		}
	}
	if n := audit.Failed(r.Audit); n > 0 {
		s += fmt.Sprintf("; AUDIT: %d promise(s) not kept", n)
	}
	if len(r.Flags) > 0 {
		s += fmt.Sprintf(" [%d flag(s)]", len(r.Flags))
	}
	return s
}

// notMeasured stands for a metric with no data in the window: a 0 there
// would read as a measured zero.
const notMeasured = "not measured"

// measuredText is the throughputs and latency of a progress line, each
// "not measured" where the window gave it no data: publisher throughput
// when the publishers sent nothing in it (no-sends-in-window), subscriber
// throughput when nothing arrived in it (no-deliveries-in-window), latency
// when none of its messages arrived (no-latency).
func measuredText(res *load.Result) string {
	pub, sub, lat := "pub "+notMeasured, "sub "+notMeasured, "latency "+notMeasured
	if res.Counts.SentInWindow > 0 {
		pub = fmt.Sprintf("pub %.1f msg/s", res.PubTput)
	}
	if res.Counts.ReceivedInWindow > 0 {
		sub = fmt.Sprintf("sub %.1f msg/s", res.SubTput)
	}
	if res.Latency.Count > 0 {
		lat = fmt.Sprintf("latency mean %.2f ms p99 %.2f ms", res.Latency.MeanMs, res.Latency.P99Ms)
	}
	return pub + ", " + sub + ", " + lat
}
