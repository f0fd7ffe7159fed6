package netem

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// Verify measures the link as currently applied (apply p first): goodput of
// a bulk TCP transfer client->broker, then broker->client, d each after a
// warm-up (tcpWarmup), then loss and one-way delay of UDP probes in both
// directions for d. p gives the expected values. Takes about 3*d plus the
// two warm-ups (d=10s: about 37 s).
func (l *Lab) Verify(ctx context.Context, p Profile, d time.Duration) (Verification, error) {
	if l.badOpt != nil {
		return Verification{}, l.badOpt
	}
	if d <= 0 {
		return Verification{}, errors.New("netem: verify: duration must be positive")
	}
	if !l.IsUp() {
		return Verification{}, fmt.Errorf("netem: verify: lab %s is not up", l.n.Prefix)
	}
	applied, backend, ok := l.Applied()
	if ok && !applied.SameLink(p) {
		return Verification{}, fmt.Errorf("netem: verify %s: the link has %s applied; apply the profile first", p.Name, applied.Name)
	}
	v := Verification{Profile: p, Backend: backend, Duration: d}
	before, err := l.Counters()
	if err != nil {
		return v, err
	}
	warm := tcpWarmup(d)
	half := p.Duplex == DuplexHalf && p.RateKbit > 0
	for _, x := range []struct {
		dir Direction
		r   *DirResult
	}{{ToBroker, &v.ToBroker}, {ToClient, &v.ToClient}} {
		l.waitIdle(ctx, p)
		t, err := l.tcpPhase(ctx, x.dir, warm, d)
		if err != nil {
			return v, fmt.Errorf("netem: verify %s: %w", x.dir, err)
		}
		r := x.r
		r.Direction, r.TCPBytes, r.TCPSeconds, r.MSS, r.Retransmits = x.dir, t.Bytes, t.Seconds, t.MSS, t.Retrans
		r.GoodputKbit = float64(t.Bytes) * 8 / t.Seconds / 1000
		r.ReceiverInOrderKbit = float64(t.InOrderBytes) * 8 / t.Seconds / 1000
		exp, frame, ack := expectedGoodput(p.RateKbit, t.MSS, t.Timestamps, half)
		r.FrameBytes, r.AckBytesPerSegment = frame, ack
		if p.RateKbit > 0 {
			r.ExpectedGoodputKbit = exp
		}
	}
	l.waitIdle(ctx, p)
	probes, err := l.udpPhase(ctx, p, d)
	if err != nil {
		return v, fmt.Errorf("netem: verify: loss probe: %w", err)
	}
	after, err := l.Counters()
	if err != nil {
		return v, err
	}
	v.Counters = after.Sub(before)
	for _, r := range []*DirResult{&v.ToBroker, &v.ToClient} {
		pr := probes[r.Direction]
		r.ProbeSent, r.ProbeReceived, r.ProbeDuplicates = pr.Sent, pr.Received, pr.Duplicates
		r.ExpectedLossPct = p.LossPct
		if pr.Sent > 0 {
			q := 1 - float64(pr.Received)/float64(pr.Sent)
			r.LossPct = 100 * q
			r.LossCI95Pts = 100 * 1.96 * math.Sqrt(math.Max(q*(1-q), 1/float64(pr.Sent))/float64(pr.Sent))
		}
		r.DelayP50Ms, r.DelayP90Ms = quantileMs(pr.Delays, 0.5), quantileMs(pr.Delays, 0.9)
		r.CounterDropPct = -1
		if pct, ok := v.Counters.Dir(r.Direction).DropPct(); ok {
			r.CounterDropPct = pct
		}
	}
	return v, nil
}

// waitIdle waits until the router's queues are empty (at most the queue's
// length plus a second), so one phase's backlog does not delay the next.
func (l *Lab) waitIdle(ctx context.Context, p Profile) {
	deadline := time.Now().Add(time.Duration(p.EffectiveQueueMs()*float64(time.Millisecond)) + time.Second)
	for time.Now().Before(deadline) {
		c, err := l.Counters()
		if err != nil || c.ToBroker.Qdisc.Backlog+c.ToClient.Qdisc.Backlog+c.Shared.Backlog == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// tcpWarmup is how long a bulk transfer runs before its goodput is
// measured: half the measurement, at most 3 s. A new connection's slow
// start on a lossy 1 Mbit/s link often overshoots the router queue, and the
// tail drops and timeouts that follow take a few seconds to settle; the
// steady state after it is what the link carries.
func tcpWarmup(d time.Duration) time.Duration { return min(d/2, 3*time.Second) }
