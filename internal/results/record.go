// Package results defines the result record (one JSON line per case x
// broker x network x repetition) and writes run bundles atomically: a
// killed run never leaves a half-written record.
package results

import (
	"time"

	"pslab/internal/audit"
	"pslab/internal/metrics"
	"pslab/internal/record"
	"pslab/internal/scenario"
	"pslab/netem/linkinfo"
)

// SchemaVersion of Record; bump on incompatible changes.
const SchemaVersion = 1

// Record is one case x broker x network x repetition.
type Record struct {
	Schema int    `json:"schema"`
	RunID  string `json:"run_id"`
	Suite  string `json:"suite"`
	File   string `json:"file"`
	CaseID string `json:"case"`
	Name   string `json:"name,omitempty"`
	Rep    int    `json:"rep"` // 1-based
	Quick  bool   `json:"quick"`
	// Mode is what made the record (mode.go): paper, capacity-probe or
	// fixed-load; absent in records of older pslab (the paper's).
	Mode Mode `json:"mode,omitempty"`

	Broker         string            `json:"broker"`
	BrokerVersion  string            `json:"broker_version"`
	BrokerSettings map[string]string `json:"broker_settings,omitempty"`
	Mechanism      string            `json:"mechanism"`
	// BrokerConfig identifies the broker's effective configuration (a
	// hash, config.go); a row mixing two is split by the report.
	BrokerConfig string `json:"broker_config,omitempty"`

	Network Network `json:"network"`

	Factors scenario.Factors `json:"factors"`
	// FullFactors: the case as the scenario file defines it, when --quick
	// changed its factors (Factors is what ran).
	FullFactors *scenario.Factors `json:"full_factors,omitempty"`
	Settings    Settings          `json:"settings"`

	// Measured (absent when Error is set before measuring).
	Result    *record.Result `json:"result,omitempty"`
	Resources *Resources     `json:"resources,omitempty"`
	// Throughput: received, dispatched, overall, replication grade and the
	// saturation verdict (absent when nothing was measured).
	Throughput *Throughput `json:"throughput,omitempty"`
	// Filter: kind, n_fltr, n_diff, expected r and the broker mechanism.
	Filter *FilterInfo `json:"filter,omitempty"`
	// Probe: the offered load and the verdict (capacity-probe and
	// fixed-load records); FixedLoad: the fraction of the capacity it ran
	// at; LatencyFloor: the machine's timer resolution measured at the
	// start of the run (mode.go).
	Probe        *Probe        `json:"probe,omitempty"`
	FixedLoad    *FixedLoad    `json:"fixed_load,omitempty"`
	LatencyFloor *LatencyFloor `json:"latency_floor,omitempty"`
	Flags        []Flag        `json:"flags,omitempty"` // reasons not to trust the numbers as they stand
	// Audit checks the delivery guarantees of the case's combination
	// against its counts, under its faults.
	Audit []audit.Check      `json:"audit,omitempty"`
	Paper map[string]float64 `json:"paper,omitempty"`
	Note  string             `json:"note,omitempty"`
	// Varied: the values a sweep gave the case, "key=value" in the sweep's
	// order (scenario.Case.Varied); absent for a case not from a sweep.
	Varied []string `json:"varied,omitempty"`

	Versions Versions `json:"versions"`
	// Machine is the host the record was measured on (a run resumed
	// elsewhere has records of several machines).
	Machine *Machine `json:"machine,omitempty"`
	// Order is the run's place in its network's schedule (rounds).
	Order   *Order    `json:"order,omitempty"`
	Started time.Time `json:"started"`
	WallS   float64   `json:"wall_s"`
	// Phases is where the run's wall time went outside the load itself.
	Phases   *Phases `json:"phases,omitempty"`
	Seed     int64   `json:"seed"`
	Error    string  `json:"error,omitempty"`
	HistFile string  `json:"histogram_file,omitempty"` // relative to the bundle
}

