package netem

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// maxFrame is a full-size Ethernet frame on the veths (MTU 1500 + 14 bytes
// of Ethernet header; veths carry no FCS or preamble). Qdiscs count it so.
const maxFrame = 1514

// lossModulus: numgen draws 0..9999, so loss is exact to 0.01 %.
const lossModulus = 10000

// ErrUnsupported is wrapped by Apply when a profile needs something the
// chosen backend (or the kernel) cannot do.
var ErrUnsupported = errors.New("unsupported")

// config is everything Apply puts on the router for one profile: pure data,
// built without touching the system, so it can be unit-tested.
type config struct {
	Backend  Backend
	Shapers  []shaper   // root qdiscs
	IFB      string     // half duplex: create this IFB device
	Redirect []string   // half duplex: mirred egress of these devices to IFB
	Drops    []dropRule // tbf+nftables: random drop per direction
}

// shaper is one root qdisc on one device of the router.
type shaper struct {
	Dev   string
	Dirs  []Direction // the traffic it carries
	TBF   *tbfPlan
	Netem *netemPlan
}

// tbfPlan is a token bucket filter: rate, bucket and queue, in bytes.
type tbfPlan struct {
	RateBytes  uint64 // bytes per second
	BurstBytes uint32 // bucket size
	LimitBytes uint32 // queue (bfifo) size
}

// netemPlan is the netem qdisc's parameters in profile units.
type netemPlan struct {
	RateBytes          uint64
	LimitPackets       uint32
	LossPct            float64
	LossCorrelationPct float64
	DelayUs, JitterUs  uint32
	DuplicatePct       float64
}

// dropRule is one direction's random drop in the router's forward chain.
type dropRule struct {
	Dir       Direction
	InIf      string  // packets of this direction enter the router here
	Threshold uint32  // drop when numgen random mod lossModulus < Threshold
	Pct       float64 // Threshold as a percentage
}

// buildConfig plans how backend b puts profile p on the router named by n.
// It refuses (ErrUnsupported) what b cannot do instead of approximating it.
func buildConfig(p Profile, b Backend, n names) (config, error) {
	if err := p.Validate(); err != nil {
		return config{}, err
	}
	if !p.Shaped() {
		return config{Backend: BackendNone}, nil
	}
	c := config{Backend: b}
	half := p.Duplex == DuplexHalf && p.RateKbit > 0
	switch b {
	case BackendTBFNft:
		if need := p.NeedsNetem(); len(need) > 0 {
			return config{}, fmt.Errorf("%w: profile %q needs %s, but this kernel has no netem qdisc (sch_netem, CONFIG_NET_SCH_NETEM); "+
				"the tbf+nftables fallback can only limit the rate and drop packets independently at random, so it refuses rather than approximate",
				ErrUnsupported, p.Name, strings.Join(need, ", "))
		}
		if p.RateKbit > 0 {
			t := planTBF(p.RateKbit, p.EffectiveQueueMs())
			c.Shapers = shapersFor(n, half, func() shaper { return shaper{TBF: &t} })
		}
		if p.LossPct > 0 {
			c.Drops = dropRules(n, p.LossPct)
		}
	case BackendNetem:
		ne := planNetem(p)
		c.Shapers = shapersFor(n, half, func() shaper { return shaper{Netem: &ne} })
	default:
		return config{}, fmt.Errorf("netem: unknown backend %q", b)
	}
	if half {
		c.IFB = n.IFB
		c.Redirect = []string{n.RtrBrkIf, n.RtrCliIf}
	}
	return c, nil
}

// shapersFor places one shaper per direction on the router's egress
// devices (full duplex), or a single one on the IFB that both directions'
// egress is redirected to (half duplex: one shared budget).
func shapersFor(n names, half bool, mk func() shaper) []shaper {
	if half {
		s := mk()
		s.Dev, s.Dirs = n.IFB, []Direction{ToBroker, ToClient}
		return []shaper{s}
	}
	a, b := mk(), mk()
	a.Dev, a.Dirs = n.RtrBrkIf, []Direction{ToBroker}
	b.Dev, b.Dirs = n.RtrCliIf, []Direction{ToClient}
	return []shaper{a, b}
}

// planTBF sizes the token bucket for a rate in kbit/s and a queue in ms.
//
// Burst (the bucket): the larger of two full frames and 1 ms of the rate.
// TBF never sends a packet bigger than its bucket, so it must hold a full
// frame; two let a frame go while the next one's tokens accrue. A small
// bucket keeps the rate exact on short time scales, as a radio has no burst
// above its rate. At high rates 1 ms keeps the timer granularity from
// capping throughput. At 1 Mbit/s the bucket is 3028 bytes (24 ms at line
// rate).
//
// Limit (the queue): queueMs of traffic at the rate, at least four full
// frames. This queue is the router's buffer and so it decides the queueing
// delay a busy link adds (at most queueMs) and when tail drop starts. The
// paper's NistNet kept its own queue and gives no size for it; NistNet only
// drops for congestion when its DRD settings are used, which the paper does
// not mention. The 500 ms default (62500 bytes, about 41 full frames at
// 1 Mbit/s) is deep enough that dozens of TCP connections rarely lose
// packets to the queue on top of the profile's loss, and bounded so a busy
// link adds at most half a second, not seconds, of queueing delay.
func planTBF(rateKbit, queueMs float64) tbfPlan {
	rate := uint64(math.Round(rateKbit * 1000 / 8))
	burst := max(2*maxFrame, rate/1000)
	limit := max(uint64(math.Round(float64(rate)*queueMs/1000)), 4*maxFrame)
	return tbfPlan{RateBytes: rate, BurstBytes: uint32(min(burst, math.MaxUint32)), LimitBytes: uint32(min(limit, math.MaxUint32))}
}

// unshapedNetemLimit is netem's queue when the profile has no rate: it must
// hold everything in flight during the delay (1 Gbit/s x 100 ms is about
// 8300 full frames).
const unshapedNetemLimit = 10000

// planNetem maps a profile to netem's parameters. The queue is the same
// queueMs-at-rate as TBF's, in packets (netem counts packets).
func planNetem(p Profile) netemPlan {
	ne := netemPlan{
		LossPct:            p.LossPct,
		LossCorrelationPct: p.LossCorrelationPct,
		DelayUs:            uint32(math.Round(p.DelayMs * 1000)),
		JitterUs:           uint32(math.Round(p.JitterMs * 1000)),
		DuplicatePct:       p.DuplicatePct,
		LimitPackets:       unshapedNetemLimit,
	}
	if p.RateKbit > 0 {
		t := planTBF(p.RateKbit, p.EffectiveQueueMs())
		ne.RateBytes = t.RateBytes
		ne.LimitPackets = uint32(math.Ceil(float64(t.LimitBytes) / maxFrame))
		// Packets held for the delay sit in the same queue.
		inDelay := float64(t.RateBytes) * (p.DelayMs + p.JitterMs) / 1000 / maxFrame
		ne.LimitPackets += uint32(math.Ceil(inDelay))
	}
	return ne
}

// dropRules makes one random-drop rule per direction, keyed on the
// interface the packets enter the router by.
func dropRules(n names, lossPct float64) []dropRule {
	th := uint32(math.Round(lossPct * lossModulus / 100))
	pct := float64(th) * 100 / lossModulus
	return []dropRule{
		{Dir: ToBroker, InIf: n.RtrCliIf, Threshold: th, Pct: pct},
		{Dir: ToClient, InIf: n.RtrBrkIf, Threshold: th, Pct: pct},
	}
}
