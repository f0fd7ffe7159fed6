package netem

import (
	"container/heap"
	"math/rand/v2"
)

// The link engine is the relay backend's model of the link, free of any
// I/O: packets arrive with a time (ns on any monotonic clock), and Advance
// says which ones the link delivers by a given time. The relay feeds it
// real frames on the real clock; the tests feed it made-up ones on a
// made-up clock, so every model is tested deterministically.
//
// A packet's way through the link:
//
//	arrival -> outage (link off: dropped) -> fault drop -> loss model
//	(not under 802.11: lost before the queue, as netem and the
//	tbf+nftables backend do) -> duplicate -> queue (drop-tail at the
//	limit) -> server (fixed rate, Mahimahi trace, or the 802.11 medium
//	with retries) -> delay line (delay + jitter, in order unless the
//	profile allows reordering) -> delivered.
//
// Full duplex gives each direction its own server; half duplex gives both
// one server (at a fixed rate: one FIFO queue in arrival order with one
// limit, as the kernel backend's IFB; under 802.11: a queue per direction,
// the medium alternating between them when both have frames, as two DCF
// stations contending get about one frame each in turn).

// Directions as engine indexes.
const (
	dirToBroker = 0
	dirToClient = 1
)

var dirNames = [2]Direction{ToBroker, ToClient}

// enginePkt is one packet in the link.
type enginePkt struct {
	frame    []byte // the Ethernet frame (nil in model tests)
	frameLen int    // bytes on the veth: what a fixed rate counts (as TBF)
	ipLen    int    // the IP packet: what 802.11 airtime and traces count
	dir      int
	arrive   int64
	due      int64 // delivery time
	seq      uint64
	lost     bool // 802.11: the last retry failed (residual loss)
}

// fifo is a queue of packets.
type fifo struct {
	pkts  []*enginePkt
	head  int
	bytes int
}

func (q *fifo) len() int { return len(q.pkts) - q.head }
func (q *fifo) push(p *enginePkt) {
	q.pkts = append(q.pkts, p)
	q.bytes += p.frameLen
}
func (q *fifo) peek() *enginePkt { return q.pkts[q.head] }
func (q *fifo) pop() *enginePkt {
	p := q.pkts[q.head]
	q.pkts[q.head] = nil
	q.head++
	q.bytes -= p.frameLen
	if q.head > 1024 && q.head*2 > len(q.pkts) {
		q.pkts = append(q.pkts[:0], q.pkts[q.head:]...)
		q.head = 0
	}
	return p
}

// dueHeap orders packets by delivery time (then arrival order).
type dueHeap []*enginePkt

func (h dueHeap) Len() int { return len(h) }
func (h dueHeap) Less(i, j int) bool {
	return h[i].due < h[j].due || h[i].due == h[j].due && h[i].seq < h[j].seq
}
func (h dueHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)   { *h = append(*h, x.(*enginePkt)) }
func (h *dueHeap) Pop() any {
	old := *h
	p := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return p
}

// delayLine holds packets between the server and delivery.
type delayLine struct {
	reorder bool
	inOrder fifo    // !reorder: due times never decrease
	heap    dueHeap // reorder
	lastDue int64
}

func (l *delayLine) push(p *enginePkt) {
	if l.reorder {
		heap.Push(&l.heap, p)
		return
	}
	p.due = max(p.due, l.lastDue)
	l.lastDue = p.due
	l.inOrder.push(p)
}

func (l *delayLine) len() int { return l.inOrder.len() + len(l.heap) }

// next is the earliest due time (ok false: empty).
func (l *delayLine) next() (int64, bool) {
	if l.reorder {
		if len(l.heap) == 0 {
			return 0, false
		}
		return l.heap[0].due, true
	}
	if l.inOrder.len() == 0 {
		return 0, false
	}
	return l.inOrder.peek().due, true
}

func (l *delayLine) pop() *enginePkt {
	if l.reorder {
		return heap.Pop(&l.heap).(*enginePkt)
	}
	return l.inOrder.pop()
}

// server sends packets from one or two queues, one at a time.
type server struct {
	dirs      []int
	alternate bool // 802.11: take turns between the directions
	lastDir   int
	busy      *enginePkt
	end       int64 // when busy's service ends
	free      int64 // when the server became free
	rateBps   float64
	trace     *traceServer
	oppAt     int64 // trace: the opportunity being used
	credit    int   // trace: bytes left in it
	wifi      *wifiModel
}