// Settings are the run settings of the case.
type Settings struct {
	WarmupS       float64 `json:"warmup_s"`
	WindowS       float64 `json:"window_s"`
	DrainS        float64 `json:"drain_s"`
	Rate          float64 `json:"rate"`
	PublishWindow int     `json:"publish_window"`
	// DeliveryWindow: scenario.Case.DeliveryWindow (0, absent: the
	// driver's default or no pull at all).
	DeliveryWindow int `json:"delivery_window,omitempty"`
	// AckWaitS: scenario.Case.AckWait (absent: the driver's default).
	AckWaitS      float64 `json:"ack_wait_s,omitempty"`
	InFlight      int     `json:"in_flight,omitempty"`
	AckEvery      int     `json:"ack_every"`
	AckIntervalMs int64   `json:"ack_interval_ms"`
	// Capacity: the case is a capacity measurement (see Throughput.Saturation).
	Capacity bool `json:"capacity,omitempty"`
	// ConnectUnshaped: connections were set up with the link's shaping and
	// loss lifted (scenario.Case.ConnectUnshaped).
	ConnectUnshaped bool `json:"connect_unshaped,omitempty"`
	// ConcurrentLabs: the case ran in one of this many labs sharing the
	// network's schedule at once (pslab run --parallel); absent: alone.
	ConcurrentLabs int `json:"concurrent_labs,omitempty"`
	// Stopping: the row was repeated until a CI target was reached (paper
	// mode's `ci:`), and how its intervals are computed; absent: a fixed
	// number of repetitions, or a record of older pslab (whose `ci:` rows
	// were stopped on plain 95 % intervals, under 95 % coverage).
	Stopping *Stopping `json:"stopping,omitempty"`
}

// Stopping is a sequential repetition rule: after each repetition from
// MinReps to MaxReps the row's CIs of subscriber throughput and mean
// latency are checked against Target (a fraction of the mean), and the
// row stops at the first within it. Method says how its intervals are
// computed so that the one reported at the stop covers with at least
// 95 %: metrics.CIMethodLooks, each look's interval at Level = 1 −
// 0.05/Looks (Bonferroni over the Looks sample sizes the rule may stop
// at, metrics.Looks).
type Stopping struct {
	Target  float64 `json:"ci_target"`
	MinReps int     `json:"min_reps"`
	MaxReps int     `json:"max_reps"`
	Looks   int     `json:"looks"`
	Method  string  `json:"ci_method"`
	Level   float64 `json:"ci_level"`
}

// NewStopping is the rule with a CI target (a fraction) checked from
// minReps to maxReps repetitions, its intervals corrected over the looks.
func NewStopping(target float64, minReps, maxReps int) *Stopping {
	k := metrics.Looks(minReps, maxReps)
	return &Stopping{Target: target, MinReps: minReps, MaxReps: maxReps, Looks: k,
		Method: metrics.CIMethodLooks, Level: metrics.LooksLevel(k)}
}

// CIOf is the mean of xs and its interval's half-width under the rule
// (a nil rule: the plain 95 % interval).
func (s *Stopping) CIOf(xs []float64) (mean, half float64) {
	if s == nil {
		return metrics.MeanCI95(xs)
	}
	level := s.Level
	if !(level >= 0.95 && level < 1) { // not written by NewStopping: from the looks
		level = metrics.LooksLevel(s.Looks)
	}
	return metrics.MeanCI(xs, level)
}

// SettingsOf extracts the run settings of c.
func SettingsOf(c scenario.Case) Settings {
	return Settings{
		WarmupS: c.Warmup.Seconds(), WindowS: c.Window.Seconds(), DrainS: c.Drain.Seconds(),
		Rate: c.Rate, PublishWindow: c.PublishWindow, DeliveryWindow: c.DeliveryWindow, AckWaitS: c.AckWait.Seconds(), InFlight: c.InFlight, AckEvery: c.AckEvery,
		AckIntervalMs: c.AckInterval.Milliseconds(), Capacity: c.Capacity,
		ConnectUnshaped: c.ConnectUnshaped,
	}
}

