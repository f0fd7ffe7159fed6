package load

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"pslab/internal/driver"
	"pslab/internal/metrics"
	"pslab/internal/record"
	"pslab/internal/scenario"
)

// A case's load can be split into shards that run apart, each in its own
// process (pinned to its own CPUs) or on its own host, and whose results
// merge exactly (docs/design.md, "Beyond one machine"). This file holds
// the two halves the distributed runner will need, and nothing of the
// runner itself: the shard plan (which clients go together) and the
// merge of the shards' results.

// Shard is a part of a case's clients that can run apart from the rest:
// whole topics, each with every publisher that sends to it and every
// subscriber that receives from it. A message is stamped and received in
// the same process, so its latency is read on one monotonic clock, and
// its sender and receivers count it exactly in one place.
type Shard struct {
	Index, Of   int   // this is shard Index (0-based) of Of
	Topics      []int // the topics it holds
	Publishers  []int // the publisher ids (scenario.Factors.TopicOfPublisher)
	Subscribers []int // the subscriber ids (scenario.Factors.TopicOfSubscriber)
}

// Shards plans the case of f in at most n shards of whole topics, the
// clients spread as evenly as whole topics allow (the topic with the most
// clients first, each to the shard with the fewest so far). A case whose
// messages cross topics (topic_round_robin: every publisher sends to
// every topic) is one shard, as is a case of one topic; so is every
// shard that would hold no client.
func Shards(f scenario.Factors, n int) ([]Shard, error) {
	if n < 1 {
		return nil, fmt.Errorf("shards: want at least 1, got %d", n)
	}
	if f.Topics < 1 {
		return nil, fmt.Errorf("shards: the case has %d topics", f.Topics)
	}
	if f.TopicRoundRobin {
		n = 1
	}
	pubs := make([][]int, f.Topics)
	subs := make([][]int, f.Topics)
	for i := range f.Publishers {
		t := f.TopicOfPublisher(i)
		pubs[t] = append(pubs[t], i)
	}
	for j := range f.Subscribers {
		t := f.TopicOfSubscriber(j)
		subs[t] = append(subs[t], j)
	}
	order := make([]int, f.Topics)
	for t := range order {
		order[t] = t
	}
	clients := func(t int) int { return len(pubs[t]) + len(subs[t]) }
	sort.SliceStable(order, func(a, b int) bool { return clients(order[a]) > clients(order[b]) })
	n = min(n, f.Topics)
	shards := make([]Shard, n)
	load := make([]int, n)
	for _, t := range order {
		if clients(t) == 0 {
			continue
		}
		k := 0
		for i := range shards {
			if load[i] < load[k] {
				k = i
			}
		}
		shards[k].Topics = append(shards[k].Topics, t)
		shards[k].Publishers = append(shards[k].Publishers, pubs[t]...)
		shards[k].Subscribers = append(shards[k].Subscribers, subs[t]...)
		load[k] += clients(t)
	}
	var out []Shard
	for _, s := range shards {
		if len(s.Topics) == 0 {
			continue
		}
		sort.Ints(s.Topics)
		sort.Ints(s.Publishers)
		sort.Ints(s.Subscribers)
		out = append(out, s)
	}
	for i := range out {
		out[i].Index, out[i].Of = i, len(out)
	}
	return out, nil
}

