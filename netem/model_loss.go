package netem

import (
	"math/rand/v2"
)

// lossModel decides, packet by packet (or, under the 802.11 model, frame
// attempt by frame attempt), whether one is lost. Every model draws from
// its own seeded generator, so a run with the same seed and the same
// sequence of packets loses the same packets.
type lossModel interface {
	lose() bool
}

// noLoss loses nothing.
type noLoss struct{}

func (noLoss) lose() bool { return false }

// bernoulliLoss loses each packet independently with probability p.
type bernoulliLoss struct {
	p   float64
	rng *rand.Rand
}

func (b *bernoulliLoss) lose() bool { return b.rng.Float64() < b.p }

// correlatedLoss is the netem qdisc's loss with a correlation: the random
// number compared with p is rho times the previous number plus (1-rho)
// times a fresh uniform one. It is kept because profiles written for
// sch_netem use it (wifi-bursty); its mean loss is p but its bursts are
// short and not tunable, which is why the Gilbert-Elliott model exists.
type correlatedLoss struct {
	p, rho float64
	last   float64
	rng    *rand.Rand
}

func (c *correlatedLoss) lose() bool {
	c.last = c.rho*c.last + (1-c.rho)*c.rng.Float64()
	return c.last < c.p
}

// geLoss is the Gilbert-Elliott two-state Markov chain. The chain moves
// once per packet, then the packet is lost with the loss probability of
// the state it is in.
type geLoss struct {
	GEParams
	bad bool
	rng *rand.Rand
}

func (g *geLoss) lose() bool {
	if g.bad {
		if g.rng.Float64() < g.R {
			g.bad = false
		}
	} else if g.rng.Float64() < g.P {
		g.bad = true
	}
	if g.bad {
		return g.rng.Float64() < g.LossBad
	}
	return g.LossGood > 0 && g.rng.Float64() < g.LossGood
}

// newLossModel builds the loss model a profile asks for, per direction
// (each direction has its own chain), seeded.
func newLossModel(p Profile, seed uint64, stream uint64) lossModel {
	rng := rand.New(rand.NewPCG(seed, stream))
	switch {
	case p.HasGE():
		return &geLoss{GEParams: p.GE(), rng: rng}
	case p.LossPct > 0 && p.LossCorrelationPct > 0:
		return &correlatedLoss{p: p.LossPct / 100, rho: p.LossCorrelationPct / 100, rng: rng}
	case p.LossPct > 0:
		return &bernoulliLoss{p: p.LossPct / 100, rng: rng}
	}
	return noLoss{}
}

// lossRuns splits a sequence of fates (true: lost) into the lengths of its
// runs of consecutive losses.
func lossRuns(lost []bool) []int {
	var runs []int
	n := 0
	for _, l := range lost {
		if l {
			n++
			continue
		}
		if n > 0 {
			runs = append(runs, n)
			n = 0
		}
	}
	if n > 0 {
		runs = append(runs, n)
	}
	return runs
}

// meanRun is the mean of runs (0 if none).
func meanRun(runs []int) float64 {
	if len(runs) == 0 {
		return 0
	}
	s := 0
	for _, r := range runs {
		s += r
	}
	return float64(s) / float64(len(runs))
}
