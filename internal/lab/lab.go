// Package lab runs suites: for each network profile it sets up the link,
// for each broker it starts the broker and opens its driver, and for each
// case and repetition it purges the broker, runs the load, samples
// resources and appends a result record to the run bundle.
package lab

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"pslab/internal/broker"
	"pslab/internal/brokers"
	"pslab/internal/buildid"
	"pslab/internal/cpuset"
	"pslab/internal/driver"
	"pslab/internal/load"
	"pslab/internal/metrics"
	"pslab/internal/results"
	"pslab/internal/scenario"
	"pslab/netem"
)

// Options select what to run and where results go.
type Options struct {
	Brokers  []string // empty: the suite's
	Networks []string // empty: the suite's
	Cases    func(id string) bool
	Reps     int // 0: the suite's
	Quick    bool
	Out      string // bundle directory
	Seed     int64
	Log      io.Writer // progress lines
	// Verbose progress: a line per second while a case runs.
	Verbose bool
	// LabName prefixes the lab's namespaces, interfaces and nft table
	// (default "pslab"); two runs at once need different names.
	LabName string
	// CITarget, when positive, repeats each case beyond Reps until the 95 %
	// confidence half-widths of subscriber throughput and of mean latency
	// are within this fraction of the mean (e.g. 0.05), or MaxReps is
	// reached. 0: the suite's `ci:`; MaxReps 0: the suite's `max_reps:`,
	// else 10.
	CITarget float64
	MaxReps  int
	// Finished are the finished records of an interrupted run being
	// resumed: their repetitions are not run again.
	Finished []results.Record
	// BrokerPID, with URLs, puts the broker side of the emulated link in the
	// network namespace of that process (a broker container), so external
	// brokers can be measured over every network profile.
	BrokerPID int
	// BrokerPIDs, with BrokerPID, are the broker containers' own processes
	// by broker name, sampled for the broker's CPU and memory.
	BrokerPIDs map[string]int
	// URLs of external brokers by name (nats, artemis): pslab then uses
	// that broker instead of starting its own, on the host network.
	URLs map[string]string
	// WarmupRun runs each broker's first case once, unrecorded, before
	// the recorded runs (a just-started JVM broker is slow at first).
	WarmupRun bool
	// Registry holds the brokers the run may use (nil: every broker
	// pslab has, brokers.Default).
	Registry *brokers.Registry
	// CPUs puts the broker and the clients on disjoint CPU sets (the zero
	// Plan: off); see package cpuset and lab/cpus.go.
	CPUs cpuset.Plan
	// TCPCongestion, when not empty, is the TCP congestion control set in
	// the lab's namespaces (both ends of every connection); records carry
	// it either way (network.tcp_congestion). Needs the lab: refused for
	// loopback, in-memory and external brokers.
	TCPCongestion string
	iso           *isolation // CPUs in force, set by Run
	// SkipUnsupported leaves out, with a note each, the cases a broker
	// cannot express (its descriptor's Supports refuses them) instead of
	// refusing the whole run.
	SkipUnsupported bool
	// Parallel, above 1, runs the cases of each shaped network in that
	// many labs at once (parallel.go); wireline always runs in one. 0:
	// the suite's `parallel:`, else 1. Run uses the plan's.
	Parallel int
	// Policy, when set, decides each row's runs instead of repetitions
	// (policy.go; pslab capacity); its records carry the latency floor
	// measured at the run's start (floor).
	Policy RowPolicy
	floor  *results.LatencyFloor
	// QuietWait, when positive, makes each case run on an unshaped path
	// wait, at most this long, until processes outside the run use less
	// of the machine than the machine-busy flag allows (quiet.go).
	QuietWait time.Duration
	// ForceMixed counts the Finished records of another pslab build or
	// broker configuration toward their rows (resume --force); otherwise
	// they are set aside and their rows start over (identity.go).
	ForceMixed bool
	aside      []results.Record // finished records set aside: their repetition numbers stay taken
}

// Plan is the expanded work of a run, for progress and validation.
type Plan struct {
	Suite    *scenario.Suite
	Brokers  []string
	Networks []string
	Cases    []scenario.Case
	Reps     int
	Notes    []string // what was left out and why, warnings (said before running)
	// CITarget and MaxReps: the sequential-repetition rule (flags over the
	// suite's `ci:` and `max_reps:`).
	CITarget float64
	MaxReps  int
	remote   remoteBrokers
	// Parallel: labs per shaped network (--parallel over the suite's
	// `parallel:`; 0 or 1: one).
	Parallel int
}

