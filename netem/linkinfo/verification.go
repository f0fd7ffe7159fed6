package linkinfo

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// DirResult is what Verify measured in one direction.
type DirResult struct {
	Direction Direction `json:"direction"`

	// Bulk TCP transfer between the namespaces, one direction at a time.
	// GoodputKbit: distinct TCP payload the link delivered to the receiver,
	// from the router's transmit counters less headers and duplicates.
	GoodputKbit float64 `json:"goodput_kbit"`
	// ExpectedGoodputKbit is the rate minus protocol overhead (see
	// FrameBytes, AckBytesPerSegment); 0 for an unshaped link.
	ExpectedGoodputKbit float64 `json:"expected_goodput_kbit"`
	TCPBytes            int64   `json:"tcp_bytes"`
	// ReceiverInOrderKbit is the receiver's in-order count over the same
	// window: a cross-check, off by data held behind a hole at either end.
	ReceiverInOrderKbit float64 `json:"receiver_inorder_kbit"`
	TCPSeconds          float64 `json:"tcp_seconds"`
	MSS                 int     `json:"mss"`
	FrameBytes          int     `json:"frame_bytes"`           // wire bytes per full segment
	AckBytesPerSegment  float64 `json:"ack_bytes_per_segment"` // half duplex: ACKs in the same budget
	Retransmits         uint32  `json:"retransmits"`

	// UDP probes with sequence numbers, both directions at once.
	ProbeSent       int     `json:"probe_sent"`
	ProbeReceived   int     `json:"probe_received"`
	ProbeDuplicates int     `json:"probe_duplicates"`
	LossPct         float64 `json:"loss_pct"`
	LossCI95Pts     float64 `json:"loss_ci95_pts"` // half-width of the 95 % interval
	ExpectedLossPct float64 `json:"expected_loss_pct"`
	DelayP50Ms      float64 `json:"delay_p50_ms"` // one-way, of probes
	DelayP90Ms      float64 `json:"delay_p90_ms"`

	// CounterDropPct: the router's own drop share for this direction over
	// the whole verification (see DirCounters.DropPct); -1 if not counted.
	CounterDropPct float64 `json:"counter_drop_pct"`

	// Runs of consecutive lost probes: how many, their mean length, and
	// the loss model's mean burst (0: no loss model).
	LossRuns      int     `json:"loss_runs,omitempty"`
	MeanBurst     float64 `json:"mean_burst,omitempty"`
	ExpectedBurst float64 `json:"expected_burst,omitempty"`
}

// Verification is the result of Verify: measured against expected.
type Verification struct {
	Profile  Profile       `json:"profile"`
	Backend  Backend       `json:"backend"`
	Duration time.Duration `json:"duration_ns"` // of each measurement phase
	ToBroker DirResult     `json:"to_broker"`
	ToClient DirResult     `json:"to_client"`
	Counters Counters      `json:"counters"` // router counters over the verification
	// RTT: pings across the idle link against the model's round trip.
	RTT *RTTResult `json:"rtt,omitempty"`
}

// RTTResult is the ping phase of a verification: ICMP echo requests from
// the clients' namespace to the broker side's address, answered by its
// kernel.
type RTTResult struct {
	Sent          int     `json:"sent"`
	Received      int     `json:"received"`
	MeanMs        float64 `json:"mean_ms"`
	StdMs         float64 `json:"std_ms"`
	P50Ms         float64 `json:"p50_ms"`
	P90Ms         float64 `json:"p90_ms"`
	ExpectedMs    float64 `json:"expected_ms"`     // the model's mean
	ExpectedStdMs float64 `json:"expected_std_ms"` // from the jitter alone
}

// check applies the target: the mean within tol (a fraction) of
// the model's, or within 1 ms.
func (r RTTResult) check(tol float64) error {
	if r.Received == 0 {
		return fmt.Errorf("ping: no reply of %d", r.Sent)
	}
	if diff := math.Abs(r.MeanMs - r.ExpectedMs); diff > math.Max(tol*r.ExpectedMs, 1) {
		return fmt.Errorf("ping: mean RTT %.2f ms is %.2f ms off the model's %.2f ms (allowed %.0f %% or 1 ms)", r.MeanMs, diff, r.ExpectedMs, 100*tol)
	}
	return nil
}

// burstTol is how far the mean length of the probes' loss runs may be
// from the model's (the target: 20 %), checked when the probes
// saw at least minRuns runs.
const (
	burstTol = 0.2
	minRuns  = 30
)

// The tolerances of a verification that pslab netem verify uses by
// default, and that a run's records are flagged against (link-off).
const (
	DefaultRateTol    = 0.10 // goodput (and mean ping RTT) within 10 % of the model's
	DefaultLossTolPts = 1.0  // probe loss within 1 percentage point of the profile's
)

