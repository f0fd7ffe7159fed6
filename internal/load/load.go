// Package load runs one case: it connects subscribers and publishers (one
// connection each) through a driver, drives the warm-up, measurement window
// and drain phases, and accounts for every message by publisher id and
// sequence number: sent, received, lost, duplicated, reordered, late, and
// the latency of each delivery from the same-process monotonic clock.
package load

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"pslab/internal/body"
	"pslab/internal/driver"
	"pslab/internal/metrics"
	"pslab/internal/scenario"
)

// epoch anchors the monotonic clock stamped into messages. Senders and
// receivers share this process, so no clock synchronisation is needed.
var epoch = time.Now()

func now() int64 { return int64(time.Since(epoch)) }

// Config is one case run.
type Config struct {
	Case   scenario.Case
	Prefix string // unique names on the broker for this case run
	Driver driver.Driver
	// PubDriver, when set, opens the publishers' connections instead of
	// Driver (which opens the subscribers' and does the rest): a driver
	// whose endpoint dials from another network namespace, for a network
	// with a link per role. Both reach the same broker.
	PubDriver driver.Driver
	Seed      int64
	// ConnectParallel bounds concurrent connection set-up (default 64: on
	// a lossy link a lost SYN costs a 1 s retransmission, and set-up in
	// parallel hides it).
	ConnectParallel int
	// Progress, when set, is called about once a second while running.
	Progress func(p Progress)
	// Injector applies the case's link and broker faults; nil refuses a
	// case that has such faults.
	Injector Injector
	// AbortAtEnd drops the connections at the end of the case (an RST, no
	// goodbye; see driver.Aborter) instead of closing them. For a slow link
	// followed by a purge: a graceful close would wait behind the data still
	// queued for the clients, and the broker would go on sending it.
	AbortAtEnd bool
	// Connected, when set, is called once every client is connected and
	// subscribed, before the warm-up (e.g. to put the link's shaping back
	// after an unshaped set-up); an error ends the case.
	Connected func() error
	// LinkBitsPerSec is the emulated link's rate (0: unshaped); with
	// MaxDrain (0: DefaultMaxDrain) it bounds the drain (see drain.go).
	LinkBitsPerSec float64
	MaxDrain       time.Duration
}

// pubDriver is the driver of the publishers' connections.
func (cfg Config) pubDriver() driver.Driver {
	if cfg.PubDriver != nil {
		return cfg.PubDriver
	}
	return cfg.Driver
}

// Progress is a running snapshot.
type Progress struct {
	Phase    string // "connect", "warmup", "window", "drain"
	Elapsed  time.Duration
	Sent     int64
	Received int64
}

