package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"pslab/internal/audit"
	"pslab/internal/broker"
	"pslab/internal/driver"
	"pslab/internal/load"
	"pslab/internal/metrics"
	"pslab/internal/results"
	"pslab/internal/scenario"
	"pslab/netem"
)

// session is one broker running on one network during a run: what every
// case run on it shares.
type session struct {
	o     Options
	p     Plan
	runID string
	nw    *network
	desc  brokerDesc
	b     broker.Broker
	drv   driver.Driver
	// pubDrv: on a network with a link per role, the publishers' driver
	// (dialing from their link's namespace; drv the subscribers'); nil
	// otherwise.
	pubDrv driver.Driver
	// config is the broker's effective configuration hash (identity.go).
	config string
}

// brokerDesc is what a session needs of a broker's registry descriptor.
type brokerDesc struct {
	// simulated: the broker measures nothing (the fake); its records are
	// flagged.
	simulated bool
}

// caseRun is one repetition of one case: runCase's steps share it, and
// each fills in its part of the record.
type caseRun struct {
	*session
	c      scenario.Case
	prefix string
	rec    *results.Record

	unshaped      bool              // connections are set up with the link's shaping lifted
	reshaped      bool              // and it was put back
	before        []*netem.Counters // link counters at the start of the measured part, per link
	sampler       *metrics.ProcSampler
	interval      time.Duration // between resource samples
	samplingStart time.Time
	samples       map[string][]metrics.ProcSample
	cfg           load.Config
	res           *load.Result
	loadErr       error // what ended load.Run early, reported after the teardown
}

// step is one named part of a case run. A step that returns an error ends
// the case: the error goes into the record.
type step struct {
	name string
	run  func(ctx context.Context) error
}

// steps are runCase's parts in order.
func (cr *caseRun) steps() []step {
	return []step{
		{"wait for an idle link", cr.waitIdle},
		{"wait for a quiet machine", cr.waitQuiet},
		{"purge before", cr.purgeBefore},
		{"lift the shaping for set-up", cr.liftShaping},
		{"run the load", cr.runLoad},
		{"tear down", cr.tearDown},
		{"load outcome", cr.loadOutcome},
		{"measure", cr.measure},
	}
}

// runCase runs one repetition of one case and builds its record; nil when
// the run was interrupted before the case measured anything (interrupt.go).
func (s *session) runCase(ctx context.Context, c scenario.Case, rep int) *results.Record {
	cr := s.newCaseRun(c, rep)
	for _, st := range cr.steps() {
		if err := st.run(ctx); err != nil {
			if errors.Is(err, errNotMeasured) {
				return nil
			}
			cr.rec.Error = err.Error()
			break
		}
	}
	return cr.rec
}

// newCaseRun starts the record: what the case is, where and on what.
func (s *session) newCaseRun(c scenario.Case, rep int) *caseRun {
	c.PublishWindow = s.nw.publishWindow(c, s.drv) // recorded as used
	c.DeliveryWindow, c.AckWait = s.nw.deliveryFlow(c, s.drv)
	rec := &results.Record{
		Schema: results.SchemaVersion, RunID: s.runID, Suite: s.p.Suite.Name, File: s.p.Suite.File,
		CaseID: c.ID, Name: c.Name, Rep: rep, Quick: s.o.Quick, Mode: results.ModePaper,
		Broker: s.drv.Name(), BrokerVersion: s.b.Version(), BrokerSettings: s.b.Settings(), BrokerConfig: s.config,
		Mechanism: s.drv.Mechanism(c.Factors), Factors: c.Factors, FullFactors: c.Full, Settings: results.SettingsOf(c),
		Paper: c.Paper, Note: c.Note, Varied: scenario.Strings(c.Varied), Versions: versions(s.b), Started: time.Now(),
		Seed: s.o.Seed + int64(rep), Network: s.nw.record(), Phases: &results.Phases{}, LatencyFloor: s.o.floor,
	}
	if s.p.CITarget > 0 {
		rec.Settings.Stopping = results.NewStopping(s.p.CITarget, s.p.Reps, s.p.maxReps())
	}
	fm := ""
	if d, ok := s.drv.(driver.FilterMechanism); ok {
		fm = d.FilterMechanism(c.Factors)
	}
	rec.Filter = results.FilterInfoOf(c.Factors, fm)
	if s.desc.simulated {
		rec.Flags = append(rec.Flags, results.NewFlag(results.FlagSimulated, "broker %s is an in-memory fake: nothing here measures a broker", rec.Broker))
	}
	return &caseRun{session: s, c: c, rec: rec,
		prefix: CasePrefix(s.runID, c.ID, rep)}
}

func (cr *caseRun) flag(name results.FlagName, format string, a ...any) {
	cr.rec.Flags = append(cr.rec.Flags, results.NewFlag(name, format, a...))
}

