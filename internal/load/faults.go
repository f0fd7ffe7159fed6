package load

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"pslab/internal/driver"
	"pslab/internal/record"
	"pslab/internal/scenario"
)

// Injector applies the faults the load engine cannot apply by itself: those
// on the link and on the broker. The lab supplies one per network and
// broker; subscriber disconnects are the engine's own.
type Injector interface {
	// Can is nil when faults of kind k can be applied here, or says why not.
	Can(k scenario.FaultKind) error
	// LinkLoss makes the link lose totalPct % of packets (100: an outage)
	// until LinkRestore.
	LinkLoss(totalPct float64) (detail string, err error)
	// LinkRestore puts the network's own profile back.
	LinkRestore() (detail string, err error)
	// BrokerKill kills the broker process, keeping its store.
	BrokerKill() error
	// BrokerRestart starts it again and returns once it accepts clients.
	BrokerRestart(ctx context.Context) error
}

// ErrNoInjector is returned for a fault schedule on a run without an
// Injector for a fault that needs one.
var ErrNoInjector = errors.New("no fault injector for this network and broker")

// checkFaults refuses a schedule the run cannot apply, before connecting.
func (r *run) checkFaults() error {
	for _, f := range r.cfg.Case.Faults {
		if f.Kind == scenario.SubscriberDisconnect {
			continue
		}
		if r.cfg.Injector == nil {
			return fmt.Errorf("%s: %w", f, ErrNoInjector)
		}
		if err := r.cfg.Injector.Can(f.Kind); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	return nil
}

// startFaults runs the schedule in the background from start (the warm-up's
// beginning); the returned wait blocks until every fault has been undone.
func (r *run) startFaults(ctx context.Context, start time.Time) (wait func()) {
	faults := r.cfg.Case.Faults
	r.faults = make([]FaultResult, len(faults))
	var wg sync.WaitGroup
	// The link's steps share one link: each is applied after the one
	// before it was undone, in the order of their start, even when a busy
	// machine makes an undo late (the step then starts late, and its
	// StartS says so). Other faults run each on their own.
	var link []int
	for i, f := range faults {
		if f.Kind == scenario.LinkOutage || f.Kind == scenario.LinkLoss {
			link = append(link, i)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.runFault(ctx, i, f, start)
		}()
	}
	sort.SliceStable(link, func(a, b int) bool { return faults[link[a]].At < faults[link[b]].At })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, i := range link {
			r.runFault(ctx, i, faults[i], start)
		}
	}()
	return wg.Wait
}

// affected lists the subscribers a fault takes away.
func (r *run) affected(f scenario.Fault) []*subState {
	if f.Kind == scenario.SubscriberDisconnect && f.Subscribers > 0 {
		return r.subs[:f.Subscribers]
	}
	return r.subs
}

