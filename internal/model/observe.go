package model

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"pslab/internal/results"
)

// Observation is one measured case run as the models see it.
type Observation struct {
	NFilters  float64 `json:"n_fltr"`           // filters each message is checked against
	NDistinct float64 `json:"n_diff,omitempty"` // different filters among them (SunMQ); 0 = unknown
	// R is the replication grade, measured as dispatched/received.
	R                float64 `json:"r"`
	ReceivedPerSec   float64 `json:"received_per_s"`   // messages the broker received: result.pub_tput
	DispatchedPerSec float64 `json:"dispatched_per_s"` // deliveries it dispatched: result.sub_tput
	// BrokerCPU is the broker's mean CPU use in cores (1 = one core busy
	// for the whole window); 0 = not sampled.
	BrokerCPU float64 `json:"broker_cpu,omitempty"`
	Broker    string  `json:"broker"`
	Network   string  `json:"network,omitempty"`
	// Filter is the filter kind (record filter.kind: subject, property,
	// header, selector, none; "" for records without a filter block):
	// filters of different kinds cost differently, so they are fitted apart.
	Filter string `json:"filter,omitempty"`
	// Record is the record the observation came from (for figures).
	Record *results.Record `json:"-"`
	Source string          `json:"source"` // where it came from, e.g. run/case/rep
}

// Point is where the observation sits in the model's domain.
func (o Observation) Point() Point {
	return Point{NFilters: o.NFilters, NDistinct: o.NDistinct, R: o.R}
}

// ServiceTime is the measured B in seconds under response resp: the
// inverse received throughput (Capacity) or the broker's CPU seconds per
// received message (Demand).
func (o Observation) ServiceTime(resp Response) (float64, error) {
	if !(o.ReceivedPerSec > 0) {
		return 0, fmt.Errorf("%s: received throughput %g msgs/s: no service time", o.Source, o.ReceivedPerSec)
	}
	switch resp {
	case Capacity, "":
		return 1 / o.ReceivedPerSec, nil
	case Demand:
		if !(o.BrokerCPU > 0) {
			return 0, fmt.Errorf("%s: no broker CPU sample: no CPU demand", o.Source)
		}
		return o.BrokerCPU / o.ReceivedPerSec, nil
	}
	return 0, fmt.Errorf("unknown response %q", resp)
}

// FilterCount reads the number of filters of a record; ok is false when
// the record does not say. FiltersFromRecord reads the record's own filter
// block; FiltersFromName and FiltersFromSelector serve records written
// before it existed or designs it does not describe.
type FilterCount func(results.Record) (n int, ok bool)

// FiltersFromRecord reads n_fltr from the record's filter block.
func FiltersFromRecord(r results.Record) (int, bool) {
	if r.Filter == nil {
		return 0, false
	}
	return r.Filter.NFilters, true
}

// DistinctFromRecord reads n_diff from the record's filter block.
func DistinctFromRecord(r results.Record) (int, bool) {
	if r.Filter == nil {
		return 0, false
	}
	return r.Filter.NDistinct, true
}

// FiltersAuto reads the record's filter block and falls back to
// FiltersFromSelector for records written before it existed.
func FiltersAuto(r results.Record) (int, bool) {
	if n, ok := FiltersFromRecord(r); ok {
		return n, true
	}
	return FiltersFromSelector(r)
}

// FiltersFromName reads "key=N" from the record's case name, e.g. key
// "filters" in "filters=40 subscribers=10" as `pslab sweep` names cases.
// Fields are separated by blanks or commas.
func FiltersFromName(key string) FilterCount {
	return func(r results.Record) (int, bool) {
		for _, f := range strings.FieldsFunc(r.Name, func(c rune) bool { return c == ' ' || c == ',' || c == '\t' }) {
			k, v, ok := strings.Cut(f, "=")
			if !ok || k != key {
				continue
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return 0, false
			}
			return n, true
		}
		return 0, false
	}
}

// FiltersFromSelector counts one filter per subscriber on a message's
// topic when the case has the selector factor on (each subscriber then
// installs one selector), and none when it is off: subscribers/topics,
// rounded up.
func FiltersFromSelector(r results.Record) (int, bool) {
	f := r.Factors
	if f.Subscribers <= 0 {
		return 0, false
	}
	if !f.Selector {
		return 0, true
	}
	t := max(f.Topics, 1)
	return (f.Subscribers + t - 1) / t, true
}

// BuildOptions control FromRecords.
type BuildOptions struct {
	// Distinct, when set, gives the number of different filters (SunMQ's
	// n_diff). Without it observations carry none.
	Distinct FilterCount
	// Response decides which records are usable: Capacity (default) skips
	// records whose link was shaped (the link, not the broker, bounds
	// them); Demand needs the broker's CPU samples.
	Response Response
	// MinBrokerCPU skips records whose broker used less than this share
	// of one core, in percent (100 = one core); 0 = no minimum. Use it to
	// keep only runs where the broker was busy, i.e. likely the bottleneck.
	MinBrokerCPU float64
}

// Skip is a record FromRecords left out, and why.
type Skip struct {
	Source string `json:"source"`
	Reason string `json:"reason"` // short key: see SkipReasons
	Detail string `json:"detail,omitempty"`
}

