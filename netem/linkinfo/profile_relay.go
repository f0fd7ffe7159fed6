package linkinfo

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// The relay backend's side of a profile (netem's relay.go and
// docs/netem.md): its keys, their checks, and what follows from the
// parameters alone. What needs the link's models (the rate of a trace or
// of the 802.11 medium, the mean of correlated loss) is netem's.

// BackendRelay is the user-space link: a process in the router namespace
// that carries every IPv4 frame between the router's two veths through
// netem's link engine.
const BackendRelay Backend = "relay"

// Jitter distributions.
const (
	JitterUniform = "uniform" // delay + U(-jitter, +jitter), as netem without a table
	JitterNormal  = "normal"  // delay + N(0, jitter), redrawn below 0
)

// MaxFrame is a full-size Ethernet frame on the lab's veths (no preamble
// or FCS).
const MaxFrame = 1514

// GEParams are the four parameters of the Gilbert-Elliott channel, as
// probabilities per packet: P (good to bad), R (bad to good), and the loss
// probabilities in the good and in the bad state. P=r, R=p, LossGood=0,
// LossBad=1 is Gilbert's simple model, whose loss runs are geometric with
// mean 1/R.
type GEParams struct {
	P, R, LossGood, LossBad float64
}

// MeanLoss is the stationary loss probability of the chain.
func (g GEParams) MeanLoss() float64 {
	if g.P+g.R == 0 {
		return g.LossGood
	}
	bad := g.P / (g.P + g.R)
	return (1-bad)*g.LossGood + bad*g.LossBad
}

// MeanBurst is the mean length of a run of consecutive lost packets in the
// stationary chain: P(lost) / P(lost and the previous one not lost), with
// P(two lost in a row) = sum over states s, s' of pi(s) e(s) T(s,s') e(s').
// It is 1/R for Gilbert's simple model and 1/(1-p) for independent loss.
func (g GEParams) MeanBurst() float64 {
	if g.P+g.R == 0 {
		return 1 / (1 - g.LossGood)
	}
	pb := g.P / (g.P + g.R)
	pi := [2]float64{1 - pb, pb}
	e := [2]float64{g.LossGood, g.LossBad}
	T := [2][2]float64{{1 - g.P, g.P}, {g.R, 1 - g.R}}
	var l, ll float64
	for s := range 2 {
		l += pi[s] * e[s]
		for t := range 2 {
			ll += pi[s] * e[s] * T[s][t] * e[t]
		}
	}
	if l <= ll {
		return math.Inf(1)
	}
	return l / (l - ll)
}

// HasGE reports whether the profile uses the Gilbert-Elliott model.
func (p Profile) HasGE() bool {
	return p.GEPPct > 0 || p.GERPct > 0 || p.GELossGoodPct > 0 || p.GELossBadPct > 0
}

// GE is the profile's Gilbert-Elliott chain as probabilities.
func (p Profile) GE() GEParams {
	return GEParams{P: p.GEPPct / 100, R: p.GERPct / 100, LossGood: p.GELossGoodPct / 100, LossBad: p.GELossBadPct / 100}
}

// MeanBurst is the mean length of a run of lost packets the loss model
// gives (1/(1-p) for independent loss; 0 without loss).
func (p Profile) MeanBurst() float64 {
	switch {
	case p.HasGE():
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
	if p.HasGE() {
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

// OffFraction is the long-run share of time the link is off.
func (p Profile) OffFraction() float64 {
	if p.OutageOffMs <= 0 {
		return 0
	}
	return p.OutageOffMs / (p.OutageOnMs + p.OutageOffMs)
}

// BurstCheckable says whether loss runs across the link measure the loss
// model alone (no outages, no 802.11 retries hiding it).
func (p Profile) BurstCheckable() bool {
	return p.MeanBurst() > 0 && p.OutageOffMs == 0 && p.WifiPhyKbit == 0
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
		if p.HasGE() && (p.LossPct > 0 || p.LossCorrelationPct > 0) {
			return errors.New("Gilbert-Elliott loss and loss_pct/loss_correlation_pct are two loss models: give one")
		}
		return nil
	}},
	{key: "ge_r_pct", set: num(func(p *Profile, v float64) { p.GERPct = v }), check: func(p Profile) error {
		if err := inRange(p.GERPct, 0, 100, "%"); err != nil {
			return err
		}
		if p.HasGE() && p.GERPct == 0 {
			return errors.New("must be above 0 with Gilbert-Elliott loss (else the bad state never ends)")
		}
		return nil
	}},
	{key: "ge_loss_good_pct", set: num(func(p *Profile, v float64) { p.GELossGoodPct = v }), check: pctCheck(func(p Profile) float64 { return p.GELossGoodPct })},
	{key: "ge_loss_bad_pct", set: num(func(p *Profile, v float64) { p.GELossBadPct = v }), check: func(p Profile) error {
		if err := inRange(p.GELossBadPct, 0, 100, "%"); err != nil {
			return err
		}
		if p.HasGE() && p.GELossBadPct == 0 && p.GELossGoodPct == 0 {
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
		return intIn(p.QueueBytes, MaxFrame, 1<<30, "bytes")
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