func (r *run) runFault(ctx context.Context, i int, f scenario.Fault, start time.Time) {
	fr := &r.faults[i]
	fr.Fault = f
	begin := start.Add(r.cfg.Case.Warmup + f.At)
	if !sleepUntil(ctx, begin) {
		fr.Error = "not applied: run cancelled"
		return
	}
	// Every fault lasts For from when it is applied, not from its
	// schedule: begin moves to now, which on a real clock is always a
	// little after the schedule (the timer's wake-up), and after a late
	// undo of the link step before it may be much later (StartS records
	// when it was applied).
	begin = time.Now()
	subs := r.affected(f)
	fr.StartS = begin.Sub(start).Seconds()
	due0 := r.dueTo(subs)
	inj := r.cfg.Injector
	var err error
	switch f.Kind {
	case scenario.LinkOutage:
		fr.Detail, err = inj.LinkLoss(100)
	case scenario.LinkLoss:
		fr.Detail, err = inj.LinkLoss(f.LossPct)
	case scenario.BrokerRestart:
		err = inj.BrokerKill()
	case scenario.SubscriberDisconnect:
		r.dropSubscribers(subs)
	}
	if err != nil {
		r.noteErr(fmt.Errorf("fault %s: %w", f, err))
		fr.Error = err.Error()
	}
	sleepUntil(ctx, begin.Add(f.For))
	// Undo the fault even when the run was cancelled: the link and the
	// broker must be whole for whatever runs next.
	undoCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	var undoErr error
	var detail string
	switch f.Kind {
	case scenario.LinkOutage, scenario.LinkLoss:
		detail, undoErr = inj.LinkRestore()
	case scenario.BrokerRestart:
		undoErr = inj.BrokerRestart(undoCtx)
	case scenario.SubscriberDisconnect:
		fr.Reconnected, fr.ReconnectS, undoErr = r.resubscribe(undoCtx, i, subs)
		fr.NotReconnected = len(subs) - fr.Reconnected
	}
	if detail != "" {
		fr.Detail = joinDetail(fr.Detail, detail)
	}
	if undoErr != nil {
		r.noteErr(fmt.Errorf("undo fault %s: %w", f, undoErr))
		fr.Error = joinDetail(fr.Error, "undo: "+undoErr.Error())
	}
	fr.EndS = time.Since(start).Seconds()
	fr.DueWhile = r.dueTo(subs) - due0
	if f.Kind != scenario.SubscriberDisconnect {
		mark := now()
		for _, s := range r.subs {
			s.mu.Lock()
			s.marks[i] = mark
			s.mu.Unlock()
		}
	}
}