// Merge is the result of a case that ran in shards (Shards), from the
// shards' results, each with its latency histogram (Result.Histogram):
//
//   - counts, and throughputs (sums over clients of each one's rate), add
//     up exactly: every client and every due delivery is in one shard;
//   - latency is read from the shards' histograms added together, never
//     from their percentiles (percentiles of parts do not make the
//     percentiles of the whole);
//   - the per-second series add up second by second from the common start
//     of the warm-up;
//   - what is due and missing is split again (Split) with held, the
//     broker's answer for the whole case, asked once after every shard
//     drained (nil: it could not be asked, heldErr says why): each
//     shard's own question would count the broker's backlog once per
//     shard.
//
// The shards must have run the same phases (a common warm-up: a shard's
// adaptive warm-up alone would give each its own window), and no fault
// schedule (faults act on the whole link or broker, not on a shard).
func Merge(parts []*Result, held *driver.Held, heldErr string) (*Result, error) {
	if len(parts) == 0 {
		return nil, errors.New("merge: no shard results")
	}
	out := &Result{Start: parts[0].Start, WarmupS: parts[0].WarmupS, DrainComplete: true, Histogram: metrics.NewHistogram()}
	acct := &Accounting{Held: held, HeldError: heldErr, Drain: Drain{Ended: DrainComplete}, Steady: Steady{Levelled: true}}
	var whys []string
	for i, p := range parts {
		switch {
		case p.Histogram == nil:
			return nil, fmt.Errorf("merge: shard %d has no latency histogram (percentiles cannot be merged from summaries)", i)
		case len(p.Faults) > 0:
			return nil, fmt.Errorf("merge: shard %d ran a fault schedule; faults act on the whole case and are not merged", i)
		case abs(p.WarmupS-out.WarmupS) > 1e-3:
			return nil, fmt.Errorf("merge: shard %d warmed up %.3f s, shard 0 %.3f s: shards must share their phases", i, p.WarmupS, out.WarmupS)
		}
		if p.Start.Before(out.Start) {
			out.Start = p.Start
		}
		out.Connect = max(out.Connect, p.Connect)
		out.CloseS = max(out.CloseS, p.CloseS)
		out.PubTput += p.PubTput
		out.SubTput += p.SubTput
		out.Histogram.Merge(p.Histogram)
		addCounts(&out.Counts, p.Counts)
		out.PubSeries = addSeries(out.PubSeries, p.PubSeries)
		out.SubSeries = addSeries(out.SubSeries, p.SubSeries)
		out.DrainComplete = out.DrainComplete && p.DrainComplete
		out.Aborted = out.Aborted || p.Aborted
		out.InFlightPeak += p.InFlightPeak
		out.InFlightStalls += p.InFlightStalls
		out.Unclosed += p.Unclosed
		out.ClientOutages += p.ClientOutages
		out.TLS = record.MergeTLS(out.TLS, p.TLS)
		out.UnexplainedOutages += p.UnexplainedOutages
		if len(p.OutageCauses) > 0 {
			if out.OutageCauses == nil {
				out.OutageCauses = map[string]int{}
			}
			for k, v := range p.OutageCauses {
				out.OutageCauses[k] += v
			}
		}
		if out.FirstError == "" {
			out.FirstError = p.FirstError
		}
		if out.Interrupted == nil && p.Interrupted != nil {
			i := *p.Interrupted
			out.Interrupted = &i
		}
		if a := p.Accounting; a != nil {
			acct.ClientPending += a.ClientPending
			acct.ClientDropped += a.ClientDropped
			acct.ToBrokerSends += a.ToBrokerSends
			acct.DueInDoubt += a.DueInDoubt
			if acct.ToBrokerError == "" {
				acct.ToBrokerError = a.ToBrokerError
			}
			acct.Drain = worseDrain(acct.Drain, a.Drain)
			if !a.Steady.Levelled {
				acct.Steady.Levelled = false
				whys = append(whys, fmt.Sprintf("shard %d: %s", i, a.Steady.Why))
			}
		}
	}
	acct.Steady.Why = strings.Join(whys, "; ")
	out.Latency = out.Histogram.Summary()
	c := &out.Counts
	var backlog int64
	if held != nil {
		backlog = held.Backlog
	}
	c.InFlight, c.Backlog, c.ToBroker, c.Lost = Split(c.Expected-c.Received, acct.ClientPending, backlog, c.ToBroker, held != nil)
	c.Dropped = acct.ClientDropped
	if c.DueInWindow > 0 {
		acct.SubOverPub = float64(c.ReceivedInWindow) / float64(c.DueInWindow)
		acct.SubExceedsPub = acct.SubOverPub > subOverPubMax
	}
	out.Accounting = acct
	return out, nil
}

// addCounts adds b's counts to a (the accounting split is made again by
// Merge: Backlog and Lost are left for it, InFlight too).
func addCounts(a *Counts, b Counts) {
	a.Sent += b.Sent
	a.SentInWindow += b.SentInWindow
	a.Expected += b.Expected
	a.Received += b.Received
	a.ReceivedInWindow += b.ReceivedInWindow
	a.Late += b.Late
	a.Duplicated += b.Duplicated
	a.Reordered += b.Reordered
	a.Redelivered += b.Redelivered
	a.DecodeErrors += b.DecodeErrors
	a.Unexpected += b.Unexpected
	a.PublishErrors += b.PublishErrors
	a.InDoubt += b.InDoubt
	a.Resent += b.Resent
	a.ToBroker += b.ToBroker
	a.DueInWindow += b.DueInWindow
}

// addSeries adds b to a second by second.
func addSeries(a, b []int64) []int64 {
	out := make([]int64, max(len(a), len(b)))
	copy(out, a)
	for i, v := range b {
		out[i] += v
	}
	return out
}

// worseDrain is the drain of a merged case: as long as the longest, ended
// the least completely (cancelled, bound, stalled, complete).
func worseDrain(a, b Drain) Drain {
	rank := map[string]int{DrainComplete: 0, DrainStalled: 1, DrainBound: 2, DrainCancelled: 3}
	out := a
	if rank[b.Ended] > rank[a.Ended] {
		out.Ended = b.Ended
	}
	out.S, out.StallS, out.BoundS, out.FlushS = max(a.S, b.S), max(a.StallS, b.StallS), max(a.BoundS, b.BoundS), max(a.FlushS, b.FlushS)
	out.FlushCut = a.FlushCut || b.FlushCut
	return out
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
