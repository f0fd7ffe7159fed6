package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"pslab/internal/results"
)

// FitSettings choose the records and forms of a fit, spelled as the flags
// of "pslab model fit" (and plot, measure) spell them; error messages name
// those flags.
type FitSettings struct {
	// Forms is "all" or a comma list of fiorano, sunmq, websphere.
	Forms string
	// FiltersFrom: record, auto, name, name:KEY or selector.
	FiltersFrom string
	// DistinctFrom: record or name:KEY; "" is record with FiltersFrom
	// record or auto, none otherwise.
	DistinctFrom string
	// Response: capacity or demand. Weighting: relative or none.
	Response, Weighting string
	// SunMQFilters: different or identical (SunMQ's n_diff where records
	// give none).
	SunMQFilters string
	// Broker keeps only that broker's records ("" every broker).
	Broker string
	// MinBrokerCPU skips records whose broker used less CPU (% of a core).
	MinBrokerCPU float64
}

// DefaultFitSettings are the flags' defaults with response resp.
func DefaultFitSettings(resp Response) FitSettings {
	return FitSettings{Forms: "all", FiltersFrom: "record", Response: string(resp), Weighting: "relative", SunMQFilters: "different"}
}

// FitSources reads the records of sources (bundle directories or
// records.jsonl files, pooled) and fits every selected form per broker,
// network and filter kind. Every error is about the input: the settings,
// the files, or records none of which can be used.
func FitSources(sources []string, s FitSettings) (Report, []Group, error) {
	var rep Report
	filters, err := FilterSource("--filters-from", s.FiltersFrom, true)
	if err != nil {
		return rep, nil, err
	}
	mix, err := ParseMix(s.SunMQFilters)
	if err != nil {
		return rep, nil, err
	}
	forms, err := PickForms(s.Forms, mix)
	if err != nil {
		return rep, nil, err
	}
	opt := FitOptions{Response: Response(s.Response), Weighting: Weighting(s.Weighting)}
	if opt.Response != Capacity && opt.Response != Demand {
		return rep, nil, fmt.Errorf("--response %q: want capacity or demand", s.Response)
	}
	if opt.Weighting != Relative && opt.Weighting != Unweighted {
		return rep, nil, fmt.Errorf("--weighting %q: want relative or none", s.Weighting)
	}
	bo := BuildOptions{Response: opt.Response, MinBrokerCPU: s.MinBrokerCPU}
	if s.DistinctFrom == "" && (s.FiltersFrom == "record" || s.FiltersFrom == "auto") {
		s.DistinctFrom = "record"
	}
	if s.DistinctFrom != "" {
		if bo.Distinct, err = FilterSource("--distinct-from", s.DistinctFrom, false); err != nil {
			return rep, nil, err
		}
	}
	recs, err := readSources(sources, s.Broker)
	if err != nil {
		return rep, nil, err
	}
	obs, skips, err := FromRecords(recs, filters, bo)
	if err != nil {
		return rep, nil, err
	}
	rep = Report{Response: opt.Response, Weighting: opt.Weighting, Sources: sources, Records: len(recs),
		Skipped: CountSkips(skips), SkippedRuns: skips}
	if len(obs) == 0 {
		hint := ""
		if opt.Response == Capacity {
			hint = "; with --response capacity only saturated runs count, try --response demand"
		}
		return rep, nil, fmt.Errorf("none of the %d records can be used (skipped: %s%s)", len(recs), skipCounts(rep.Skipped), hint)
	}
	groups := FitGroups(obs, forms, opt)
	for _, g := range groups {
		rep.Groups = append(rep.Groups, NewGroupReport(g))
	}
	return rep, groups, nil
}

// readSources reads and pools the records of sources, keeping only
// broker's when broker is not "".
func readSources(sources []string, broker string) ([]results.Record, error) {
	var recs []results.Record
	for _, a := range sources {
		rs, err := results.Read(a)
		if err != nil {
			return nil, err
		}
		recs = append(recs, rs...)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("no records in %s", strings.Join(sources, ", "))
	}
	if broker == "" {
		return recs, nil
	}
	var keep []results.Record
	for _, r := range recs {
		if r.Broker == broker {
			keep = append(keep, r)
		}
	}
	if len(keep) == 0 {
		return nil, fmt.Errorf("--broker %s: no records of that broker", broker)
	}
	return keep, nil
}

// skipCounts lists reason counts as "3 reason, 1 other".
func skipCounts(cs []ReasonCount) string {
	var s []string
	for _, c := range cs {
		s = append(s, fmt.Sprintf("%d %s", c.Count, c.Reason))
	}
	return strings.Join(s, ", ")
}

// SkippedText lists reason counts, or "none".
func SkippedText(cs []ReasonCount) string {
	if len(cs) == 0 {
		return "none"
	}
	return skipCounts(cs)
}

// Fitted tells whether some group has a best form.
func Fitted(groups []Group) bool {
	for _, g := range groups {
		if g.Best != "" {
			return true
		}
	}
	return false
}

// EncodeReport renders rep as format "md" (WriteFitMarkdown) or "json"
// (indented, what "pslab model predict --broker-params" reads).
func EncodeReport(rep Report, format string) ([]byte, error) {
	var buf bytes.Buffer
	var err error
	switch format {
	case "json":
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	case "md":
		err = WriteFitMarkdown(&buf, rep)
	default:
		err = fmt.Errorf("--format %q: want md or json", format)
	}
	return buf.Bytes(), err
}

// FilterSource turns a --filters-from (allowSelector) or --distinct-from
// value into a count; flag names the flag in the error.
func FilterSource(flag, v string, allowSelector bool) (FilterCount, error) {
	switch {
	case v == "record" && allowSelector:
		return FiltersFromRecord, nil
	case v == "record":
		return DistinctFromRecord, nil
	case v == "auto" && allowSelector:
		return FiltersAuto, nil
	case v == "name":
		return FiltersFromName("filters"), nil
	case strings.HasPrefix(v, "name:") && len(v) > len("name:"):
		return FiltersFromName(strings.TrimPrefix(v, "name:")), nil
	case v == "selector" && allowSelector:
		return FiltersFromSelector, nil
	}
	want := "record, name or name:KEY"
	if allowSelector {
		want = "record, auto, name, name:KEY or selector"
	}
	return nil, fmt.Errorf("%s %q: want %s", flag, v, want)
}

// PickForms reads "all" or a comma list of form names; a SunMQ form gets
// mix.
func PickForms(s string, mix FilterMix) ([]Form, error) {
	names := FormNames
	if s != "all" {
		names = strings.Split(s, ",")
	}
	var out []Form
	for _, n := range names {
		f, err := NewForm(strings.TrimSpace(n), nil)
		if err != nil {
			return nil, fmt.Errorf("--form: %w", err)
		}
		if sm, ok := f.(SunMQ); ok {
			sm.Mix = mix
			f = sm
		}
		out = append(out, f)
	}
	return out, nil
}

// ParseMix reads a --sunmq-filters value.
func ParseMix(s string) (FilterMix, error) {
	m := FilterMix(s)
	if m != AllDifferent && m != AllIdentical {
		return "", fmt.Errorf("--sunmq-filters %q: want different or identical", s)
	}
	return m, nil
}