// Check returns an error naming every direction whose goodput is not within
// rateTol (a fraction, e.g. 0.1) of the expected or whose probe loss is more
// than lossTolPts percentage points from the profile's loss.
func (v Verification) Check(rateTol, lossTolPts float64) error {
	var errs []error
	for _, r := range []DirResult{v.ToBroker, v.ToClient} {
		if r.ExpectedGoodputKbit > 0 {
			ratio := r.GoodputKbit / r.ExpectedGoodputKbit
			if math.Abs(ratio-1) > rateTol {
				errs = append(errs, fmt.Errorf("%s: goodput %.1f kbit/s is %.1f %% off the expected %.1f (allowed %.0f %%)",
					r.Direction, r.GoodputKbit, 100*(ratio-1), r.ExpectedGoodputKbit, 100*rateTol))
			}
		}
		if math.Abs(r.LossPct-r.ExpectedLossPct) > lossTolPts {
			errs = append(errs, fmt.Errorf("%s: loss %.2f %% is more than %.1f points from the expected %.2f %%",
				r.Direction, r.LossPct, lossTolPts, r.ExpectedLossPct))
		}
		if r.ExpectedBurst > 0 && r.LossRuns >= minRuns && math.Abs(r.MeanBurst/r.ExpectedBurst-1) > burstTol {
			errs = append(errs, fmt.Errorf("%s: loss runs of %.2f packets on average (%d runs), the model's %.2f (allowed %.0f %%)",
				r.Direction, r.MeanBurst, r.LossRuns, r.ExpectedBurst, 100*burstTol))
		}
	}
	if v.RTT != nil {
		if err := v.RTT.check(rateTol); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// String prints measured against expected, one line per direction.
func (v Verification) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "profile %s, backend %s, %s per phase\n", v.Profile, v.Backend, v.Duration)
	fmt.Fprintf(&b, "%-9s  %-30s  %-26s  %-14s  %s\n", "direction", "TCP goodput kbit/s", "probe loss % (expected)", "router drops", "one-way delay p50/p90")
	for _, r := range []DirResult{v.ToBroker, v.ToClient} {
		good := fmt.Sprintf("%.1f", r.GoodputKbit)
		if r.ExpectedGoodputKbit > 0 {
			good += fmt.Sprintf(" (exp %.1f, %+.1f %%)", r.ExpectedGoodputKbit, 100*(r.GoodputKbit/r.ExpectedGoodputKbit-1))
		} else {
			good += " (unshaped)"
		}
		loss := fmt.Sprintf("%.2f ±%.2f (%.2f)", r.LossPct, r.LossCI95Pts, r.ExpectedLossPct)
		drops := "n/a"
		if r.CounterDropPct >= 0 {
			drops = fmt.Sprintf("%.2f %%", r.CounterDropPct)
		}
		fmt.Fprintf(&b, "%-9s  %-30s  %-26s  %-14s  %.2f/%.2f ms\n", r.Direction, good, loss, drops, r.DelayP50Ms, r.DelayP90Ms)
	}
	for _, r := range []DirResult{v.ToBroker, v.ToClient} {
		fmt.Fprintf(&b, "%s: %d probes sent, %d received, %d duplicates; TCP %d bytes in %.2f s (receiver in order: %.1f kbit/s), %d retransmits\n",
			r.Direction, r.ProbeSent, r.ProbeReceived, r.ProbeDuplicates, r.TCPBytes, r.TCPSeconds, r.ReceiverInOrderKbit, r.Retransmits)
		if r.LossRuns > 0 || r.ExpectedBurst > 0 {
			fmt.Fprintf(&b, "%s: %d loss runs, mean %.2f packets", r.Direction, r.LossRuns, r.MeanBurst)
			if r.ExpectedBurst > 0 {
				fmt.Fprintf(&b, " (model %.2f, %+.1f %%)", r.ExpectedBurst, 100*(r.MeanBurst/r.ExpectedBurst-1))
			}
			b.WriteString("\n")
		}
	}
	if t := v.RTT; t != nil {
		fmt.Fprintf(&b, "ping RTT: mean %.2f ms (model %.2f, %+.1f %%), std %.2f ms (jitter alone %.2f), p50/p90 %.2f/%.2f ms, %d of %d answered\n",
			t.MeanMs, t.ExpectedMs, 100*(t.MeanMs/math.Max(t.ExpectedMs, 1e-9)-1), t.StdMs, t.ExpectedStdMs, t.P50Ms, t.P90Ms, t.Received, t.Sent)
	}
	r := v.ToBroker
	fmt.Fprintf(&b, "overhead assumed: MSS %d B in a %d B frame (Ethernet 14 + IP 20 + TCP 20 + options %d)",
		r.MSS, r.FrameBytes, r.FrameBytes-r.MSS-EthHeader-IPv4Header-TCPHeader)
	if r.AckBytesPerSegment > 0 {
		fmt.Fprintf(&b, ", plus %.0f B of ACKs per segment sharing the half-duplex budget", r.AckBytesPerSegment)
	}
	b.WriteString("\n")
	return b.String()
}

// Backend says how a profile is put on the link.
type Backend string

// Backends.
const (
	BackendNone   Backend = "none"         // unshaped: plain forwarding
	BackendNetem  Backend = "netem"        // netem qdisc (sch_netem)
	BackendTBFNft Backend = "tbf+nftables" // TBF rate + nftables random drop
)

// Header sizes of a TCP/IPv4 segment on the lab's veths (they carry no
// preamble or FCS), for the verification's overhead.
const (
	EthHeader  = 14
	IPv4Header = 20
	TCPHeader  = 20
)