// Run executes one case. Connection failures abort it with an error;
// failures during the window are counted and reported in the result. The
// caller purges the prefix afterwards (durable subscriptions included).
func Run(ctx context.Context, cfg Config) (*Result, error) {
	c := cfg.Case
	f := c.Factors
	if err := cfg.Driver.Supports(f); err != nil {
		return nil, err
	}
	if cfg.ConnectParallel <= 0 {
		cfg.ConnectParallel = 64
	}
	cs := driver.CaseSpec{Prefix: cfg.Prefix, Factors: f}
	if f.TLS {
		cs.Handshakes = &driver.HandshakeLog{}
	}
	r := &run{cfg: cfg, cs: cs}
	if err := r.checkFaults(); err != nil {
		return nil, err
	}
	if err := cfg.Driver.Prepare(ctx, cs); err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	connectStart := time.Now()
	err := r.connect(ctx)
	if err != nil {
		err = &ConnectError{Err: err}
	} else if cfg.Connected != nil {
		err = cfg.Connected()
	}
	if err != nil {
		r.closeAll(ctx, r.cfg.AbortAtEnd)
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	iw := watchInterrupt(ctx)
	r.iw = iw
	res := r.measure(ctx)
	res.Interrupted = iw.of(r)
	if p, ok := cfg.Driver.(driver.Promiser); ok {
		res.Promises = p.Promises(f)
	}
	res.Connect = res.Start.Sub(connectStart).Seconds()
	closeStart := time.Now()
	// Disconnect only: durable subscriptions stay on the broker, and the
	// caller's Purge of the case prefix removes them all at once (one stream
	// or address delete instead of a request per subscriber over the link).
	abort := cfg.AbortAtEnd || res.Interrupted != nil // nothing more is measured: drop
	res.Unclosed = r.closeAll(ctx, abort)
	res.Aborted = abort
	res.CloseS = time.Since(closeStart).Seconds()
	return res, nil
}

// ConnectError is a failure to connect a case's clients (a subscriber's or
// a publisher's set-up): nothing was measured yet, and the clients that
// had connected are closed. The caller may run the case again.
type ConnectError struct{ Err error }

func (e *ConnectError) Error() string { return e.Err.Error() }
func (e *ConnectError) Unwrap() error { return e.Err }

type run struct {
	cfg  Config
	cs   driver.CaseSpec
	pubs []*pubState
	subs []*subState

	windowStart, windowEnd atomic.Int64 // monotonic ns (epoch-relative); unset (max) during the warm-up
	acct                   Accounting
	toBroker               int64 // deliveries due for sends the broker had not received (askUnreceived)
	pubSeries, subSeries   *metrics.Series
	seriesStart            int64 // the series' start, epoch-relative ns
	firstErr               atomic.Pointer[string]
	publishErrors          atomic.Int64
	inflight               *inFlight // nil: no in_flight bound
	faults                 []FaultResult
	iw                     *interruptWatch // the phase an interruption happened in
}

func (r *run) noteErr(err error) {
	s := err.Error()
	r.firstErr.CompareAndSwap(nil, &s)
}

// connect opens every subscriber first, then every publisher, as the paper
// does (connection set-up is excluded from measurement).
func (r *run) connect(ctx context.Context) error {
	c := r.cfg.Case
	f := c.Factors
	rng := rand.New(rand.NewPCG(uint64(r.cfg.Seed), 1))
	r.subs = make([]*subState, f.Subscribers)
	nValues := f.MessageValues()
	for j := range r.subs {
		s := &subState{id: j, topic: f.TopicOfSubscriber(j), trackers: make([]*seqTracker, f.Publishers),
			hist:  metrics.NewHistogram(),
			marks: make([]int64, len(c.Faults)), backlog: make([]int64, len(c.Faults)), lastBacklog: make([]int64, len(c.Faults))}
		spec := driver.SubSpec{Case: r.cs, ID: j, Topic: s.topic, Window: c.DeliveryWindow, AckWait: c.AckWait,
			AckEvery: c.AckEvery, AckIntervalMs: int(c.AckInterval / time.Millisecond)}
		switch {
		case f.Selector:
			spec.SelectFrom = rng.IntN(scenario.SelectorValues - scenario.SelectorSpan + 1)
			spec.SelectTo = spec.SelectFrom + scenario.SelectorSpan
			s.accept = make([]bool, nValues)
			for v := spec.SelectFrom; v < spec.SelectTo; v++ {
				s.accept[v] = true
			}
		case f.Filtered():
			spec.FilterValues = f.SubscriberFilterValues(j)
			s.accept = make([]bool, nValues)
			for _, v := range spec.FilterValues {
				if v < nValues { // values no message carries match nothing
					s.accept[v] = true
				}
			}
		}
		if f.Subscription == scenario.Durable {
			spec.DurableName = c.DurableNameFor(r.cfg.Prefix, j)
			spec.ClientID = c.ClientIDFor(r.cfg.Prefix, j)
		}
		s.spec = spec
		r.subs[j] = s
	}
	r.pubs = make([]*pubState, f.Publishers)
	for i := range r.pubs {
		enc, err := body.NewEncoder(f.Body, f.Size, r.cfg.Seed+int64(i))
		if err != nil {
			return err
		}
		r.pubs[i] = &pubState{id: i, topic: f.TopicOfPublisher(i), enc: enc,
			rng:    rand.New(rand.NewPCG(uint64(r.cfg.Seed), uint64(1000+i))),
			sentTo: make([][]atomic.Int64, f.Topics)}
		r.pubs[i].sentToWindow = make([][]atomic.Int64, f.Topics)
		for t := range r.pubs[i].sentTo {
			r.pubs[i].sentTo[t] = make([]atomic.Int64, nValues)
			r.pubs[i].sentToWindow[t] = make([]atomic.Int64, nValues)
		}
	}
	r.inflight = newInFlight(c.InFlight, r.subs, f.Topics, nValues)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.cfg.ConnectParallel)
	for _, s := range r.subs {
		if gctx.Err() != nil { // cancelled or failed: launch no more
			break
		}
		g.Go(func() error {
			if gctx.Err() != nil {
				return gctx.Err()
			}
			return r.subscribe(gctx, s)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	g, gctx = errgroup.WithContext(ctx)
	g.SetLimit(r.cfg.ConnectParallel)
	for _, p := range r.pubs {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if gctx.Err() != nil {
				return gctx.Err()
			}
			pub, err := r.cfg.pubDriver().Publisher(gctx, driver.PubSpec{Case: r.cs, ID: p.id, Topic: p.topic, Window: c.PublishWindow})
			if err != nil {
				return fmt.Errorf("publisher %d: %w", p.id, err)
			}
			p.conn = pub
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// subscribe connects subscriber s (again, after a subscriber-disconnect
// fault: same durable name and client id, so a durable subscription gets
// its backlog).
func (r *run) subscribe(ctx context.Context, s *subState) error {
	sub, err := r.cfg.Driver.Subscriber(ctx, s.spec, func(d driver.Delivery) { r.deliver(s, d) })
	if err != nil {
		return fmt.Errorf("subscriber %d: %w", s.id, err)
	}
	s.mu.Lock()
	s.conn = sub
	s.mu.Unlock()
	return nil
}

// measure runs warm-up, window and drain, then gathers the result.
func (r *run) measure(ctx context.Context) *Result {
	c := r.cfg.Case
	start := time.Now()
	t0 := now()
	r.windowStart.Store(math.MaxInt64)
	r.windowEnd.Store(math.MaxInt64)
	r.pubSeries, r.subSeries = metrics.NewSeries(start), metrics.NewSeries(start)
	r.seriesStart = int64(start.Sub(epoch))

	var stop atomic.Bool
	pctx, cancelPubs := context.WithCancel(ctx)
	defer cancelPubs()
	var wg sync.WaitGroup
	for _, p := range r.pubs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.publishLoop(pctx, p, &stop, t0)
		}()
	}
	waitFaults := r.startFaults(ctx, start)
	windowEnd := r.warmUp(ctx, start, t0).Add(c.Window)
	r.waitUntil(ctx, windowEnd, start, func() bool { return false })
	r.iw.enter("drain")
	stop.Store(true)
	// Publishers flush what they sent: the broker confirms every send
	// (PubAck, STOMP receipt, PONG) before the drain decides what is
	// missing, so a send still on its way to the broker is never counted
	// as lost. Over a shaped link the flush can take longer than the
	// case's drain (a window of messages queued in the publisher's socket
	// crosses 1 Mbit/s in seconds), so it is bounded by the drain's upper
	// bound, not by the case's drain; a flush cut there is recorded.
	flushed := make(chan struct{})
	go func() { wg.Wait(); close(flushed) }()
	select {
	case <-flushed:
	case <-time.After(time.Until(r.drainDeadline(windowEnd))):
		cancelPubs()
		<-flushed
		r.acct.Drain.FlushCut = true
	}
	r.acct.Drain.FlushS = time.Since(windowEnd).Seconds()
	// Faults end inside the window, but undoing one (a broker restart) may
	// take longer; nothing may still change the accounting afterwards.
	waitFaults()
	expected := r.expected()
	complete := r.drain(ctx, start, windowEnd, expected)
	return r.result(start, complete)
}

// waitUntil sleeps until deadline or done() holds, reporting progress each
// second; it reports whether done() held.
func (r *run) waitUntil(ctx context.Context, deadline, start time.Time, done func() bool) bool {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	lastReport := time.Now()
	for {
		if done() {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
		if r.cfg.Progress != nil && time.Since(lastReport) >= time.Second {
			lastReport = time.Now()
			r.cfg.Progress(Progress{Phase: r.phase(), Elapsed: time.Since(start), Sent: r.sent(), Received: r.received()})
		}
	}
}

func (r *run) phase() string {
	t := now()
	switch {
	case t < r.windowStart.Load():
		return "warmup"
	case t < r.windowEnd.Load():
		return "window"
	}
	return "drain"
}

// closeBound caps how long a case waits for its connections to close: a
// connection whose buffers are still draining over a slow link may take
// long, and the next case must not wait for it.
const closeBound = 15 * time.Second

// closeAll disconnects every connection in parallel (durable subscriptions
// stay), or with abort drops those that can be (driver.Aborter), and
// returns how many were still closing when closeBound ran out.
func (r *run) closeAll(ctx context.Context, abort bool) int {
	var pending atomic.Int64
	done := make(chan struct{})
	sem := make(chan struct{}, r.cfg.ConnectParallel)
	var wg sync.WaitGroup
	closeOne := func(c interface{ Close() error }) {
		pending.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			if a, ok := c.(driver.Aborter); ok && abort {
				a.Abort()
			} else {
				_ = c.Close()
			}
			<-sem
			pending.Add(-1)
		}()
	}
	for _, p := range r.pubs {
		if p != nil && p.conn != nil {
			closeOne(p.conn)
		}
	}
	for _, s := range r.subs {
		if s == nil {
			continue
		}
		if conn := s.current(); conn != nil {
			closeOne(conn)
		}
	}
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return 0
	case <-time.After(closeBoundFor(ctx)):
		return int(pending.Load())
	}
}
