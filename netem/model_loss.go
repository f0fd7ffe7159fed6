package netem

import (
	"math"
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

// GEParams are the four parameters of the Gilbert-Elliott channel, as
// probabilities per packet: P (good to bad), R (bad to good), and the loss
// probabilities in the good and in the bad state. P=r, R=p, LossGood=0,
// LossBad=1 is Gilbert's simple model, whose loss runs are geometric with
// mean 1/R.
type GEParams struct {
	P, R, LossGood, LossBad float64
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

// newLossModel builds the loss model a profile asks for, per direction
// (each direction has its own chain), seeded.
func newLossModel(p Profile, seed uint64, stream uint64) lossModel {
	rng := rand.New(rand.NewPCG(seed, stream))
	switch {
	case p.hasGE():
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
