package load

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"pslab/internal/body"
	"pslab/internal/driver"
	"pslab/internal/metrics"
	"pslab/internal/scenario"
)

// pubState is one publisher. Fields other than the atomics are owned by its
// goroutine until it has stopped.
type pubState struct {
	id, topic    int
	enc          body.Encoder
	rng          *rand.Rand
	conn         driver.Publisher
	sent         atomic.Int64
	sentInWindow int64
	// sentTo counts messages sent per topic and filtered value (selector
	// or filter value; index 0 when the case has neither).
	sentTo [][]atomic.Int64
	// sentToWindow counts the same for messages sent inside the window.
	sentToWindow [][]atomic.Int64
	// pacer is what the open-loop pacer did (rate > 0), once stopped.
	pacer PacerStats
}

// publishLoop sends until stop is set: saturating (no think time) or, with
// a rate, open loop on a pacer (pacer.go): latency is measured from each
// message's due time (coordinated-omission correction).
func (r *run) publishLoop(ctx context.Context, p *pubState, stop *atomic.Bool, t0 int64) {
	c := r.cfg.Case
	var buf []byte
	bc, ok := p.conn.(driver.BodyCopier)
	reuse := ok && bc.CopiesBody()
	send := func(seq uint64, sentAt int64) bool {
		sel := -1
		switch {
		case c.Selector:
			sel = p.rng.IntN(scenario.SelectorValues)
		case c.Filtered():
			sel = c.ValueOfMessage(p.id, seq)
		}
		topic := c.TopicOfMessage(p.id, seq)
		if !r.inflight.admit(ctx, stop, topic, max(sel, 0)) {
			return false
		}
		// A fresh buffer per message unless the driver copies it: drivers
		// may keep the body after Publish returns (async PubAcks, STOMP
		// writer goroutines).
		if !reuse {
			buf = nil
		}
		b := p.enc.Encode(buf, body.Stamp{Publisher: uint32(p.id), Seq: seq, SentNanos: sentAt, Sel: int16(sel)})
		buf = b
		if err := p.conn.Publish(ctx, driver.Message{Body: b, Sel: sel, Topic: topic}); err != nil {
			if ctx.Err() == nil {
				r.noteErr(err)
				r.publishErrors.Add(1)
			}
			// The publisher stops, but what it sent before still has to
			// reach the broker: it flushes like the others (within the
			// drain's bound), or those sends would count as lost.
			return false
		}
		p.sent.Add(1)
		p.sentTo[topic][max(sel, 0)].Add(1)
		if r.inWindow(sentAt) {
			p.sentInWindow++
			p.sentToWindow[topic][max(sel, 0)].Add(1)
		}
		r.pubSeries.Add(time.Duration(sentAt-r.seriesStart), 1)
		return true
	}
	if c.Rate > 0 {
		tick := paceTick(c.Rate * float64(len(r.pubs)))
		if c.PaceTickSet {
			tick = c.PaceTick
		}
		pc := newPacer(t0, r.phaseOf(p), c.Rate, tick)
		pc.run(stop, send)
		p.pacer = pc.result()
	} else {
		for seq := uint64(1); !stop.Load() && send(seq, now()); seq++ {
		}
	}
	if err := p.conn.Flush(ctx); err != nil && ctx.Err() == nil {
		r.noteErr(err)
	}
}

// subState is one subscriber's accounting, guarded by mu (a driver may
// deliver from several goroutines). conn is also guarded by mu: a
// subscriber-disconnect fault replaces it (current reads it).
type subState struct {
	id, topic int
	// accept[v] tells whether the subscriber's filter or selector selects
	// value v; nil: every message of its topic.
	accept []bool
	conn   driver.Subscriber
	spec   driver.SubSpec // to subscribe again after a subscriber-disconnect

	mu           sync.Mutex
	trackers     []*seqTracker // per publisher
	hist         *metrics.Histogram
	inWindow     int64
	late         int64
	redelivered  int64
	decodeErrors int64
	unexpected   int64
	distinct     atomic.Int64
	// Per scheduled fault (see faults.go): when it ended for this
	// subscriber (monotonic ns, 0 = not yet), and the backlog delivered
	// after that: count and last delivery time.
	marks, backlog, lastBacklog []int64
}

