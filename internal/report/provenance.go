package report

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"pslab/internal/results"
)

// What made a record, as key=value settings by kind: the run settings
// (phases, windows, labs), the link (profile spec, backend, path), the
// build (pslab, Go, kernel), the broker (version, settings) and the
// machine (host, cores, CPU model, CPU sets). Report and compare read
// records through these: the provenance of a report, and the settings
// two compared sets differ in.

// Setting kinds.
const (
	KindRun     = "run"
	KindLink    = "link"
	KindBuild   = "build"
	KindBroker  = "broker"
	KindMachine = "machine"
)

// SettingKinds in the order reports list them.
var SettingKinds = []string{KindRun, KindLink, KindBuild, KindBroker, KindMachine}

// Setting is one thing that made a record, e.g. {run, window_s, 5}.
type Setting struct {
	Kind, Key, Value string
}

// RecordSettings lists what made a record.
func RecordSettings(r *results.Record) []Setting {
	var out []Setting
	add := func(kind, key, value string) {
		if value != "" {
			out = append(out, Setting{kind, key, value})
		}
	}
	for k, v := range flatJSON(r.Settings) {
		add(KindRun, k, v)
	}
	add(KindLink, "profile", r.Network.Profile)
	add(KindLink, "path", r.Network.Path)
	add(KindLink, "backend", r.Network.Backend)
	add(KindLink, "tcp_congestion", r.Network.TCPCongestion)
	if r.Network.Spec != nil {
		for k, v := range flatJSON(r.Network.Spec) {
			if k != "description" && k != "name" {
				add(KindLink, k, v)
			}
		}
	}
	add(KindBuild, "pslab", r.Versions.Pslab)
	add(KindBuild, "go", r.Versions.Go)
	add(KindBuild, "kernel", r.Versions.Kernel)
	add(KindBroker, "version", r.BrokerVersion)
	for k, v := range r.BrokerSettings {
		if !filepath.IsAbs(v) { // where a store or instance lives is no setting
			add(KindBroker, k, v)
		}
	}
	if m := r.Machine; m != nil {
		add(KindMachine, "hostname", m.Hostname)
		add(KindMachine, "cores", fmt.Sprint(m.Cores))
		add(KindMachine, "cpu_model", m.CPUModel)
	}
	if res := r.Resources; res != nil {
		add(KindMachine, "client_cpus", res.ClientCPUs)
		add(KindMachine, "broker_cpus", res.BrokerCPUs)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return kindRank(out[i].Kind) < kindRank(out[j].Kind)
		}
		return out[i].Key < out[j].Key
	})
	return out
}

func kindRank(k string) int {
	for i, x := range SettingKinds {
		if x == k {
			return i
		}
	}
	return len(SettingKinds)
}

// flatJSON is a struct's JSON fields as text (nested objects as a.b).
func flatJSON(v any) map[string]string {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	out := map[string]string{}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			switch x := v.(type) {
			case map[string]any:
				walk(prefix+k+".", x)
			case nil:
			default:
				s := fmt.Sprint(x)
				if b, err := json.Marshal(x); err == nil {
					s = strings.Trim(string(b), `"`)
				}
				out[prefix+k] = s
			}
		}
	}
	walk("", m)
	return out
}

// Count is a value and the number of records that have it.
type Count struct {
	Value   string `json:"value"`
	Records int    `json:"records"`
}

// SettingValues are the values one setting took over a set of records.
type SettingValues struct {
	Kind   string  `json:"kind"`
	Key    string  `json:"key"`
	Values []Count `json:"values"`
}

// Provenance is what made a dataset's records: every setting with the
// values it took (broker settings per broker), the machine time they
// took and when.
type Provenance struct {
	Settings []SettingValues `json:"settings"`
	// WallS is the records' own wall time summed (each case run from its
	// set-up to its teardown); PhasesS the time around them the records
	// time (idle-link waits, purges).
	WallS   float64   `json:"wall_s"`
	PhasesS float64   `json:"phases_s"`
	First   time.Time `json:"first"`
	Last    time.Time `json:"last"` // the end of the last record
}

// ProvenanceOf summarises the settings of every record of d (interrupted
// and failed ones included: they were made the same way).
func ProvenanceOf(d *Dataset) Provenance {
	return provenanceOf(d.all)
}

func provenanceOf(recs []*results.Record) Provenance {
	var p Provenance
	type key struct{ kind, key string }
	values := map[key]map[string]int{}
	var order []key
	for _, r := range recs {
		for _, s := range RecordSettings(r) {
			k := key{s.Kind, s.Key}
			if s.Kind == KindBroker {
				k.key = r.Broker + " " + s.Key
			}
			if values[k] == nil {
				values[k] = map[string]int{}
				order = append(order, k)
			}
			values[k][s.Value]++
		}
		p.WallS += r.WallS
		if ph := r.Phases; ph != nil {
			p.PhasesS += ph.IdleWaitS + ph.PurgeS + ph.PurgeAfterS
		}
		if !r.Started.IsZero() {
			if p.First.IsZero() || r.Started.Before(p.First) {
				p.First = r.Started
			}
			if end := r.Started.Add(time.Duration(r.WallS * float64(time.Second))); end.After(p.Last) {
				p.Last = end
			}
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].kind != order[j].kind {
			return kindRank(order[i].kind) < kindRank(order[j].kind)
		}
		return order[i].key < order[j].key
	})
	p.Settings = []SettingValues{}
	for _, k := range order {
		p.Settings = append(p.Settings, SettingValues{Kind: k.kind, Key: k.key, Values: sortedCounts(values[k])})
	}
	return p
}

// Text is "v1 (n1 records), v2 (n2)" or the one value.
func (s SettingValues) Text() string {
	if len(s.Values) == 1 {
		return s.Values[0].Value
	}
	var parts []string
	for i, c := range s.Values {
		if i == 0 {
			parts = append(parts, fmt.Sprintf("%s (%d records)", c.Value, c.Records))
		} else {
			parts = append(parts, fmt.Sprintf("%s (%d)", c.Value, c.Records))
		}
	}
	return strings.Join(parts, ", ")
}