func joinDetail(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// sleepUntil waits until t; false if ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// dueTo sums the deliveries due so far to subs.
func (r *run) dueTo(subs []*subState) int64 {
	var n int64
	for _, s := range subs {
		n += r.expectedFor(s)
	}
	return n
}

// dropSubscribers disconnects subs (in parallel); durable subscriptions
// stay on the broker.
func (r *run) dropSubscribers(subs []*subState) {
	var g errgroup.Group
	g.SetLimit(r.cfg.ConnectParallel)
	for _, s := range subs {
		s.mu.Lock()
		conn := s.conn
		s.conn = nil
		s.mu.Unlock()
		if conn != nil {
			g.Go(func() error { _ = conn.Close(); return nil })
		}
	}
	_ = g.Wait()
}

// resubscribe connects subs again with their original specs and marks, per
// subscriber, when it began to come back (the start of its backlog: what
// arrives from then on of messages published before is backlog). It
// returns how many came back and the longest time one took.
func (r *run) resubscribe(ctx context.Context, i int, subs []*subState) (n int, longest float64, err error) {
	var mu sync.Mutex
	var errs []error
	var g errgroup.Group
	g.SetLimit(r.cfg.ConnectParallel)
	for _, s := range subs {
		g.Go(func() error {
			// The mark comes first: a broker may deliver the backlog
			// before Subscriber returns, and each delivery is judged
			// against the mark as it arrives.
			s.mu.Lock()
			s.marks[i] = now()
			s.mu.Unlock()
			t0 := time.Now()
			e := r.subscribe(ctx, s)
			took := time.Since(t0).Seconds()
			mu.Lock()
			defer mu.Unlock()
			if e != nil {
				errs = append(errs, e)
				return nil
			}
			n++
			longest = max(longest, took)
			// A subscriber that comes back is a new client: its first
			// connection resumes the session, or finds it gone.
			if cr, ok := s.current().(driver.ConnReporter); ok {
				if fs := cr.ConnStats().FirstSession; fs != nil {
					sessionCounts(&r.faults[i], true).Add(*fs)
				}
			}
			return nil
		})
	}
	_ = g.Wait()
	if len(errs) > 0 {
		err = fmt.Errorf("%d of %d subscribers did not come back: %w", len(errs), len(subs), errs[0])
	}
	return n, longest, err
}

// noteBacklog is called under s.mu for each new distinct delivery at t of
// a message stamped at sent: after a fault ended, a message published
// before its end is backlog.
func (s *subState) noteBacklog(sent, t int64) {
	for i, m := range s.marks {
		if m > 0 && sent < m && t >= m {
			s.backlog[i]++
			s.lastBacklog[i] = max(s.lastBacklog[i], t)
		}
	}
}

// sessionCounts is fr's count of session answers of one role.
func sessionCounts(fr *FaultResult, subscriber bool) *record.SessionCounts {
	if fr.Sessions == nil {
		fr.Sessions = &record.FaultSessions{}
	}
	if subscriber {
		return &fr.Sessions.Subscribers
	}
	return &fr.Sessions.Publishers
}

// faultResults completes the fault results at the end of a case: backlog
// and catch-up from the subscribers, reconnections (and what the broker
// said of each client's session) from the clients' own connection
// statistics (drivers that reconnect by themselves), publishers' and
// subscribers' apart.
func (r *run) faultResults(res *Result, pubs, subs []driver.ConnStats) {
	if len(r.faults) == 0 {
		res.UnexplainedOutages = res.ClientOutages // no fault explains any
		return
	}
	for i := range r.faults {
		fr := &r.faults[i]
		for _, s := range r.subs {
			s.mu.Lock()
			if s.marks[i] > 0 {
				fr.Backlog += s.backlog[i]
				if s.lastBacklog[i] > 0 {
					fr.CatchupS = max(fr.CatchupS, time.Duration(s.lastBacklog[i]-s.marks[i]).Seconds())
				}
			}
			s.mu.Unlock()
		}
	}
	// Client outages belong to the latest link or broker fault that had
	// started when the outage was noticed.
	for role, stats := range [][]driver.ConnStats{pubs, subs} {
		for _, st := range stats {
			r.assignOutages(res, st.Outages, role == 1)
		}
	}
	res.Faults = r.faults
}

// assignOutages gives each of one client's outages to its fault.
func (r *run) assignOutages(res *Result, outages []driver.Outage, subscriber bool) {
	for _, o := range outages {
		lost := o.Lost.Sub(res.Start).Seconds()
		k := -1
		for i, fr := range r.faults {
			if fr.Kind != scenario.SubscriberDisconnect && fr.StartS > 0 && fr.StartS <= lost+0.001 && (k < 0 || fr.StartS > r.faults[k].StartS) {
				k = i
			}
		}
		if k < 0 {
			res.UnexplainedOutages++
			continue
		}
		fr := &r.faults[k]
		if o.Restored.IsZero() {
			fr.NotReconnected++
			continue
		}
		fr.Reconnected++
		fr.ReconnectS = max(fr.ReconnectS, o.Restored.Sub(res.Start).Seconds()-fr.EndS)
		if o.Session != nil {
			sessionCounts(fr, subscriber).Add(*o.Session)
		}
	}
}

// pubConnStats gathers the connection statistics of every publisher whose
// driver reports them.
func (r *run) pubConnStats() []driver.ConnStats {
	var out []driver.ConnStats
	for _, p := range r.pubs {
		if cr, ok := p.conn.(driver.ConnReporter); ok {
			out = append(out, cr.ConnStats())
		}
	}
	return out
}

// subConnStats gathers the connection statistics of every subscriber
// whose driver reports them.
func (r *run) subConnStats() []driver.ConnStats {
	var out []driver.ConnStats
	for _, s := range r.subs {
		if cr, ok := s.current().(driver.ConnReporter); ok {
			out = append(out, cr.ConnStats())
		}
	}
	return out
}

// tlsResult is the TLS block of a case with tls: on: the handshakes its
// clients logged and how long each lost connection took to come back
// (stats); nil for a case without TLS.
func (r *run) tlsResult(stats []driver.ConnStats) *record.TLS {
	if !r.cs.Factors.TLS {
		return nil
	}
	hs, failed := r.cs.Handshakes.Handshakes()
	var back []float64
	for _, st := range stats {
		for _, o := range st.Outages {
			if !o.Restored.IsZero() {
				back = append(back, float64(o.Restored.Sub(o.Lost))/float64(time.Millisecond))
			}
		}
	}
	return record.TLSOf(hs, failed, back)
}