// current is the subscriber's connection now (nil while a fault keeps it
// away).
func (s *subState) current() driver.Subscriber {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn
}

// accepts tells whether s is due messages with filtered value v.
func (s *subState) accepts(v int) bool {
	if s.accept == nil {
		return true
	}
	return v >= 0 && v < len(s.accept) && s.accept[v]
}

// deliver accounts for one delivery to s.
func (r *run) deliver(s *subState, d driver.Delivery) {
	t := now()
	st, _, err := body.Decode(d.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.decodeErrors++
		return
	}
	pub := int(st.Publisher)
	if pub >= len(s.trackers) || r.cfg.Case.TopicOfMessage(pub, st.Seq) != s.topic || !s.accepts(int(st.Sel)) {
		s.unexpected++
		return
	}
	if d.Redelivered {
		s.redelivered++
	}
	tr := s.trackers[pub]
	if tr == nil {
		tr = &seqTracker{}
		s.trackers[pub] = tr
	}
	if !tr.observe(st.Seq) {
		return
	}
	s.distinct.Add(1)
	r.inflight.delivered()
	s.noteBacklog(st.SentNanos, t)
	switch {
	case t >= r.windowEnd.Load():
		s.late++
	case t >= r.windowStart.Load():
		s.inWindow++
	}
	// Latency over every message sent inside the window, whenever it
	// arrives (the drain included): a queued message is not left out.
	if r.inWindow(st.SentNanos) {
		s.hist.Record(time.Duration(t - st.SentNanos))
	}
	r.subSeries.Add(time.Duration(t-r.seriesStart), 1)
}

// result gathers counts and metrics; subscribers may still be delivering
// stragglers, so each is read under its lock.
func (r *run) result(start time.Time, complete bool) *Result {
	c := r.cfg.Case
	w := c.Window.Seconds()
	res := &Result{Start: start, DrainComplete: complete, Histogram: metrics.NewHistogram()}
	cnt := &res.Counts
	for _, p := range r.pubs {
		cnt.Sent += p.sent.Load()
		cnt.SentInWindow += p.sentInWindow
		res.PubTput += float64(p.sentInWindow) / w
	}
	cnt.PublishErrors = r.publishErrors.Load()
	pacers := make([]PacerStats, len(r.pubs))
	for i, p := range r.pubs {
		pacers[i] = p.pacer
	}
	res.Pacer = mergePacers(pacers)
	res.InFlightStalls, res.InFlightPeak = r.inflight.counts()
	cnt.Expected = r.expected()
	for _, s := range r.subs {
		s.mu.Lock()
		cnt.Received += s.distinct.Load()
		cnt.ReceivedInWindow += s.inWindow
		cnt.Late += s.late
		cnt.Redelivered += s.redelivered
		cnt.DecodeErrors += s.decodeErrors
		cnt.Unexpected += s.unexpected
		for _, tr := range s.trackers {
			if tr != nil {
				cnt.Duplicated += tr.duplicates
				cnt.Reordered += tr.reordered
			}
		}
		res.SubTput += float64(s.inWindow) / w
		res.Histogram.Merge(s.hist)
		s.mu.Unlock()
	}
	r.account(res)
	pubStats, subStats := r.pubConnStats(), r.subConnStats()
	stats := slices.Concat(pubStats, subStats)
	for _, st := range stats {
		cnt.InDoubt += st.InDoubt
		cnt.Resent += st.Resent
		res.ClientOutages += len(st.Outages)
		for _, o := range st.Outages {
			if res.OutageCauses == nil {
				res.OutageCauses = map[string]int{}
			}
			res.OutageCauses[cmp.Or(o.Cause, "unknown")]++
		}
	}
	r.faultResults(res, pubStats, subStats)
	res.TLS = r.tlsResult(stats)
	res.Latency = res.Histogram.Summary()
	res.PubSeries = r.pubSeries.Values()
	res.SubSeries = r.subSeries.Values()
	if e := r.firstErr.Load(); e != nil {
		res.FirstError = *e
	}
	return res
}