// waitIdle waits until the link no longer carries the previous case's
// traffic (flagged when it still does after the bound).
func (cr *caseRun) waitIdle(ctx context.Context) error {
	waited, quiet := cr.nw.waitIdle(ctx)
	cr.rec.Phases.IdleWaitS = waited.Seconds()
	if !quiet {
		cr.flag(results.FlagLinkBusy, "the link still carried traffic of the previous case after %.0f s", waited.Seconds())
	}
	return nil
}

// purgeBefore removes everything earlier cases left on the broker. A
// broker that does not answer its administration any more (seen: an
// Artemis 2.44 deadlock in deleteAddress while it tore down an aborted
// STOMP connection, docs/artemis.md) would fail every later case: it is
// restarted, and what its store kept is purged.
func (cr *caseRun) purgeBefore(ctx context.Context) error {
	start := time.Now()
	defer func() { cr.rec.Phases.PurgeS = time.Since(start).Seconds() }()
	err := purgeRetrying(ctx, cr.drv, "pslab-")
	if ctx.Err() != nil {
		return errNotMeasured
	}
	if err != nil {
		flag, rerr := restartBroker(ctx, cr.b, cr.o.Log, fmt.Errorf("stopped answering (purge: %w)", err))
		if rerr == nil {
			cr.rec.Flags = append(cr.rec.Flags, flag)
			err = purgeRetrying(ctx, cr.drv, "pslab-")
		}
	}
	if err != nil {
		return fmt.Errorf("purge: %w", err)
	}
	return nil
}

// liftShaping takes the link's shaping off for connection set-up when the
// case asks for it (connect_unshaped); otherwise it takes the link's
// counters at the start. With an unshaped set-up the counters restart
// when the shaping is put back (load.Config.Connected, in runLoad).
func (cr *caseRun) liftShaping(context.Context) error {
	cr.unshaped = cr.c.ConnectUnshaped && cr.nw.shapedLink()
	if !cr.unshaped {
		cr.before = cr.nw.snapshot()
		return nil
	}
	if err := cr.nw.unshape(); err != nil {
		msg := "lift the link's shaping for connection set-up: " + err.Error()
		if rerr := cr.nw.reshape(); rerr != nil {
			msg += "; put it back: " + rerr.Error()
		}
		return fmt.Errorf("%s", msg)
	}
	return nil
}

// startSampling samples the CPU and memory of the client (this process)
// and of the broker's process while the load runs.
func (cr *caseRun) startSampling(ctx context.Context) (stop func()) {
	cr.interval = time.Second
	if cr.c.Window < 5*time.Second {
		cr.interval = cr.c.Window / 5
	}
	cr.sampler = metrics.NewProcSampler(cr.interval)
	cr.sampler.Watch("client", os.Getpid())
	cr.sampler.Watch("machine", metrics.MachinePID)
	if pid := cr.b.PID(); pid > 0 {
		cr.sampler.Watch("broker", pid)
	} else if pid := cr.o.brokerProcess(cr.drv.Name()); pid > 0 { // a broker container: its process
		cr.sampler.Watch("broker", pid)
	}
	sctx, cancel := context.WithCancel(ctx)
	cr.samplingStart = time.Now()
	cr.sampler.Start(sctx)
	return cancel
}

// loadConfig is the load engine's configuration of the case.
func (cr *caseRun) loadConfig() load.Config {
	cfg := load.Config{Case: cr.c, Prefix: cr.prefix, Driver: cr.drv, PubDriver: cr.pubDrv, Seed: cr.rec.Seed,
		Injector: injector{nw: cr.nw, b: cr.b, sampler: cr.sampler},
		// On the emulated link a graceful close waits behind the queued data
		// and the purge in tearDown removes everything anyway: drop instead.
		AbortAtEnd: cr.nw.shaped(), LinkBitsPerSec: cr.nw.linkBits()}
	if cr.unshaped {
		cfg.Connected = func() error {
			t := time.Now()
			err := cr.nw.reshape()
			cr.reshaped = err == nil
			cr.rec.Phases.ReshapeS = time.Since(t).Seconds()
			cr.before = cr.nw.snapshot()
			return err
		}
	}
	if cr.o.Verbose {
		cfg.Progress = func(pr load.Progress) {
			fmt.Fprintf(cr.o.Log, "    %-6s %5.1fs sent %d received %d\n", pr.Phase, pr.Elapsed.Seconds(), pr.Sent, pr.Received)
		}
	}
	return cfg
}

