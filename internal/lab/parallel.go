package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"pslab/internal/results"
	"pslab/internal/scenario"
	"pslab/netem"
)

// Parallel labs (pslab run --parallel N, issue 16): a case on a shaped
// link leaves the machine mostly idle, so the rows of a broker's schedule
// on such a network are shared among N labs, each with its own
// namespaces, router, link and broker instance. Each lab takes the next
// row from the one schedule, so sequential repetitions and the order work
// as alone; a row's repetitions still run one after the other. Wireline is
// CPU-bound and always runs in one lab.

// parallelLabName is the name of lab i (1-based) of a run in lab labName:
// netem names allow no '-', so "pslab" gives "pslabp1", "pslabp2", ...
func parallelLabName(labName string, i int) string {
	if labName == "" {
		labName = "pslab"
	}
	return fmt.Sprintf("%sp%d", labName, i)
}

// checkParallel refuses --parallel where it cannot work: one external
// broker cannot be N broker instances, and every lab's name must be a
// valid lab name.
func (p Plan) checkParallel(o Options) error {
	if o.Parallel < 0 {
		return fmt.Errorf("--parallel must be at least 1, got %d", o.Parallel)
	}
	if o.Parallel <= 1 {
		return nil
	}
	if len(o.URLs) > 0 || o.BrokerPID != 0 {
		return fmt.Errorf("--parallel (or parallel:) %d needs a broker instance per lab, and --url/--broker-pid give one running broker; run with --parallel 1", o.Parallel)
	}
	for i := 1; i <= o.Parallel; i++ {
		if err := netem.CheckOptions(netem.Options{Prefix: parallelLabName(o.LabName, i)}); err != nil {
			return fmt.Errorf("--parallel (or parallel:) %d with --lab %s: lab %d: %w (use a shorter --lab)", o.Parallel, o.LabName, i, err)
		}
	}
	return nil
}

// labsFor is the number of labs network name runs in: o.Parallel on a
// shaped network, else one.
func labsFor(o Options, name string) int {
	if o.Parallel <= 1 {
		return 1
	}
	spec, err := loadNetwork(name)
	if err != nil || !spec.shaped() {
		return 1
	}
	return o.Parallel
}

// labsByNetwork is labsFor by profile name, for the progress estimate.
func (p Plan) labsByNetwork(o Options) map[string]int {
	m := map[string]int{}
	for _, n := range p.Networks {
		if spec, err := loadNetwork(n); err == nil {
			m[spec.recordName()] = labsFor(o, n)
		}
	}
	return m
}

// parallelNotes say which networks run in several labs and which alone.
func (p Plan) parallelNotes(o Options) []string {
	if o.Parallel <= 1 {
		return nil
	}
	var notes []string
	for _, n := range p.Networks {
		if k := labsFor(o, n); k > 1 {
			notes = append(notes, fmt.Sprintf("network %s: cases run in %d labs at once (%s)", n, k, parallelLabName(o.LabName, 1)+".."+parallelLabName(o.LabName, k)))
		} else {
			notes = append(notes, fmt.Sprintf("network %s is not shaped (CPU-bound): its cases run in one lab, alone", n))
		}
	}
	return notes
}

// runParallel runs every broker of the plan on network netName in k labs
// at once: the labs are set up and verified one after the other, then for
// each broker k workers share its schedule.
func (lr *labRun) runParallel(ctx context.Context, netName string, k int) error {
	log := lr.o.Log
	lr.o.Log = &lockedWriter{w: log} // the labs' lines, whole, one at a time
	var nws []*network
	defer func() {
		lr.o.Log = log
		for _, nw := range nws {
			nw.close()
		}
	}()
	for i := 1; i <= k; i++ {
		name := parallelLabName(lr.o.LabName, i)
		fmt.Fprintf(lr.o.Log, "lab %s (%d of %d):\n", name, i, k)
		nw, err := openNetwork(ctx, netName, name, throughLab, 0, remoteBrokers{}, lr.o.TCPCongestion, lr.o.Log)
		if err != nil {
			return fmt.Errorf("network %s: lab %s: %w", netName, name, err)
		}
		nws = append(nws, nw)
	}
	for _, bName := range lr.p.Brokers {
		if err := lr.runBrokerParallel(ctx, nws, bName); err != nil {
			return fmt.Errorf("broker %s on %s: %w", bName, netName, err)
		}
	}
	return nil
}

