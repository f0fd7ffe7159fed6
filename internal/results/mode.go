package results

// Mode says what made a record (docs/capacity.md):
//
//   - paper: the paper's saturating publishers (pslab run), for the literal
//     comparison with Gaddah & Kunz's tables;
//   - capacity-probe: one probe of a capacity search (pslab capacity): the
//     case at a given offered load, open loop, judged sustained or not;
//   - fixed-load: the case at a fixed fraction of its measured capacity,
//     open loop, for its latency at that load.
type Mode string

// Modes.
const (
	ModePaper         Mode = "paper"
	ModeCapacityProbe Mode = "capacity-probe"
	ModeFixedLoad     Mode = "fixed-load"
)

// ModeOf is the mode that made the record: records of pslab versions
// before modes existed are the paper's.
func (r *Record) ModeOf() Mode {
	if r.Mode == "" {
		return ModePaper
	}
	return r.Mode
}

// Check is one criterion of a capacity probe's verdict.
type Check struct {
	// Name: offered, arrivals, backlog, lost, latency.
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	// Value and Limit in the criterion's unit (a share, a count, ms).
	Value  float64 `json:"value"`
	Limit  float64 `json:"limit"`
	Detail string  `json:"detail"`
}

// Probe is what a capacity-probe record (or the verdict of a fixed-load
// record) says about the offered load it ran at.
type Probe struct {
	// Search numbers the row's searches: 0 the pilot (it finds where the
	// counted searches start, and is not in the capacity's CI), 1.. the
	// counted ones. Step is the probe's place in its search (1-based) and
	// Phase ramp or bisect. Absent for fixed-load records.
	Search int    `json:"search"`
	Step   int    `json:"step,omitempty"`
	Phase  string `json:"phase,omitempty"`
	// Start is where the search started (offered msgs/s) and StartFrom
	// why there (prior, link bound, pilot, default).
	Start     float64 `json:"start,omitempty"`
	StartFrom string  `json:"start_from,omitempty"`
	// OfferedPerS is the offered load: messages per second published by
	// all publishers together (RatePerPublisher each). DuePerS is the
	// deliveries due per second for it (replication included).
	OfferedPerS      float64 `json:"offered_per_s"`
	RatePerPublisher float64 `json:"rate_per_publisher"`
	DuePerS          float64 `json:"due_per_s"`
	// Sustained is the verdict: every check held. Why says which failed
	// (or that all held); Checks gives each with its value and limit.
	Sustained bool    `json:"sustained"`
	Why       string  `json:"why"`
	Checks    []Check `json:"checks"`
	// Marginal: the probe failed only on the backlog or arrivals check,
	// by at most three times its tolerance, with the latency within its
	// bound: a transient (a pause of the broker) can do that below the
	// capacity, so the search probes the load once more and that verdict
	// counts (capacity.confirmed).
	Marginal bool `json:"marginal,omitempty"`
	// Confirm is how many probes judged each load the search's answer
	// rests on (its final bracket's ends; a failure before the ramp
	// stepped down): the majority of Confirm decided (3: 2 of 3). Absent:
	// one probe decided (pilots, emulated links by default, older pslab).
	Confirm int `json:"confirm,omitempty"`
	// LatencyBoundMs is the network's latency bound (the latency check's
	// limit), Tolerance the share of the due deliveries allowed to be
	// missing or to add to the backlog (0.01).
	LatencyBoundMs float64 `json:"latency_bound_ms"`
	Tolerance      float64 `json:"tolerance"`
	// Where the load went, for what bound the row: the clients' and the
	// broker's CPU use within their own sets (%; absent: not measured),
	// and on a shaped link the window's use of the link's rate (%) from
	// the bytes the link carried per message over the case.
	ClientSetPct  float64 `json:"client_set_pct,omitempty"`
	BrokerSetPct  float64 `json:"broker_set_pct,omitempty"`
	LinkUsePct    float64 `json:"link_use_pct,omitempty"`
	LinkBytesPerM float64 `json:"link_bytes_per_msg,omitempty"`
}

// FixedLoad is what a fixed-load record ran at: a fraction of the row's
// capacity (as found by the searches of the same run) and the sequential
// rule that decided its repetitions.
type FixedLoad struct {
	Fraction     float64 `json:"fraction"`       // e.g. 0.5
	CapacityPerS float64 `json:"capacity_per_s"` // offered msgs/s the fraction is of
	// Stage is 1 for the first-stage repetitions of Stein's two-stage
	// rule (docs/capacity.md), 2 for those the first stage asked for.
	Stage int `json:"stage"`
	// TargetMeanMs and TargetP99Ms are the CI half-widths the rule aims
	// at, fixed before the first stage: 5 % of the latency the searches'
	// probes had near this load, or the latency floor when that is more.
	TargetMeanMs float64 `json:"target_mean_ms"`
	TargetP99Ms  float64 `json:"target_p99_ms"`
}

// LatencyFloor is the machine's timer and scheduling resolution, measured
// at the start of the run (docs/capacity.md): latency differences below
// FloorMs are scheduling, not the broker.
type LatencyFloor struct {
	// SleepOvershoot: how late a goroutine woke from a 200 µs sleep, in
	// µs (percentiles over Samples sleeps).
	SleepP50Us float64 `json:"sleep_overshoot_p50_us"`
	SleepP99Us float64 `json:"sleep_overshoot_p99_us"`
	// Loopback: round trips of 32 bytes over a loopback TCP connection
	// between two goroutines of the clients' process, in µs.
	LoopbackP50Us float64 `json:"loopback_rtt_p50_us"`
	LoopbackP99Us float64 `json:"loopback_rtt_p99_us"`
	Samples       int     `json:"samples"`
	// FloorMs is the larger of the median wake-up overshoot (how late a
	// goroutine typically runs: the timer and scheduling resolution) and
	// the loopback round trip's p99: the absolute floor of the latency CI
	// targets. The sleep's p99 is kept apart: on a shared machine it is
	// other programs' bursts, not the resolution.
	FloorMs float64 `json:"floor_ms"`
}