// engineDir is one direction's state.
type engineDir struct {
	q         fifo
	limitPkts int // 0: none
	limitB    int // 0: none
	loss      lossModel
	delay     delayModel
	line      delayLine
	c         RelayDirCounters
	trace     *Trace
	traceBase int64
}

// engine is the link.
type engine struct {
	dirs       [2]engineDir
	servers    []*server
	serverOf   [2]*server
	sharedQ    bool // half duplex at a fixed rate: one limit for both queues
	outage     *outageModel
	dupP       float64
	dupRng     *rand.Rand
	faultP     float64
	faultRng   *rand.Rand
	seq        uint64
	unshapedSv bool // no rate, no trace, no 802.11: service takes no time
}

// newEngine builds the link for a profile from time t0. traces are the
// to-broker (up) and to-client (down) traces of a trace profile.
func newEngine(p Profile, up, down *Trace, t0 int64) *engine {
	seed := profileSeed(p)
	e := &engine{
		outage:   newOutageModel(p, seed, 6, t0),
		dupP:     p.DuplicatePct / 100,
		dupRng:   rand.New(rand.NewPCG(seed, 7)),
		faultRng: rand.New(rand.NewPCG(seed, 8)),
	}
	for d := range e.dirs {
		limPkts, limB := queueLimits(p, dirNames[d])
		e.dirs[d] = engineDir{
			limitPkts: limPkts, limitB: limB,
			loss:  newLossModel(p, seed, uint64(1+d)),
			delay: newDelayModel(p, seed, uint64(3+d)),
			line:  delayLine{reorder: p.Reorder},
		}
	}
	wifi := newWifiModel(p, seed, 5)
	switch {
	case wifi != nil:
		s := &server{dirs: []int{dirToBroker, dirToClient}, alternate: true, wifi: wifi, lastDir: dirToClient}
		e.servers = []*server{s}
	case up != nil:
		for d, t := range []*Trace{up, down} {
			s := &server{dirs: []int{d}, trace: &traceServer{t: t, base: t0}}
			e.dirs[d].trace, e.dirs[d].traceBase = t, t0
			e.servers = append(e.servers, s)
		}
	case p.RateKbit > 0 && p.Duplex == DuplexHalf:
		e.sharedQ = true
		e.servers = []*server{{dirs: []int{dirToBroker, dirToClient}, rateBps: p.RateKbit * 1000 / 8}}
	default:
		for d := range e.dirs {
			e.servers = append(e.servers, &server{dirs: []int{d}, rateBps: NominalRateKbit(p, dirNames[d]) * 1000 / 8})
		}
		e.unshapedSv = p.RateKbit <= 0
	}
	for _, s := range e.servers {
		for _, d := range s.dirs {
			e.serverOf[d] = s
		}
	}
	return e
}

// setFault adds an independent drop of probability pct/100 to both
// directions (0 removes it).
func (e *engine) setFault(pct float64) { e.faultP = pct / 100 }

// arrive offers a packet to the link at time now (after advance(now)).
func (e *engine) arrive(now int64, p *enginePkt) {
	d := &e.dirs[p.dir]
	d.c.Seen++
	d.c.SeenBytes += uint64(p.frameLen)
	p.arrive = now
	switch {
	case e.outage.isOff(now):
		d.c.DropOutage++
		return
	case e.faultP > 0 && e.faultRng.Float64() < e.faultP:
		d.c.DropFault++
		return
	case e.serverOf[p.dir].wifi == nil && d.loss.lose():
		d.c.DropLoss++
		return
	}
	e.enqueue(now, p)
	if e.dupP > 0 && e.dupRng.Float64() < e.dupP {
		c := *p
		if p.frame != nil {
			c.frame = append([]byte(nil), p.frame...)
		}
		d.c.Duplicated++
		e.enqueue(now, &c)
	}
}

func (e *engine) enqueue(now int64, p *enginePkt) {
	d := &e.dirs[p.dir]
	pkts, bytes := d.q.len(), d.q.bytes
	if e.sharedQ {
		o := &e.dirs[1-p.dir]
		pkts, bytes = pkts+o.q.len(), bytes+o.q.bytes
	}
	if d.limitPkts > 0 && pkts+1 > d.limitPkts || d.limitB > 0 && bytes+p.frameLen > d.limitB {
		d.c.DropQueue++
		return
	}
	e.seq++
	p.seq = e.seq
	if e.unshapedSv && e.outage == nil {
		e.toLine(now, p)
		return
	}
	d.q.push(p)
	e.kick(e.serverOf[p.dir], now)
}