// runBrokerParallel runs broker bName's schedule on network nws[0]'s
// profile with one worker per lab; the first error stops the others after
// their case in flight (which is recorded as usual) and is returned.
func (lr *labRun) runBrokerParallel(ctx context.Context, nws []*network, bName string) error {
	net := nws[0].profile.Name
	sh := &sharedSchedule{s: newSchedule(lr.p, lr.o, bName, net, lr.o.Seed)}
	sh.cond = sync.NewCond(&sh.mu)
	sh.s.onNetwork(nws[0])
	lr.pr.begin(net, bName, sh.s)
	defer lr.pr.end()
	if least, _ := sh.s.remaining(); least == 0 {
		fmt.Fprintf(lr.o.Log, "%s on %s: every repetition finished (resumed run)\n", bName, net)
		return nil
	}
	errs := make([]error, len(nws))
	var wg, started sync.WaitGroup
	started.Add(len(nws))
	for i, nw := range nws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = lr.labWorker(ctx, sh, nw, bName, len(nws), &started)
			if errs[i] != nil {
				sh.stop()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return ctx.Err()
}

// labWorker starts broker bName in the lab of nw and runs rows taken from
// the shared schedule until it has none left. No lab measures before
// every lab's broker has started (and run its warm-up case, if asked):
// brokers starting beside a measurement disturbed it (four Artemis JVMs
// starting at once took 97 % of a 2-core machine, results/parallel-check).
func (lr *labRun) labWorker(ctx context.Context, sh *sharedSchedule, nw *network, bName string, labs int, started *sync.WaitGroup) error {
	wl := *lr // this lab's broker instance is named after the lab
	wl.o.LabName = nw.lab.Prefix()
	s, stop, err := wl.startSession(ctx, nw, bName)
	if err != nil {
		started.Done()
		return fmt.Errorf("lab %s: %w", wl.o.LabName, err)
	}
	defer stop()
	if lr.o.WarmupRun {
		warmUp(ctx, wl.o, s.drv, lr.p, bName, lr.runID)
	}
	started.Done()
	started.Wait()
	if err := sh.sameConfig(lr, bName, nw.name(), s.config); err != nil {
		return fmt.Errorf("lab %s: %w", wl.o.LabName, err)
	}
	for {
		r, rep, order, c, judge := sh.take(ctx)
		if r == nil { // done, stopped, or ctx ended (runBrokerParallel says so once)
			return nil
		}
		rec, err := lr.runRepetition(ctx, s, c, rep, order)
		if err != nil || rec == nil { // a dead broker, or interrupted before measuring
			sh.giveBack(r)
			if err != nil {
				return fmt.Errorf("lab %s: %w", wl.o.LabName, err)
			}
			return nil
		}
		rec.Settings.ConcurrentLabs, rec.Network.Lab = labs, wl.o.LabName
		if judge != nil {
			judge(rec)
		}
		if err := sh.finish(r, rec, func() error { return lr.record(rec, nw.name()) }); err != nil {
			return err
		}
	}
}

// sharedSchedule is a schedule taken from by several labs at once: one
// lock covers the schedule, the rows, the bundle, the summary and the
// progress.
type sharedSchedule struct {
	mu      sync.Mutex
	cond    *sync.Cond
	s       *schedule
	stopped bool // a lab failed: the others take no more rows
	// config is the broker configuration of the first lab that started;
	// every lab must run the same (identity.go).
	config    string
	configSet bool
}

// take returns the next row, its repetition number, its place in the
// order and what it runs (its case and the judge of its record, as
// schedule.runFor), reserved for the caller, or nil when every row is
// done (or ctx ended, or a lab failed). While the only rows short of their
// target have a run in flight it waits for a run to finish: that run
// decides whether they need another.
func (sh *sharedSchedule) take(ctx context.Context) (*row, int, *results.Order, scenario.Case, func(*results.Record)) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for ctx.Err() == nil && !sh.stopped {
		r, order := sh.s.next()
		if r != nil {
			rep := r.nextRep()
			r.used[rep] = true
			r.inflight++
			c, judge := sh.s.runFor(r)
			return r, rep, order, c, judge
		}
		if !sh.anyInFlight() {
			return nil, 0, nil, scenario.Case{}, nil
		}
		sh.cond.Wait()
	}
	return nil, 0, nil, scenario.Case{}, nil
}

func (sh *sharedSchedule) anyInFlight() bool {
	for _, r := range sh.s.rows {
		if r.inflight > 0 {
			return true
		}
	}
	return false
}

// finish counts a taken row's record and writes it (write, under the lock).
func (sh *sharedSchedule) finish(r *row, rec *results.Record, write func() error) error {
	sh.mu.Lock()
	defer func() { sh.cond.Broadcast(); sh.mu.Unlock() }()
	r.inflight--
	r.add(rec) // first, so that the progress line counts it
	return write()
}

// giveBack returns a taken row that was not run.
func (sh *sharedSchedule) giveBack(r *row) {
	sh.mu.Lock()
	defer func() { sh.cond.Broadcast(); sh.mu.Unlock() }()
	r.inflight--
}

// stop makes take return nil to every lab (one of them failed).
func (sh *sharedSchedule) stop() {
	sh.mu.Lock()
	sh.stopped = true
	sh.cond.Broadcast()
	sh.mu.Unlock()
}

// lockedWriter lets several labs write to one log.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