// Network is the link a case ran over.
type Network struct {
	Profile string                 `json:"profile"`          // e.g. "wireline", "wifi-paper"
	Path    string                 `json:"path"`             // "namespaces" (through the emulating router) or "loopback" (no root) or "host-network" (--url)
	Backend string                 `json:"backend"`          // "none", "netem", "tbf+nftables", or "" on loopback
	Spec    *linkinfo.Profile      `json:"spec,omitempty"`   // the profile as configured
	Link    *LinkOver              `json:"link,omitempty"`   // measured over the case: counters, rate, loss
	Verify  *linkinfo.Verification `json:"verify,omitempty"` // verification of the profile before the run
	Remote  *RemotePath            `json:"remote,omitempty"` // a broker on another host: the path beyond the emulated hop
	// Lab names the lab of a run with parallel labs (Settings.ConcurrentLabs).
	Lab string `json:"lab,omitempty"`
	// Links: a network with a link per role (Profile "pub=A+sub=B"): each
	// role's link, publishers' first. Spec, Link and Verify are then nil
	// (each link has its own) and Backend is "pub=B1;sub=B2" ("none" when
	// neither link is shaped); a network with one link for every client
	// has no Links.
	Links []RoleLink `json:"links,omitempty"`
	// TCPCongestion is the TCP congestion control of the namespaces the
	// connections were made in ("bbr", "cubic"; "clients=X;broker=Y" when
	// they differ): BBR and CUBIC answer an emulated link's loss and delay
	// differently. Empty in records made before it was recorded.
	TCPCongestion string `json:"tcp_congestion,omitempty"`
}

// RoleLink is one role's link of a network with a link per role.
type RoleLink struct {
	Role    string                 `json:"role"`    // RolePublishers or RoleSubscribers
	Profile string                 `json:"profile"` // the link's profile name
	Backend string                 `json:"backend"` // as Network.Backend
	Spec    *linkinfo.Profile      `json:"spec,omitempty"`
	Link    *LinkOver              `json:"link,omitempty"`
	Verify  *linkinfo.Verification `json:"verify,omitempty"`
}

// Roles of a network with a link per role.
const (
	RolePublishers  = "publishers"
	RoleSubscribers = "subscribers"
)

// RoleLink returns the link of role in a network with a link per role.
func (n Network) RoleLink(role string) (RoleLink, bool) {
	for _, l := range n.Links {
		if l.Role == role {
			return l, true
		}
	}
	return RoleLink{}, false
}

// LinkOver is what the emulated link did over a case: the counters'
// deltas, or why they could not be read.
type LinkOver struct {
	*linkinfo.Counters
	Error string `json:"error,omitempty"`
}

// Resources are CPU and memory samples of the client (this process) and
// the broker over the case.
type Resources struct {
	ClientCPUPct  float64 `json:"client_cpu_pct"` // mean, 100 = one core
	ClientPeakRSS int64   `json:"client_peak_rss"`
	BrokerCPUPct  float64 `json:"broker_cpu_pct"`
	BrokerPeakRSS int64   `json:"broker_peak_rss"`
	Cores         int     `json:"cores"`
	// ClientCPUs and BrokerCPUs are the CPU sets each side was confined to
	// (kernel list format, e.g. "0" and "1"); empty: not confined (--cpus
	// off, or an external broker whose process pslab does not know).
	ClientCPUs string `json:"client_cpus,omitempty"`
	BrokerCPUs string `json:"broker_cpus,omitempty"`
	// ClientSetPct and BrokerSetPct are each side's mean CPU use as a share
	// of its own set (100 = every CPU of the set busy); set with the sets.
	ClientSetPct  float64              `json:"client_set_pct,omitempty"`
	BrokerSetPct  float64              `json:"broker_set_pct,omitempty"`
	ClientSamples []metrics.ProcSample `json:"client_samples,omitempty"`
	BrokerSamples []metrics.ProcSample `json:"broker_samples,omitempty"`

	// MachineCPUPct is the busy CPU of the whole machine over the window
	// (/proc/stat) and OtherCPUPct the part outside the run (machine minus
	// client and broker): another lab, any other process (100 = one core).
	MachineCPUPct float64 `json:"machine_cpu_pct"`
	OtherCPUPct   float64 `json:"other_cpu_pct"`

	late record.LateKeys // resourcesLate keys the record it was read from lacked
}