// kick starts the next service of s at time t if it is idle.
func (e *engine) kick(s *server, t int64) {
	if s.busy != nil {
		return
	}
	var p *enginePkt
	switch {
	case len(s.dirs) == 1:
		if q := &e.dirs[s.dirs[0]].q; q.len() > 0 {
			p = q.pop()
		}
	default:
		a, b := &e.dirs[dirToBroker].q, &e.dirs[dirToClient].q
		switch {
		case a.len() > 0 && b.len() > 0 && s.alternate:
			next := 1 - s.lastDir
			p = e.dirs[next].q.pop()
		case a.len() > 0 && b.len() > 0:
			if b.peek().seq < a.peek().seq {
				p = b.pop()
			} else {
				p = a.pop()
			}
		case a.len() > 0:
			p = a.pop()
		case b.len() > 0:
			p = b.pop()
		}
	}
	if p == nil {
		return
	}
	s.lastDir = p.dir
	start := e.outage.onAt(max(t, s.free, p.arrive))
	d := &e.dirs[p.dir]
	switch {
	case s.wifi != nil:
		air, attempts, ok := s.wifi.serve(p.ipLen, d.loss)
		d.c.Retries += uint64(attempts - 1)
		p.lost = !ok
		s.end = start + air
	case s.trace != nil:
		need := p.ipLen
		for need > 0 {
			if s.credit == 0 || s.oppAt < start {
				s.oppAt = s.trace.next(start)
				for e.outage.isOff(s.oppAt) { // no opportunity while off
					s.trace.n++
					s.oppAt = s.trace.next(e.outage.onAt(s.oppAt))
				}
				s.trace.n++
				s.credit = TraceOpportunityBytes
				start = s.oppAt
			}
			use := min(need, s.credit)
			need -= use
			s.credit -= use
		}
		s.end = s.oppAt
	case s.rateBps > 0:
		s.end = start + int64(float64(p.frameLen)*1e9/s.rateBps)
	default:
		s.end = start
	}
	s.busy = p
}

// toLine puts a served packet into its direction's delay line.
func (e *engine) toLine(t int64, p *enginePkt) {
	d := &e.dirs[p.dir]
	p.due = t + d.delay.draw()
	d.line.push(p)
}

// nextEvent is the time of the engine's next event (ok false: none).
func (e *engine) nextEvent() (int64, bool) {
	var t int64
	ok := false
	for _, s := range e.servers {
		if s.busy != nil && (!ok || s.end < t) {
			t, ok = s.end, true
		}
	}
	for d := range e.dirs {
		if due, has := e.dirs[d].line.next(); has && (!ok || due < t) {
			t, ok = due, true
		}
	}
	return t, ok
}

// advance runs the link up to now, in time order, appending the packets
// it delivers to out.
func (e *engine) advance(now int64, out []*enginePkt) []*enginePkt {
	for {
		t, ok := e.nextEvent()
		if !ok || t > now {
			return out
		}
		// Services ending at t go first (with no delay they are due at t).
		served := false
		for _, s := range e.servers {
			if s.busy != nil && s.end == t {
				p := s.busy
				s.busy, s.free = nil, t
				if p.lost {
					e.dirs[p.dir].c.DropRetry++
				} else {
					e.toLine(t, p)
				}
				e.kick(s, t)
				served = true
			}
		}
		if served {
			continue
		}
		for d := range e.dirs {
			l := &e.dirs[d].line
			for {
				due, has := l.next()
				if !has || due > t {
					break
				}
				p := l.pop()
				e.dirs[d].c.Delivered++
				e.dirs[d].c.DeliveredBytes += uint64(p.frameLen)
				out = append(out, p)
			}
		}
	}
}

// counters returns the engine's counters at time now.
func (e *engine) counters(now int64) [2]RelayDirCounters {
	var c [2]RelayDirCounters
	for d := range e.dirs {
		x := &e.dirs[d]
		c[d] = x.c
		c[d].QueuedPackets = uint64(x.q.len())
		c[d].QueuedBytes = uint64(x.q.bytes)
		c[d].InFlight = uint64(x.line.len())
		if x.trace != nil {
			c[d].OpportunityBytes = uint64(x.trace.opportunitiesBefore(now-x.traceBase)) * TraceOpportunityBytes
		}
	}
	for _, s := range e.servers {
		if s.busy != nil {
			c[s.busy.dir].QueuedPackets++
			c[s.busy.dir].QueuedBytes += uint64(s.busy.frameLen)
		}
	}
	return c
}