// runLoad runs the case's load while sampling resources. Its error is
// kept for after the teardown (loadErr): the broker is cleaned up either
// way.
func (cr *caseRun) runLoad(ctx context.Context) error {
	stopSampling := cr.startSampling(ctx)
	cr.cfg = cr.loadConfig()
	cr.res, cr.loadErr = load.Run(ctx, cr.cfg)
	if cr.retryConnect(ctx) {
		cr.res, cr.loadErr = load.Run(ctx, cr.cfg)
	}
	if cr.unshaped && !cr.reshaped {
		// A set-up that failed left the link unshaped: the next case must
		// not start on it.
		if rerr := cr.nw.reshape(); rerr != nil && cr.loadErr == nil {
			cr.loadErr = fmt.Errorf("put the link's shaping back: %w", rerr)
		}
	}
	stopSampling()
	cr.samples = cr.sampler.Stop()
	cr.rec.WallS = time.Since(cr.rec.Started).Seconds()
	cr.nw.recordLinks(&cr.rec.Network, cr.before)
	return nil
}

// retryConnect reports whether the case runs again after its clients
// failed to connect (load.ConnectError): once, and only when what the
// failed attempt left is gone. Nothing was measured yet; on the lossy link
// a set-up fails now and then for reasons no set-up timeout covers (a
// broker container's early PING, internal/brokers/nats). The record is
// flagged with the first attempt's error.
func (cr *caseRun) retryConnect(ctx context.Context) bool {
	var ce *load.ConnectError
	if !errors.As(cr.loadErr, &ce) || ctx.Err() != nil {
		return false
	}
	if _, rerr, perr := cr.dropLeftovers(ctx); rerr != nil || perr != nil {
		cr.loadErr = fmt.Errorf("%w; clearing it for another try: %w", cr.loadErr, errors.Join(rerr, perr))
		return false
	}
	cr.flag(results.FlagConnectRetried, "%v", ce)
	if !cr.unshaped {
		// The link's counters restart with the second attempt (with an
		// unshaped set-up, which the failed attempt left unshaped, they
		// restart when the shaping is put back).
		cr.before = cr.nw.snapshot()
	}
	return true
}

// tearDown removes what the case left (dropLeftovers). A failed purge here
// does not spoil what was measured: it is flagged, and the next case's
// purge (which must succeed) retries it.
func (cr *caseRun) tearDown(ctx context.Context) error {
	n, rerr, perr := cr.dropLeftovers(ctx)
	cr.rec.Phases.LeftoverSockets = n
	if rerr != nil {
		cr.flag(results.FlagResetFailed, "%v", rerr)
	}
	if perr != nil {
		cr.flag(results.FlagPurgeAfterFailed, "%v", perr)
	}
	return nil
}

// dropLeftovers removes what a run of the case left: first, where the
// connections were dropped, the sockets they left on the broker, so that
// the broker has torn those connections down before the purge deletes
// their addresses (Artemis 2.44 can deadlock when a deleteAddress
// disconnects a consumer whose connection is failing at that moment,
// docs/artemis.md), then the case's names. It returns how many sockets it
// destroyed, and why either part failed.
func (cr *caseRun) dropLeftovers(ctx context.Context) (sockets int, resetErr, purgeErr error) {
	if cr.cfg.AbortAtEnd {
		sockets, resetErr = cr.nw.resetConnections()
		if sockets > 0 {
			time.Sleep(teardownSettle)
		}
	}
	start := time.Now()
	pctx, cancel := cleanupContext(ctx)
	purgeErr = cr.drv.Purge(pctx, cr.prefix)
	cancel()
	cr.rec.Phases.PurgeAfterS = time.Since(start).Seconds()
	return sockets, resetErr, purgeErr
}

// loadOutcome ends the case with what ended the load early: no record
// when that was the run's interruption (connecting: nothing measured).
func (cr *caseRun) loadOutcome(ctx context.Context) error {
	if cr.loadErr != nil && ctx.Err() != nil {
		return errNotMeasured
	}
	return cr.loadErr
}

// measure puts what the load measured into the record: counts, the audit
// of the delivery promises, resources over the window, throughput, and
// the flags on numbers not to take at face value.
func (cr *caseRun) measure(context.Context) error {
	rec, res := cr.rec, cr.res
	rec.Result = res
	if t := res.TLS; t != nil && t.Version != "" { // what was negotiated, in the mechanism's words
		rec.Mechanism += fmt.Sprintf(" (negotiated: %s, %s)", t.Version, t.Cipher)
	}
	if res.Interrupted == nil { // an interrupted case promised nothing
		rec.Audit = audit.Evaluate(cr.c.Factors, res)
	} else {
		rec.Flags = append(rec.Flags, interruptedFlag(rec))
	}
	// Resources over the window only: from the end of the warm-up to the
	// end of the window, relative to the sampler's start.
	ws := res.Start.Sub(cr.samplingStart) + time.Duration(res.WarmupS*float64(time.Second))
	rec.Resources = withOtherLoad(resourcesOf(cr.samples, ws.Seconds(), (ws + cr.c.Window).Seconds(), cr.interval.Seconds()))
	cr.o.iso.annotate(rec.Resources, cr.b.PID() > 0 || cr.o.BrokerPID > 0)
	rec.Throughput = results.ThroughputOf(rec)
	rec.Flags = append(rec.Flags, flagsFor(rec)...)
	return nil
}
