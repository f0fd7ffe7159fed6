package netem

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// embedDir marks the traces of built-in profiles (profiles/traces in the
// binary).
const embedDir = "embed:profiles"

// MeanLossPct is the long-run loss of the profile's loss model, in
// percent per packet (per frame attempt under the 802.11 model); outages
// not included.
func MeanLossPct(p Profile) float64 {
	switch {
	case p.HasGE():
		return 100 * p.GE().MeanLoss()
	case p.LossPct > 0 && p.LossCorrelationPct > 0:
		// netem's correlated loss does not lose loss_pct: its draws are
		// averages, rarely below the threshold (3 % at 25 % correlation
		// loses about 0.05 %). The mean of a million of its draws, seeded.
		m := newLossModel(p, 1, 99)
		n := 0
		for range 1_000_000 {
			if m.lose() {
				n++
			}
		}
		return float64(n) / 1e4
	}
	return p.LossPct
}

// kernelCanRun reports whether a kernel backend may run the profile: the
// netem qdisc reorders packets under jitter, so jitter in order (the
// default) is the relay's.
func kernelCanRun(p Profile) bool {
	return len(p.RelayOnly()) == 0 && (p.JitterMs == 0 || p.Reorder)
}

func profileSeed(p Profile) uint64 { return uint64(p.Seed) }

func wifiAckKbitOf(p Profile) float64 {
	if p.WifiAckKbit > 0 {
		return p.WifiAckKbit
	}
	return p.WifiPhyKbit
}

func wifiCWMaxOf(p Profile) float64 {
	if p.WifiCWMax > 0 {
		return p.WifiCWMax
	}
	return 1023
}

func wifiMACBytesOf(p Profile) int {
	if p.WifiMACBytes > 0 {
		return int(p.WifiMACBytes)
	}
	return wifiMACBytes
}

// fullIP is the IP packet of a full-size frame.
const fullIP = maxFrame - ethHeader

// NominalRateKbit is the rate the link carries when busy with full-size
// packets, per direction, in kbit/s of Ethernet frames: RateKbit, a
// trace's mean, or under 802.11 the rate a full frame's expected airtime
// (retries included) gives one direction alone. 0: unshaped.
func NominalRateKbit(p Profile, d Direction) float64 {
	switch {
	case p.WifiPhyKbit > 0:
		w := newWifiModel(p, profileSeed(p), 5)
		air := expectedWifiAirtime(p, w, fullIP)
		return maxFrame * 8 / air * 1e6
	case p.TraceUp != "":
		t, err := loadTrace(p, d)
		if err != nil {
			return 0
		}
		return t.MeanKbit() * maxFrame / fullIP
	case d == ToClient && p.RateDownKbit > 0:
		return p.RateDownKbit
	}
	return p.RateKbit
}

// expectedWifiAirtime is the mean airtime (ns) of an IP packet of ipLen
// bytes under the profile's loss model, retries included.
func expectedWifiAirtime(p Profile, w *wifiModel, ipLen int) float64 {
	a, _, _ := wifiExpectation(p, w, ipLen)
	return a
}

// wifiExpectation gives the mean airtime, attempts and residual loss of an
// IP packet of ipLen bytes: exact for independent frame errors, and the
// mean over 200000 frames run through the model for the others.
func wifiExpectation(p Profile, w *wifiModel, ipLen int) (airtime, attempts, residual float64) {
	if p.HasGE() || p.LossCorrelationPct > 0 {
		return w.simulatedAirtime(ipLen, newLossModel(p, profileSeed(p), 99), 200_000)
	}
	return w.expectedAirtime(ipLen, p.LossPct/100)
}

// queueLimits is the relay's queue limit in direction d, in packets or
// bytes (one of them 0): QueuePackets, QueueBytes, or QueueMs at the
// direction's nominal rate (at least 4 full frames). Unshaped: no limit.
func queueLimits(p Profile, d Direction) (pkts, bytes int) {
	switch {
	case p.QueuePackets > 0:
		return int(p.QueuePackets), 0
	case p.QueueBytes > 0:
		return 0, int(p.QueueBytes)
	case p.WifiPhyKbit > 0:
		// Under 802.11 a frame's time is mostly overhead, whatever its
		// size: QueueMs of full frames' airtime, in frames (as an access
		// point queues frames), so small frames cannot hold seconds.
		air := expectedWifiAirtime(p, newWifiModel(p, profileSeed(p), 5), fullIP)
		return max(4, int(math.Round(p.EffectiveQueueMs()*1e6/air))), 0
	}
	rate := NominalRateKbit(p, d)
	if rate <= 0 {
		return 0, 0
	}
	return 0, max(int(math.Round(rate*1000/8*p.EffectiveQueueMs()/1000)), 4*maxFrame)
}

// loadTrace reads the profile's trace of a direction.
func loadTrace(p Profile, d Direction) (*Trace, error) {
	name := p.TraceUp
	if d == ToClient {
		name = p.TraceDown
	}
	return readTrace(p.TraceDir, name)
}

func readTrace(dir, name string) (*Trace, error) {
	var file string
	var data []byte
	var err error
	switch {
	case dir == embedDir:
		file = path.Join("profiles", name)
		data, err = builtinFS.ReadFile(file)
	case filepath.IsAbs(name) || dir == "":
		file = name
		data, err = os.ReadFile(file)
	default:
		file = filepath.Join(dir, name)
		data, err = os.ReadFile(file)
	}
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: trace %s: no such file", ErrBadProfile, file)
		}
		return nil, fmt.Errorf("%w: trace %s: %v", ErrBadProfile, file, err)
	}
	return ParseTrace(file, data)
}

// checkTraces reads the profile's traces, reporting a missing or
// malformed one (its own file:line) at the profile's line.
func checkTraces(p Profile, file string, line map[string]int) []error {
	var errs []error
	for _, x := range []struct {
		key string
		d   Direction
	}{{"trace_up", ToBroker}, {"trace_down", ToClient}} {
		if (x.d == ToBroker && p.TraceUp == "") || (x.d == ToClient && p.TraceDown == "") {
			continue
		}
		if _, err := loadTrace(p, x.d); err != nil {
			errs = append(errs, fmt.Errorf("%w: %s:%d: %s: %v", ErrBadProfile, file, line[x.key], x.key,
				strings.TrimPrefix(err.Error(), ErrBadProfile.Error()+": ")))
		}
	}
	return errs
}

// Describe is the profile's one-line summary (Profile.String) with the
// rate its models give when that is not a key of the profile: a trace's
// mean and the 802.11 medium's rate of full frames.
func Describe(p Profile) string {
	s := p.String()
	if p.WifiPhyKbit > 0 || p.TraceUp != "" {
		s += fmt.Sprintf("; carries %.0f kbit/s to-broker, %.0f to-client of full frames",
			NominalRateKbit(p, ToBroker), NominalRateKbit(p, ToClient))
	}
	return s
}