// Skip reasons.
const (
	SkipFailed       = "failed"          // the run failed, no measurement
	SkipNoFilters    = "no-filter-count" // the FilterCount did not know
	SkipClientBound  = "client-bound"    // flagged: the client, not the broker, was the bottleneck
	SkipShapedLink   = "shaped-link"     // capacity response on an emulated link
	SkipNoTput       = "no-throughput"   // nothing received by the broker in the window
	SkipNoDeliveries = "no-deliveries"   // deliveries were due but none arrived in the window: r unknown
	SkipNoCPU        = "no-broker-cpu"   // demand response without broker CPU samples
	SkipLowCPU       = "broker-cpu-low"  // below BuildOptions.MinBrokerCPU
	SkipNotSaturated = "not-saturated"   // capacity response: the broker was not the bottleneck (results.SaturationOf)
	SkipInterrupted  = "interrupted"     // cut short by SIGINT/SIGTERM: not a result
)

// FromRecords turns records into observations: received = result.pub_tput,
// dispatched = result.sub_tput, r = dispatched/received, n_fltr from
// filters. Records that cannot stand for the broker's capacity are left
// out and listed with the reason, never patched up. Under the Capacity
// response that includes every run the capacity rule
// (results.SaturationOf) does not call saturated: client-bound, machine
// not busy, broker under 0.8 core. Under Demand those are kept: CPU
// seconds per message are measured whether or not the broker was the
// bottleneck.
func FromRecords(recs []results.Record, filters FilterCount, opt BuildOptions) ([]Observation, []Skip, error) {
	if filters == nil {
		return nil, nil, fmt.Errorf("no filter count: pslab records carry no number of filters; say where it comes from (e.g. the case name)")
	}
	if opt.Response == "" {
		opt.Response = Capacity
	}
	var obs []Observation
	var skips []Skip
	for i := range recs {
		r := recs[i]
		src := fmt.Sprintf("%s/case %s/rep %d", r.RunID, r.CaseID, r.Rep)
		skip := func(reason, detail string) { skips = append(skips, Skip{Source: src, Reason: reason, Detail: detail}) }
		if r.Error != "" || r.Result == nil {
			skip(SkipFailed, r.Error)
			continue
		}
		if r.Interrupted() {
			skip(SkipInterrupted, "")
			continue
		}
		if f, ok := results.Flagged(r.Flags, results.FlagClientBound); ok && opt.Response == Capacity {
			skip(SkipClientBound, f.String())
			continue
		}
		nf, ok := filters(r)
		if !ok {
			skip(SkipNoFilters, fmt.Sprintf("case name %q", r.Name))
			continue
		}
		if opt.Response == Capacity && r.Network.Backend != "" && r.Network.Backend != "none" {
			skip(SkipShapedLink, fmt.Sprintf("network %s (%s)", r.Network.Profile, r.Network.Backend))
			continue
		}
		res := r.Result
		if !(res.PubTput > 0) {
			skip(SkipNoTput, "")
			continue
		}
		if c := res.Counts; c.ReceivedInWindow == 0 && c.Expected > 0 {
			skip(SkipNoDeliveries, fmt.Sprintf("%d deliveries expected", c.Expected))
			continue
		}
		if opt.Response == Capacity {
			sat := results.SaturationOf(r.Resources)
			if sat.ClientBound {
				skip(SkipClientBound, sat.Why)
				continue
			}
			if !sat.Saturated {
				skip(SkipNotSaturated, sat.Why)
				continue
			}
		}
		o := Observation{
			NFilters: float64(nf), R: res.SubTput / res.PubTput,
			ReceivedPerSec: res.PubTput, DispatchedPerSec: res.SubTput,
			Broker: r.Broker, Network: r.Network.Profile, Source: src, Record: &recs[i],
		}
		if r.Filter != nil {
			o.Filter = r.Filter.Kind
		}
		if r.Resources != nil {
			o.BrokerCPU = r.Resources.BrokerCPUPct / 100
		}
		if (opt.Response == Demand || opt.MinBrokerCPU > 0) && !(o.BrokerCPU > 0) {
			skip(SkipNoCPU, "")
			continue
		}
		if opt.MinBrokerCPU > 0 && 100*o.BrokerCPU < opt.MinBrokerCPU {
			skip(SkipLowCPU, fmt.Sprintf("broker %.0f%% < %.0f%%", 100*o.BrokerCPU, opt.MinBrokerCPU))
			continue
		}
		if opt.Distinct != nil {
			if d, ok := opt.Distinct(r); ok {
				o.NDistinct = float64(d)
			}
		}
		obs = append(obs, o)
	}
	return obs, skips, nil
}

// CountSkips tallies skips by reason, in a stable order.
func CountSkips(skips []Skip) []ReasonCount {
	m := map[string]int{}
	for _, s := range skips {
		m[s.Reason]++
	}
	out := make([]ReasonCount, 0, len(m))
	for k, v := range m {
		out = append(out, ReasonCount{Reason: k, Count: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Reason < out[j].Reason })
	return out
}

// ReasonCount is how many records were skipped for one reason.
type ReasonCount struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}