// resourcesLate are Resources' keys younger than the first committed
// records (records before machine load was measured lack both).
var resourcesLate = []string{"machine_cpu_pct", "other_cpu_pct"}

// UnmarshalJSON reads r and notes which late keys the JSON lacked.
func (r *Resources) UnmarshalJSON(data []byte) error {
	type plain Resources
	return record.UnmarshalLate(data, (*plain)(r), &r.late, resourcesLate...)
}

// MarshalJSON writes r, leaving out the late keys its JSON lacked.
func (r Resources) MarshalJSON() ([]byte, error) {
	type plain Resources
	return record.MarshalLate(plain(r), r.late, resourcesLate...)
}

// Versions of everything that produced the record.
type Versions struct {
	// Pslab is the build identity, short form (internal/buildid): the VCS
	// revision, else "sha256:" and the executable's hash, "+dirty" when
	// the tree is known to have differed; "devel" in records of older
	// pslab built without VCS stamping. PslabBuild is its long form.
	Pslab      string `json:"pslab"`
	PslabBuild string `json:"pslab_build,omitempty"`
	Go         string `json:"go"`
	Kernel     string `json:"kernel"`
	Broker     string `json:"broker"`
}

// Phases times the steps of one run around the load (connect, window,
// drain and close are in Result): waiting for the emulated link to go
// quiet, the purge before the case, and the purge after it (which is not
// in WallS).
type Phases struct {
	IdleWaitS   float64 `json:"idle_wait_s"`
	PurgeS      float64 `json:"purge_s"`
	PurgeAfterS float64 `json:"purge_after_s"`
	// LeftoverSockets counts the case's client-broker TCP sockets still
	// open after it dropped its connections on the emulated link (their
	// RST was lost), destroyed before the next case (netem.ResetConnections).
	LeftoverSockets int `json:"leftover_sockets,omitempty"`
	// ReshapeS is how long putting the link's shaping back after an
	// unshaped connection set-up took (Settings.ConnectUnshaped).
	ReshapeS float64 `json:"reshape_s,omitempty"`
	// QuietWaitS is how long the run waited for processes outside it to
	// leave the machine before it started (lab Options.QuietWait).
	QuietWaitS float64 `json:"quiet_wait_s,omitempty"`
}

// Interrupted reports whether the record's case was cut short by the
// user's interruption: its numbers cover only what was measured and are
// neither a result of the case nor a failed repetition.
func (r *Record) Interrupted() bool {
	return r.Result != nil && r.Result.Interrupted != nil
}

// RemotePath is what a record says about the path to brokers on other
// hosts: the emulated hop is verified as usual (between the clients and
// this host's end of the link); beyond it only reachability and the
// round trip of TCP connects can be measured, from this host directly and
// from the clients through the lab.
type RemotePath struct {
	Brokers []RemoteBroker `json:"brokers"`
	Note    string         `json:"note"`
}

// RemoteBroker is one remote broker address and its connect round trips.
type RemoteBroker struct {
	Addr         string  `json:"addr"` // ip:port of the broker
	DirectRTTms  float64 `json:"direct_connect_ms"`
	ThroughLabms float64 `json:"through_lab_connect_ms"`
	Connects     int     `json:"connects"`
}
