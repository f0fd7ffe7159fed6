package report

import (
	"fmt"
	"sort"
	"strings"

	"pslab/internal/results"
)

// SettingDiff is one setting that the compared rows' records have other
// values of in A than in B.
type SettingDiff struct {
	Kind string  `json:"kind"`
	Key  string  `json:"key"`
	A    []Count `json:"a"` // values over A's records of the rows that differ ("–": not set)
	B    []Count `json:"b"`
	Rows int     `json:"rows"` // compared rows whose records differ in it
	// OnPurpose: the setting differs because the comparison pairs other
	// brokers (compare --pair): a broker's version and settings. Listed,
	// but no warning and no --fail-on settings violation.
	OnPurpose bool `json:"on_purpose,omitempty"`
}

// KindText is the kind, with "(--pair)" when the difference is on purpose.
func (d SettingDiff) KindText() string {
	if d.OnPurpose {
		return d.Kind + " (--pair)"
	}
	return d.Kind
}

// PairsText is "B's nats-mqtt against A's nats, …".
func PairsText(pairs []Pair) string {
	var parts []string
	for _, p := range pairs {
		parts = append(parts, fmt.Sprintf("B's %s against A's %s", p.B, p.A))
	}
	return strings.Join(parts, ", ")
}

// Text is "run window_s: A 4, B 5, 180 (128 rows)", with at most three
// values a side.
func (d SettingDiff) Text() string {
	vals := func(cs []Count) string {
		var parts []string
		for i, c := range cs {
			if i == 3 {
				parts = append(parts, fmt.Sprintf("… (%d values)", len(cs)))
				break
			}
			parts = append(parts, c.Value)
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprintf("%s %s: A %s, B %s (%d rows)", d.Kind, d.Key, vals(d.A), vals(d.B), d.Rows)
}

// notSet stands for a setting a record does not have.
const notSet = "–"

type settingKey struct{ kind, key string }

// settingsDiff collects, over compared rows, the settings whose values
// differ between the rows' A and B records.
type settingsDiff struct {
	order []settingKey
	found map[settingKey]*SettingDiff
	a, b  map[settingKey]map[string]int
}

func newSettingsDiff() *settingsDiff {
	return &settingsDiff{found: map[settingKey]*SettingDiff{}, a: map[settingKey]map[string]int{}, b: map[settingKey]map[string]int{}}
}

// valuesOf maps each setting of recs to its values with their counts.
func valuesOf(recs []*results.Record) map[settingKey]map[string]int {
	out := map[settingKey]map[string]int{}
	for _, r := range recs {
		for _, s := range RecordSettings(r) {
			k := settingKey{s.Kind, s.Key}
			if out[k] == nil {
				out[k] = map[string]int{}
			}
			out[k][s.Value]++
		}
	}
	return out
}

// add compares one row's records of A and B.
func (sd *settingsDiff) add(a, b []*results.Record) {
	va, vb := valuesOf(a), valuesOf(b)
	keys := map[settingKey]bool{}
	for k := range va {
		keys[k] = true
	}
	for k := range vb {
		keys[k] = true
	}
	for k := range keys {
		ca, cb := withNotSet(va[k], len(a)), withNotSet(vb[k], len(b))
		if sameValues(ca, cb) {
			continue
		}
		d := sd.found[k]
		if d == nil {
			d = &SettingDiff{Kind: k.kind, Key: k.key}
			sd.found[k] = d
			sd.order = append(sd.order, k)
			sd.a[k], sd.b[k] = map[string]int{}, map[string]int{}
		}
		d.Rows++
		for v, n := range ca {
			sd.a[k][v] += n
		}
		for v, n := range cb {
			sd.b[k][v] += n
		}
	}
}

// withNotSet adds the records that lack the setting as notSet.
func withNotSet(vals map[string]int, records int) map[string]int {
	out := map[string]int{}
	n := 0
	for v, k := range vals {
		out[v] = k
		n += k
	}
	if n < records {
		out[notSet] = records - n
	}
	return out
}

// sameValues: the two sides took the same set of values (how many
// records each is not compared: A may have more repetitions).
func sameValues(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for v := range a {
		if _, ok := b[v]; !ok {
			return false
		}
	}
	return true
}

func (sd *settingsDiff) diffs() []SettingDiff {
	sort.SliceStable(sd.order, func(i, j int) bool {
		if sd.order[i].kind != sd.order[j].kind {
			return kindRank(sd.order[i].kind) < kindRank(sd.order[j].kind)
		}
		return sd.order[i].key < sd.order[j].key
	})
	var out []SettingDiff
	for _, k := range sd.order {
		d := *sd.found[k]
		d.A, d.B = sortedCounts(sd.a[k]), sortedCounts(sd.b[k])
		out = append(out, d)
	}
	return out
}

// recordID identifies a record across files: the run, what it ran and
// when it started.
func recordID(r *results.Record) string {
	return fmt.Sprintf("%s|%s|%s|%s|%s|%d|%d|%s", r.RunID, r.Suite, r.CaseID, r.Broker, r.Network.Profile, r.Rep, r.Started.UnixNano(), r.Error)
}

// sharedRecords counts the records of b that are also in a, and says
// whether the two are the same records.
func sharedRecords(a, b []*results.Record) (int, bool) {
	ids := map[string]bool{}
	for _, r := range a {
		ids[recordID(r)] = true
	}
	shared := 0
	seen := map[string]bool{}
	for _, r := range b {
		id := recordID(r)
		if ids[id] {
			shared++
		}
		seen[id] = true
	}
	return shared, shared == len(b) && len(seen) == len(ids) && len(a) == len(b)
}

// Warnings say what a reader of the comparison must know before the
// verdicts: identical inputs, records in both sets, and the settings the
// two sets were made with that differ.
func (c Comparison) Warnings() []string {
	var out []string
	switch {
	case c.Identical:
		out = append(out, fmt.Sprintf("A and B are the same %d records: every ratio is 1 by construction, and \"same\" only says how precise the repetitions are", c.RecordsA))
	case c.SharedRecords > 0:
		out = append(out, fmt.Sprintf("%d records are in both A and B: the two sets are not independent", c.SharedRecords))
	}
	var parts []string
	for _, d := range c.SettingsDiffer {
		if !d.OnPurpose {
			parts = append(parts, d.Text())
		}
	}
	if len(parts) > 0 {
		out = append(out, fmt.Sprintf("A and B were not made the same way (%d settings differ), so a ratio may measure these and not only what was changed on purpose: %s", len(parts), strings.Join(parts, "; ")))
	}
	return out
}