// Units is the number of case runs (case x broker x network x rep; a case
// restricted to some brokers counts on those only).
func (p Plan) Units() int {
	n := 0
	for _, c := range p.Cases {
		for _, b := range p.Brokers {
			if c.ForBroker(b) {
				n++
			}
		}
	}
	return n * len(p.Networks) * p.Reps
}

// MakePlan resolves options against a suite and checks everything that can
// be checked before running: broker names, network names, case filter, and
// that each broker driver can express each case. Errors are bad input.
func MakePlan(s *scenario.Suite, o Options) (Plan, error) {
	p := Plan{Suite: s, Brokers: s.Brokers, Networks: s.Networks, Reps: s.Reps}
	if len(o.Brokers) > 0 {
		p.Brokers = o.Brokers
	}
	if len(o.Networks) > 0 {
		p.Networks = o.Networks
	}
	if o.Reps > 0 {
		p.Reps = o.Reps
	}
	reg := o.registry()
	p.CITarget, p.MaxReps = s.RepsRule.CI, s.RepsRule.MaxReps
	if o.CITarget > 0 {
		p.CITarget = o.CITarget
	}
	if o.MaxReps > 0 {
		p.MaxReps = o.MaxReps
	}
	problems := checkNames(s, o, p.Brokers, p.Networks)
	problems = append(problems, p.checkRepsRule(o)...)
	problems = append(problems, checkURLSchemes(reg, o.URLs)...)
	if len(problems) > 0 {
		return p, fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	p.Parallel, o.Parallel = s.Parallel, max(o.Parallel, 0)
	if o.Parallel > 0 {
		p.Parallel = o.Parallel
	}
	o.Parallel = p.Parallel
	if err := p.checkParallel(o); err != nil {
		return p, err
	}
	for name, u := range o.URLs {
		if _, err := reg.Get(name); err != nil {
			return p, fmt.Errorf("--url %s=%s: %w", name, broker.Redact(u), err)
		}
		ext, err := broker.NewExternal(name, u)
		if err != nil {
			return p, err
		}
		if o.BrokerPID == 0 { // through the lab, it is checked once the link is up
			if err := reg.CheckLogin(context.Background(), ext); err != nil {
				return p, err
			}
		}
		if o.BrokerPID == 0 {
			if open, detail, err := reg.OpenAccess(context.Background(), ext); err == nil && open {
				p.Notes = append(p.Notes, fmt.Sprintf("WARNING: %s at %s lets clients in without credentials (%s): anyone who can reach it can publish and subscribe", name, broker.Redact(u), detail))
			}
		} else if !ext.HasCredentials() {
			p.Notes = append(p.Notes, fmt.Sprintf("warning: %s at %s: no credentials in the URL; if it accepts that, it is open to anyone who can reach it", name, broker.Redact(u)))
		}
	}
	remoteErr := p.planRemote(o)
	if err := netem.CheckOptions(netem.Options{Prefix: o.LabName, BrokerPID: o.BrokerPID, TCPCongestion: o.TCPCongestion}); err != nil {
		return p, err
	}
	if err := p.checkCongestionControl(o); err != nil {
		return p, err
	}
	if o.BrokerPID != 0 {
		if len(o.URLs) == 0 {
			return p, fmt.Errorf("--broker-pid needs --url NAME=URL for the broker in that namespace (at %s)", "10.77.2.2")
		}
		if err := netem.CheckBrokerPID(o.BrokerPID); err != nil {
			return p, err
		}
	}
	var nets []string
	for _, n := range p.Networks {
		spec, err := loadNetwork(n)
		if err != nil {
			return p, err
		}
		if spec.shaped() || spec.perRole {
			if err := p.simulatedOnShaped(o, n); err != nil {
				return p, err
			}
		}
		if spec.shaped() && remoteErr != nil {
			return p, fmt.Errorf("network %s: the link to an external broker (--url) cannot be emulated: %w; for a broker on this machine, give the PID of a process in its network namespace (--broker-pid, e.g. a container's)", n, remoteErr)
		}
		if spec.shaped() || spec.perRole {
			if err := netem.Supported(); err != nil {
				p.Notes = append(p.Notes, fmt.Sprintf("network %s skipped: link emulation needs root and network namespaces (%v)", n, err))
				continue
			}
			for _, prof := range spec.profiles() { // as `pslab netem up` refuses them, before anything
				if err := netem.CheckProfile(prof); err != nil {
					return p, fmt.Errorf("network %s: %w", n, err)
				}
			}
		}
		nets = append(nets, n)
	}
	if len(nets) == 0 {
		return p, fmt.Errorf("no network can run here: %s", strings.Join(p.Notes, "; "))
	}
	p.Networks = nets
	p.Notes = append(p.Notes, p.parallelNotes(o)...)
	for _, c := range s.Cases {
		if o.Cases == nil || o.Cases(c.ID) {
			p.Cases = append(p.Cases, c)
		}
	}
	if len(p.Cases) == 0 {
		return p, fmt.Errorf("no case of %s matches the --cases filter", s.File)
	}
	for _, c := range p.Cases {
		for _, b := range c.Brokers {
			if _, err := reg.Get(b); err != nil {
				problems = append(problems, fmt.Sprintf("%s: case %s: brokers: %v", c.Where(), c.ID, err))
			}
		}
	}
	refused := map[int]map[string]bool{} // with SkipUnsupported: case index -> brokers
	for _, b := range p.Brokers {
		k, _ := reg.Lookup(b)
		for i, c := range p.Cases {
			if !c.ForBroker(b) {
				continue
			}
			err := k.Supports(c.Factors)
			if err == nil {
				err = o.tlsRefusal(c.Factors, b)
			}
			if err != nil {
				if o.SkipUnsupported {
					if refused[i] == nil {
						refused[i] = map[string]bool{}
					}
					refused[i][b] = true
					p.Notes = append(p.Notes, fmt.Sprintf("case %s not run on %s: %v", c.ID, b, err))
					continue
				}
				problems = append(problems, fmt.Sprintf("%s: case %s on %s: %v", c.Where(), c.ID, b, err))
			}
		}
	}
	p.Cases = p.withoutRefused(refused)
	problems = append(problems, checkLimits(p, o)...)
	if len(problems) > 0 {
		return p, fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	if p.Units() == 0 {
		return p, fmt.Errorf("no case of %s runs on %s (see the cases' brokers:)", s.File, strings.Join(p.Brokers, ", "))
	}
	p.Notes = append(p.Notes, p.quickShapedNotes(o.Quick)...)
	return p, nil
}

// withoutRefused is the plan's cases, each restricted to the brokers
// that did not refuse it (refused: by case index), and without those no
// broker runs.
func (p Plan) withoutRefused(refused map[int]map[string]bool) []scenario.Case {
	if len(refused) == 0 {
		return p.Cases
	}
	var out []scenario.Case
	for i, c := range p.Cases {
		if refused[i] == nil {
			out = append(out, c)
			continue
		}
		var keep []string
		for _, b := range p.Brokers {
			if c.ForBroker(b) && !refused[i][b] {
				keep = append(keep, b)
			}
		}
		if len(keep) > 0 {
			c.Brokers = keep
			out = append(out, c)
		}
	}
	return out
}

// Summary is what a run did, for the table printed at the end.
type Summary struct {
	Bundle  string
	Records []results.Record
	Failed  int
	// Interrupted counts records of cases cut short by the interruption
	// (neither results nor failures).
	Interrupted int
	Wall        time.Duration
}

// Run executes a plan. It returns an error only when the run could not go
// on (a broker or network that could not be set up); failed cases are
// recorded with their error and counted in Summary.Failed.
func Run(ctx context.Context, p Plan, o Options) (*Summary, error) {
	log := o.Log
	if log == nil {
		log = io.Discard
		o.Log = log
	}
	var err error
	if o.iso, err = isolate(o.CPUs, o.BrokerPID, log); err != nil {
		return nil, err
	}
	defer o.iso.end()
	bundle, err := results.Create(o.Out)
	if err != nil {
		return nil, err
	}
	defer bundle.Close()
	removeLeftovers(log)
	if o.Policy != nil {
		o.floor = measureFloor(log)
	}
	if o.Finished, o.aside, err = setAsideOtherBuilds(bundle, o, log); err != nil {
		return nil, err
	}
	o.Parallel = p.Parallel // the plan's: the flag over the file's
	start := time.Now()
	lr := &labRun{p: p, o: o, bundle: bundle, runID: newRunID(), sum: &Summary{Bundle: o.Out},
		pr: newProgress(p, profileNames(p.Networks), start)}
	lr.pr.labs, lr.pr.quick = p.labsByNetwork(o), o.Quick
	lr.pr.policy = o.Policy
	sum := lr.sum
	defer func() { sum.Wall = time.Since(start) }()
	for _, netName := range p.Networks {
		if k := labsFor(o, netName); k > 1 {
			if err := lr.runParallel(ctx, netName, k); err != nil {
				return sum, err
			}
			continue
		}
		nw, err := openNetwork(ctx, netName, o.LabName, p.hostUse(o), o.BrokerPID, p.remote, o.TCPCongestion, log)
		if err != nil {
			return sum, fmt.Errorf("network %s: %w", netName, err)
		}
		for _, bName := range p.Brokers {
			err := lr.runBroker(ctx, nw, bName)
			if err != nil {
				nw.close()
				return sum, fmt.Errorf("broker %s on %s: %w", bName, netName, err)
			}
		}
		nw.close()
	}
	return sum, nil
}

// labRun is one Run: the plan, where records go, and how far it got.
type labRun struct {
	p      Plan
	o      Options
	bundle *results.Bundle
	runID  string
	pr     *progress // case runs done and the ETA
	sum    *Summary
}

// runBroker starts broker bName on nw and runs its share of the plan's
// schedule on it: every case until enough repetitions (reps.go), in the
// schedule's order.
func (lr *labRun) runBroker(ctx context.Context, nw *network, bName string) error {
	p, o := lr.p, lr.o
	sched := newSchedule(p, o, bName, nw.name(), o.Seed)
	lr.pr.begin(nw.name(), bName, sched)
	defer lr.pr.end()
	if least, _ := sched.remaining(); least == 0 {
		fmt.Fprintf(o.Log, "%s on %s: every repetition finished (resumed run)\n", bName, nw.name())
		return nil
	}
	s, stop, err := lr.startSession(ctx, nw, bName)
	if err != nil {
		return err
	}
	defer stop()
	sched.onNetwork(nw)
	if err := lr.setAsideOtherConfigs(sched, bName, nw.name(), s.config); err != nil {
		return err
	}
	if o.WarmupRun {
		warmUp(ctx, o, s.drv, p, bName, lr.runID)
	}
	for {
		r, order := sched.next()
		if r == nil {
			break
		}
		c, judge := sched.runFor(r)
		rep := r.nextRep()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rec, err := lr.runRepetition(ctx, s, c, rep, order)
		if err != nil {
			return err
		}
		if rec == nil { // interrupted before anything was measured
			return context.Cause(ctx)
		}
		if judge != nil {
			judge(rec)
		}
		r.add(rec) // first, so that the progress line counts it
		if err := lr.record(rec, nw.name()); err != nil {
			return err
		}
	}
	return nil
}

// runRepetition runs repetition rep of case c on session s, reviving its
// broker first if it died, and adds what every record of the run carries;
// nil when the run was interrupted before the case measured anything.
func (lr *labRun) runRepetition(ctx context.Context, s *session, c scenario.Case, rep int, order *results.Order) (*results.Record, error) {
	revived, err := reviveBroker(ctx, s.b, lr.o.Log)
	if err != nil {
		return nil, err
	}
	rec := s.runCase(ctx, c, rep)
	if rec == nil {
		return nil, nil
	}
	rec.Machine, rec.Order = thisMachine(), order
	if revived.Name != "" {
		rec.Flags = append(rec.Flags, revived)
	}
	return rec, nil
}

// startSession makes and starts broker bName on nw (or reaches it at its
// --url) and opens its driver; stop undoes both.
func (lr *labRun) startSession(ctx context.Context, nw *network, bName string) (*session, func(), error) {
	o := lr.o
	k, err := o.registry().Get(bName)
	if err != nil {
		return nil, nil, err
	}
	var b broker.Broker
	if u, ok := o.URLs[bName]; ok {
		if lu, ok := lr.p.remote.urls[bName]; ok {
			u = lu // a broker on another host, by address
		}
		b, err = broker.NewExternal(bName, u)
	} else {
		b, err = k.NewBroker(ctx, o.LabName, o.Log)
	}
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(o.Log, "starting %s (%s) on %s\n", bName, b.Version(), nw.describe())
	host := o.iso.host(nw.host)
	certs, err := lr.serveTLS(b, bName, host)
	if err != nil {
		return nil, nil, err
	}
	ep, err := b.Start(ctx, host)
	if err != nil {
		certs.remove()
		return nil, nil, err
	}
	ep.TLS = certs.clientConfig()
	ep.StallTolerance = nw.stallTolerance()
	subEP := ep // a link per role: the subscribers dial from the lab's second link
	if nw.sub != nil {
		subEP.Dialer = nw.sub.lab
	}
	drv, err := k.NewDriver(ctx, subEP)
	if err != nil {
		b.Stop(context.Background())
		certs.remove()
		return nil, nil, err
	}
	var pubDrv driver.Driver // and the publishers from its first, as ep does
	if nw.sub != nil {
		if pubDrv, err = k.NewDriver(ctx, ep); err != nil {
			drv.Close()
			b.Stop(context.Background())
			certs.remove()
			return nil, nil, err
		}
	}
	s := &session{o: o, p: lr.p, runID: lr.runID, nw: nw, desc: brokerDesc{simulated: k.Simulated}, b: b, drv: drv, pubDrv: pubDrv,
		config: configOf(b, o.Log)}
	return s, func() {
		if pubDrv != nil {
			pubDrv.Close()
		}
		drv.Close()
		b.Stop(context.Background())
		certs.remove()
	}, nil
}

// record writes a case run's record (and its latency histogram) to the
// bundle, adds it to the summary and prints its progress line with the
// run's ETA.
func (lr *labRun) record(rec *results.Record, network string) error {
	if err := lr.bundle.CheckNew(rec); err != nil { // before its histogram overwrites another's
		return fmt.Errorf("write record: %w", err)
	}
	if rec.Result != nil && rec.Result.Histogram != nil {
		if enc, err := rec.Result.Histogram.Encode(); err == nil {
			rec.HistFile, _ = lr.bundle.WriteHistogram(histName(rec), enc)
		}
	}
	if err := lr.bundle.Append(rec); err != nil {
		return fmt.Errorf("write record: %w", err)
	}
	lr.sum.Records = append(lr.sum.Records, *rec)
	if rec.Error != "" {
		lr.sum.Failed++
	} else if rec.Interrupted() {
		lr.sum.Interrupted++
	}
	now := time.Now()
	lr.pr.ran(network, now)
	fmt.Fprintf(lr.o.Log, "%s %s\n", lr.pr.line(now), progressLine(rec))
	return nil
}

// reviveBroker restarts a broker whose process ended on its own (a crash,
// the OOM killer, a stray signal) before the next case, so that one death
// costs the case it happened in, not every case after it. It returns the
// flag for the next record, or an error when the broker cannot be
// restarted (the run cannot go on with it).
func reviveBroker(ctx context.Context, b broker.Broker, log io.Writer) (results.Flag, error) {
	w, ok := b.(broker.Watched)
	if !ok {
		return results.Flag{}, nil
	}
	exit := w.Exited()
	if exit == nil {
		return results.Flag{}, nil
	}
	return restartBroker(ctx, b, log, fmt.Errorf("died before this case: %w", exit))
}

// restartBroker kills what is left of b and starts it again with the same
// store, address and credentials (broker.Restartable), for the reason why.
// It returns the flag for the record of the case that follows.
func restartBroker(ctx context.Context, b broker.Broker, log io.Writer, why error) (results.Flag, error) {
	r, ok := b.(broker.Restartable)
	if !ok {
		return results.Flag{}, fmt.Errorf("broker %s %v, and it cannot be restarted", b.Name(), why)
	}
	fmt.Fprintf(log, "broker %s %v; restarting it\n", b.Name(), why)
	_ = r.Kill()
	if err := r.Restart(ctx); err != nil {
		return results.Flag{}, fmt.Errorf("broker %s %v; restart failed: %w", b.Name(), why, err)
	}
	return results.Flag{Name: results.FlagBrokerRestarted, Detail: why.Error()}, nil
}

// warmUp runs the broker's first case once, unrecorded, so that a freshly
// started broker (a JVM compiling its hot paths) does not make that case
// an outlier. The papers cut 5 s of every 100 s run for the same reason.
func warmUp(ctx context.Context, o Options, drv driver.Driver, p Plan, bName, runID string) {
	for _, c := range p.Cases {
		if !c.ForBroker(bName) {
			continue
		}
		prefix := fmt.Sprintf("pslab-%s-warmup", runID)
		if err := purgeRetrying(ctx, drv, "pslab-"); err != nil {
			fmt.Fprintf(o.Log, "warm-up run skipped: purge: %v\n", err)
			return
		}
		start := time.Now()
		_, err := load.Run(ctx, load.Config{Case: c, Prefix: prefix, Driver: drv, Seed: o.Seed})
		pctx, cancel := cleanupContext(ctx)
		_ = drv.Purge(pctx, prefix)
		cancel()
		if err != nil {
			fmt.Fprintf(o.Log, "warm-up run (case %s, not recorded) failed: %v\n", c.ID, err)
			return
		}
		fmt.Fprintf(o.Log, "warm-up run of case %s on %s (not recorded): %.1f s\n", c.ID, bName, time.Since(start).Seconds())
		return
	}
}

// purgeRetrying purges, and after a failure waits and tries once more: a
// broker can be slow to answer right after a heavy case.
func purgeRetrying(ctx context.Context, drv driver.Driver, prefix string) error {
	err := drv.Purge(ctx, prefix)
	if err == nil {
		return nil
	}
	select {
	case <-ctx.Done():
		return err
	case <-time.After(10 * time.Second):
	}
	return drv.Purge(ctx, prefix)
}

func histName(r *results.Record) string {
	return fmt.Sprintf("%s-%s-%s-r%d", sanitize(r.CaseID), r.Broker, r.Network.Profile, r.Rep)
}

// teardownSettle is the pause between destroying a case's leftover
// sockets and purging its addresses, for the broker to clean up the
// connections it just lost.
const teardownSettle = 300 * time.Millisecond

// resourcesOf summarises samples: CPU is the mean over samples whose
// interval lies inside the window [from, to] (seconds since sampling
// started; a sample at t covers (t-interval, t]); peak RSS is over the case.
func resourcesOf(s map[string][]metrics.ProcSample, from, to, interval float64) *results.Resources {
	inWindow := func(xs []metrics.ProcSample) []metrics.ProcSample {
		var out []metrics.ProcSample
		for _, x := range xs {
			if x.T-interval >= from-0.01 && x.T <= to+0.01 {
				out = append(out, x)
			}
		}
		if len(out) == 0 {
			return xs
		}
		return out
	}
	return &results.Resources{
		ClientCPUPct: metrics.MeanCPU(inWindow(s["client"])), ClientPeakRSS: metrics.PeakRSS(s["client"]),
		BrokerCPUPct: metrics.MeanCPU(inWindow(s["broker"])), BrokerPeakRSS: metrics.PeakRSS(s["broker"]),
		Cores: metrics.Cores(), ClientSamples: s["client"], BrokerSamples: s["broker"],
		MachineCPUPct: metrics.MeanCPU(inWindow(s["machine"])),
	}
}

// CasePrefix is the prefix of every name a case run makes on the broker
// (streams, subjects, queues): its run, case and repetition. A record's
// run_id, case and rep give it back.
func CasePrefix(runID, caseID string, rep int) string {
	return fmt.Sprintf("pslab-%s-c%s-r%d", runID, sanitize(caseID), rep)
}

func sanitize(id string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, id)
}

// newRunID names a run: its start in Unix seconds, base 36 (six digits,
// so IDs sort by time until 2038), and three random base-36 digits. It is
// short because it is part of every subject and destination name, which
// travel with every message: the former 15-character ID made core NATS
// messages 5 % longer on the wire (docs/design.md, "The load client's own
// cost").
func newRunID() string {
	return fmt.Sprintf("%06s%03s", strconv.FormatInt(time.Now().Unix(), 36),
		strconv.FormatInt(int64(rand.IntN(36*36*36)), 36))
}

// Version is pslab's build identity, short form (package buildid): the
// VCS revision it was built from when stamped, else the SHA-256 of its
// executable; "+dirty" when its source tree is known to have differed.
func Version() string { return buildid.Current().Short() }

// Build is the long form of Version: revision, tree state, executable hash.
func Build() string { return buildid.Current().Long() }

func versions(b broker.Broker) results.Versions {
	return results.Versions{Pslab: Version(), PslabBuild: Build(), Go: runtime.Version(), Kernel: kernel(), Broker: b.Version()}
}

func kernel() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:])
}
