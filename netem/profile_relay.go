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

// BackendRelay is the user-space link (relay.go): a process in the router
// namespace that carries every IPv4 frame between the router's two veths
// through the link engine (engine.go).
const BackendRelay Backend = "relay"

// hasGE reports whether the profile uses the Gilbert-Elliott model.
func (p Profile) hasGE() bool {
	return p.GEPPct > 0 || p.GERPct > 0 || p.GELossGoodPct > 0 || p.GELossBadPct > 0
}

// GE is the profile's Gilbert-Elliott chain as probabilities.
func (p Profile) GE() GEParams {
	return GEParams{P: p.GEPPct / 100, R: p.GERPct / 100, LossGood: p.GELossGoodPct / 100, LossBad: p.GELossBadPct / 100}
}

// MeanLossPct is the long-run loss of the profile's loss model, in
// percent per packet (per frame attempt under the 802.11 model); outages
// not included.
func (p Profile) MeanLossPct() float64 {
	switch {
	case p.hasGE():
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

// MeanBurst is the mean length of a run of lost packets the loss model
// gives (1/(1-p) for independent loss; 0 without loss).
func (p Profile) MeanBurst() float64 {
	switch {
	case p.hasGE():
		return p.GE().MeanBurst()
	case p.LossPct > 0 && p.LossCorrelationPct == 0:
		return 1 / (1 - p.LossPct/100)
	}
	return 0
}

// RelayOnly lists what only the relay backend can do (empty if a kernel
// backend may run the profile).
func (p Profile) RelayOnly() []string {
	var need []string
	if p.hasGE() {
		need = append(need, fmt.Sprintf("Gilbert-Elliott loss (ge_p_pct=%g, ge_r_pct=%g)", p.GEPPct, p.GERPct))
	}
	if p.TraceUp != "" || p.TraceDown != "" {
		need = append(need, "trace_up/trace_down (Mahimahi traces)")
	}
	if p.OutageOffMs > 0 {
		need = append(need, fmt.Sprintf("outages (outage_off_ms=%g)", p.OutageOffMs))
	}
	if p.WifiPhyKbit > 0 {
		need = append(need, "the 802.11 model (wifi_*)")
	}
	if p.RateDownKbit > 0 {
		need = append(need, fmt.Sprintf("rate_down_kbit=%g (a rate per direction)", p.RateDownKbit))
	}
	if p.QueuePackets > 0 || p.QueueBytes > 0 {
		need = append(need, "queue_packets/queue_bytes")
	}
	if p.JitterDist == JitterNormal {
		need = append(need, "jitter_dist=normal")
	}
	return need
}

// kernelCanRun reports whether a kernel backend may run the profile: the
// netem qdisc reorders packets under jitter, so jitter in order (the
// default) is the relay's.
func (p Profile) kernelCanRun() bool {
	return len(p.RelayOnly()) == 0 && (p.JitterMs == 0 || p.Reorder)
}

func (p Profile) seed() uint64 { return uint64(p.Seed) }

func (p Profile) wifiAckKbit() float64 {
	if p.WifiAckKbit > 0 {
		return p.WifiAckKbit
	}
	return p.WifiPhyKbit
}

func (p Profile) wifiCWMax() float64 {
	if p.WifiCWMax > 0 {
		return p.WifiCWMax
	}
	return 1023
}

func (p Profile) wifiMACBytes() int {
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
func (p Profile) NominalRateKbit(d Direction) float64 {
	switch {
	case p.WifiPhyKbit > 0:
		w := newWifiModel(p, p.seed(), 5)
		air := p.expectedWifiAirtime(w, fullIP)
		return maxFrame * 8 / air * 1e6
	case p.TraceUp != "":
		t, err := p.loadTrace(d)
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
func (p Profile) expectedWifiAirtime(w *wifiModel, ipLen int) float64 {
	a, _, _ := p.wifiExpectation(w, ipLen)
	return a
}

// wifiExpectation gives the mean airtime, attempts and residual loss of an
// IP packet of ipLen bytes: exact for independent frame errors, and the
// mean over 200000 frames run through the model for the others.
func (p Profile) wifiExpectation(w *wifiModel, ipLen int) (airtime, attempts, residual float64) {
	if p.hasGE() || p.LossCorrelationPct > 0 {
		return w.simulatedAirtime(ipLen, newLossModel(p, p.seed(), 99), 200_000)
	}
	return w.expectedAirtime(ipLen, p.LossPct/100)
}

// queueLimits is the relay's queue limit in direction d, in packets or
// bytes (one of them 0): QueuePackets, QueueBytes, or QueueMs at the
// direction's nominal rate (at least 4 full frames). Unshaped: no limit.
func (p Profile) queueLimits(d Direction) (pkts, bytes int) {
	switch {
	case p.QueuePackets > 0:
		return int(p.QueuePackets), 0
	case p.QueueBytes > 0:
		return 0, int(p.QueueBytes)
	case p.WifiPhyKbit > 0:
		// Under 802.11 a frame's time is mostly overhead, whatever its
		// size: QueueMs of full frames' airtime, in frames (as an access
		// point queues frames), so small frames cannot hold seconds.
		air := p.expectedWifiAirtime(newWifiModel(p, p.seed(), 5), fullIP)
		return max(4, int(math.Round(p.EffectiveQueueMs()*1e6/air))), 0
	}
	rate := p.NominalRateKbit(d)
	if rate <= 0 {
		return 0, 0
	}
	return 0, max(int(math.Round(rate*1000/8*p.EffectiveQueueMs()/1000)), 4*maxFrame)
}

// loadTrace reads the profile's trace of a direction.
func (p Profile) loadTrace(d Direction) (*Trace, error) {
	name := p.TraceUp
	if d == ToClient {
		name = p.TraceDown
	}
	return readTrace(p.traceDir, name)
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

func boolSetter(set func(p *Profile, v bool)) func(p *Profile, v any) {
	return func(p *Profile, v any) { set(p, v.(bool)) }
}

func num(set func(p *Profile, v float64)) func(p *Profile, v any) {
	return func(p *Profile, v any) { set(p, v.(float64)) }
}

// intIn checks an optional whole number (0: not set).
func intIn(v, lo, hi float64, unit string) error {
	if v == 0 {
		return nil
	}
	if v != math.Trunc(v) {
		return fmt.Errorf("%g is not a whole number", v)
	}
	return inRange(v, lo, hi, unit)
}

// wifiKeys are the 802.11 model's required keys when wifi_phy_kbit is set.
var wifiRequired = []struct {
	key string
	get func(Profile) float64
}{
	{"wifi_slot_us", func(p Profile) float64 { return p.WifiSlotUs }},
	{"wifi_sifs_us", func(p Profile) float64 { return p.WifiSifsUs }},
	{"wifi_preamble_us", func(p Profile) float64 { return p.WifiPreambleUs }},
	{"wifi_cw_min", func(p Profile) float64 { return p.WifiCWMin }},
	{"wifi_retry_limit", func(p Profile) float64 { return p.WifiRetryLimit }},
}

// relayFields are the profile keys of the relay backend.
var relayFields = []field{
	{key: "rate_down_kbit", set: num(func(p *Profile, v float64) { p.RateDownKbit = v }), check: func(p Profile) error {
		if p.RateDownKbit == 0 {
			return nil
		}
		if err := inRange(p.RateDownKbit, minRateKbit, maxRateKbit, "kbit/s"); err != nil {
			return err
		}
		if p.RateKbit == 0 || p.Duplex != DuplexFull {
			return errors.New("a to-client rate of its own needs rate_kbit (to-broker) and duplex full")
		}
		return nil
	}},
	{key: "backend", str: true, set: func(p *Profile, v any) { p.Backend = v.(string) }, check: func(p Profile) error {
		switch Backend(p.Backend) {
		case "", "auto", BackendRelay, BackendNetem, BackendTBFNft:
			return nil
		}
		return fmt.Errorf("%q must be auto, relay, netem or tbf+nftables", p.Backend)
	}},
	{key: "jitter_dist", str: true, set: func(p *Profile, v any) { p.JitterDist = v.(string) }, check: func(p Profile) error {
		if p.JitterDist != "" && p.JitterDist != JitterUniform && p.JitterDist != JitterNormal {
			return fmt.Errorf("%q must be %q or %q", p.JitterDist, JitterUniform, JitterNormal)
		}
		if p.JitterDist != "" && p.JitterMs == 0 {
			return errors.New("needs jitter_ms > 0")
		}
		return nil
	}},
	{key: "reorder", boolean: true, set: boolSetter(func(p *Profile, v bool) { p.Reorder = v }), check: func(p Profile) error {
		if p.Reorder && p.JitterMs == 0 {
			return errors.New("needs jitter_ms > 0 (only a varying delay reorders)")
		}
		return nil
	}},
	{key: "ge_p_pct", set: num(func(p *Profile, v float64) { p.GEPPct = v }), check: func(p Profile) error {
		if err := inRange(p.GEPPct, 0, 100, "%"); err != nil {
			return err
		}
		if p.hasGE() && (p.LossPct > 0 || p.LossCorrelationPct > 0) {
			return errors.New("Gilbert-Elliott loss and loss_pct/loss_correlation_pct are two loss models: give one")
		}
		return nil
	}},
	{key: "ge_r_pct", set: num(func(p *Profile, v float64) { p.GERPct = v }), check: func(p Profile) error {
		if err := inRange(p.GERPct, 0, 100, "%"); err != nil {
			return err
		}
		if p.hasGE() && p.GERPct == 0 {
			return errors.New("must be above 0 with Gilbert-Elliott loss (else the bad state never ends)")
		}
		return nil
	}},
	{key: "ge_loss_good_pct", set: num(func(p *Profile, v float64) { p.GELossGoodPct = v }), check: pctCheck(func(p Profile) float64 { return p.GELossGoodPct })},
	{key: "ge_loss_bad_pct", set: num(func(p *Profile, v float64) { p.GELossBadPct = v }), check: func(p Profile) error {
		if err := inRange(p.GELossBadPct, 0, 100, "%"); err != nil {
			return err
		}
		if p.hasGE() && p.GELossBadPct == 0 && p.GELossGoodPct == 0 {
			return errors.New("with ge_loss_good_pct 0 too the chain loses nothing")
		}
		return nil
	}},
	{key: "queue_packets", set: num(func(p *Profile, v float64) { p.QueuePackets = v }), check: func(p Profile) error {
		if err := intIn(p.QueuePackets, 1, 1_000_000, "packets"); err != nil {
			return err
		}
		if p.QueuePackets > 0 && p.QueueBytes > 0 {
			return errors.New("give queue_packets or queue_bytes, not both")
		}
		return nil
	}},
	{key: "queue_bytes", set: num(func(p *Profile, v float64) { p.QueueBytes = v }), check: func(p Profile) error {
		return intIn(p.QueueBytes, maxFrame, 1<<30, "bytes")
	}},
	{key: "trace_up", str: true, set: func(p *Profile, v any) { p.TraceUp = v.(string) }, check: func(p Profile) error {
		if (p.TraceUp == "") != (p.TraceDown == "") {
			return errors.New("trace_up and trace_down go together (one trace per direction)")
		}
		if p.TraceUp != "" && (p.RateKbit > 0 || p.WifiPhyKbit > 0) {
			return errors.New("a trace is the link's rate: no rate_kbit or wifi_phy_kbit with it")
		}
		if p.TraceUp != "" && p.Duplex == DuplexHalf {
			return errors.New("traces give each direction its own link: duplex must be full")
		}
		return nil
	}},
	{key: "trace_down", str: true, set: func(p *Profile, v any) { p.TraceDown = v.(string) }, check: noCheck},
	{key: "outage_on_ms", set: num(func(p *Profile, v float64) { p.OutageOnMs = v }), check: func(p Profile) error {
		if err := inRange(p.OutageOnMs, 0, 3_600_000, "ms"); err != nil {
			return err
		}
		if (p.OutageOnMs > 0) != (p.OutageOffMs > 0) {
			return errors.New("outage_on_ms and outage_off_ms go together")
		}
		return nil
	}},
	{key: "outage_off_ms", set: num(func(p *Profile, v float64) { p.OutageOffMs = v }), check: func(p Profile) error {
		return inRange(p.OutageOffMs, 0, 3_600_000, "ms")
	}},
	{key: "outage_random", boolean: true, set: boolSetter(func(p *Profile, v bool) { p.OutageRandom = v }), check: func(p Profile) error {
		if p.OutageRandom && p.OutageOffMs == 0 {
			return errors.New("needs outage_on_ms and outage_off_ms")
		}
		return nil
	}},
	{key: "wifi_phy_kbit", set: num(func(p *Profile, v float64) { p.WifiPhyKbit = v }), check: func(p Profile) error {
		if p.WifiPhyKbit == 0 {
			if p.WifiAckKbit+p.WifiSlotUs+p.WifiSifsUs+p.WifiPreambleUs+p.WifiCWMin+p.WifiCWMax+p.WifiRetryLimit+p.WifiMACBytes > 0 {
				return errors.New("the wifi_* keys need wifi_phy_kbit")
			}
			return nil
		}
		if err := inRange(p.WifiPhyKbit, 100, 10_000_000, "kbit/s"); err != nil {
			return err
		}
		var missing []string
		for _, r := range wifiRequired {
			if r.get(p) == 0 {
				missing = append(missing, r.key)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("the 802.11 model needs %s too", strings.Join(missing, ", "))
		}
		if p.RateKbit > 0 {
			return errors.New("the 802.11 model's airtime is the link's rate: no rate_kbit with it")
		}
		if p.Duplex != DuplexHalf {
			return errors.New("802.11 is one shared medium: duplex must be half")
		}
		return nil
	}},
	{key: "wifi_ack_kbit", set: num(func(p *Profile, v float64) { p.WifiAckKbit = v }), check: func(p Profile) error {
		if p.WifiAckKbit == 0 {
			return nil
		}
		return inRange(p.WifiAckKbit, 100, 10_000_000, "kbit/s")
	}},
	{key: "wifi_slot_us", set: num(func(p *Profile, v float64) { p.WifiSlotUs = v }), check: func(p Profile) error { return inRange(p.WifiSlotUs, 0, 1000, "us") }},
	{key: "wifi_sifs_us", set: num(func(p *Profile, v float64) { p.WifiSifsUs = v }), check: func(p Profile) error { return inRange(p.WifiSifsUs, 0, 1000, "us") }},
	{key: "wifi_preamble_us", set: num(func(p *Profile, v float64) { p.WifiPreambleUs = v }), check: func(p Profile) error { return inRange(p.WifiPreambleUs, 0, 1000, "us") }},
	{key: "wifi_cw_min", set: num(func(p *Profile, v float64) { p.WifiCWMin = v }), check: func(p Profile) error { return intIn(p.WifiCWMin, 1, 1023, "slots") }},
	{key: "wifi_cw_max", set: num(func(p *Profile, v float64) { p.WifiCWMax = v }), check: func(p Profile) error {
		if err := intIn(p.WifiCWMax, 1, 65535, "slots"); err != nil {
			return err
		}
		if p.WifiCWMax > 0 && p.WifiCWMax < p.WifiCWMin {
			return errors.New("below wifi_cw_min")
		}
		return nil
	}},
	{key: "wifi_retry_limit", set: num(func(p *Profile, v float64) { p.WifiRetryLimit = v }), check: func(p Profile) error { return intIn(p.WifiRetryLimit, 1, 255, "attempts") }},
	{key: "wifi_mac_bytes", set: num(func(p *Profile, v float64) { p.WifiMACBytes = v }), check: func(p Profile) error { return intIn(p.WifiMACBytes, 1, 1000, "bytes") }},
	{key: "seed", set: num(func(p *Profile, v float64) { p.Seed = v }), check: func(p Profile) error { return intIn(p.Seed, 0, 1<<53, "") }},
}

func init() { profileFields = append(profileFields, relayFields...) }

// checkTraces reads the profile's traces, reporting a missing or
// malformed one (its own file:line) at the profile's line.
func (p Profile) checkTraces(file string, line map[string]int) []error {
	var errs []error
	for _, x := range []struct {
		key string
		d   Direction
	}{{"trace_up", ToBroker}, {"trace_down", ToClient}} {
		if (x.d == ToBroker && p.TraceUp == "") || (x.d == ToClient && p.TraceDown == "") {
			continue
		}
		if _, err := p.loadTrace(x.d); err != nil {
			errs = append(errs, fmt.Errorf("%w: %s:%d: %s: %v", ErrBadProfile, file, line[x.key], x.key,
				strings.TrimPrefix(err.Error(), ErrBadProfile.Error()+": ")))
		}
	}
	return errs
}
