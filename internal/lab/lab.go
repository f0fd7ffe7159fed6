// Package lab runs suites: for each network profile it sets up the link,
// for each broker it starts the broker and opens its driver, and for each
// case and repetition it purges the broker, runs the load, samples
// resources and appends a result record to the run bundle.
package lab

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"pslab/internal/audit"
	"pslab/internal/broker"
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
	// confidence half-width of subscriber throughput is within this fraction
	// of the mean (e.g. 0.05), or MaxReps is reached.
	CITarget float64
	MaxReps  int // default 10
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
}

// Plan is the expanded work of a run, for progress and validation.
type Plan struct {
	Suite    *scenario.Suite
	Brokers  []string
	Networks []string
	Cases    []scenario.Case
	Reps     int
	Notes    []string // what was left out and why, warnings (said before running)
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
	for _, b := range p.Brokers {
		if _, ok := brokerKinds[b]; !ok {
			return p, fmt.Errorf("unknown broker %q (known: %s)", b, strings.Join(BrokerNames(), ", "))
		}
	}
	for name, u := range o.URLs {
		if _, ok := brokerKinds[name]; !ok {
			return p, fmt.Errorf("--url %s=%s: unknown broker %q (known: %s)", name, u, name, strings.Join(BrokerNames(), ", "))
		}
		ext, err := broker.NewExternal(name, u)
		if err != nil {
			return p, err
		}
		if o.BrokerPID == 0 { // through the lab, it is checked once the link is up
			if err := ext.CheckReachable(context.Background()); err != nil {
				return p, err
			}
		}
		if o.BrokerPID == 0 {
			if open, detail, err := ext.OpenAccess(context.Background()); err == nil && open {
				p.Notes = append(p.Notes, fmt.Sprintf("WARNING: %s at %s lets clients in without credentials (%s): anyone who can reach it can publish and subscribe", name, u, detail))
			}
		} else if !ext.HasCredentials() {
			p.Notes = append(p.Notes, fmt.Sprintf("warning: %s at %s: no credentials in the URL; if it accepts that, it is open to anyone who can reach it", name, u))
		}
	}
	if err := netem.CheckOptions(netem.Options{Prefix: o.LabName, BrokerPID: o.BrokerPID}); err != nil {
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
		prof, err := netem.LoadProfile(n)
		if err != nil {
			return p, err
		}
		if prof.Shaped() && len(o.URLs) > 0 && o.BrokerPID == 0 {
			return p, fmt.Errorf("network %s: an external broker (--url) is reached over the host network; to emulate the link to it, give the PID of a process in its network namespace (--broker-pid, e.g. a container's)", n)
		}
		if prof.Shaped() {
			if err := netem.Supported(); err != nil {
				p.Notes = append(p.Notes, fmt.Sprintf("network %s skipped: link emulation needs root and network namespaces (%v)", n, err))
				continue
			}
		}
		nets = append(nets, n)
	}
	if len(nets) == 0 {
		return p, fmt.Errorf("no network can run here: %s", strings.Join(p.Notes, "; "))
	}
	p.Networks = nets
	for _, c := range s.Cases {
		if o.Cases == nil || o.Cases(c.ID) {
			p.Cases = append(p.Cases, c)
		}
	}
	if len(p.Cases) == 0 {
		return p, fmt.Errorf("no case of %s matches the --cases filter", s.File)
	}
	var problems []string
	for _, c := range p.Cases {
		for _, b := range c.Brokers {
			if _, ok := brokerKinds[b]; !ok {
				problems = append(problems, fmt.Sprintf("%s: case %s: brokers: unknown broker %q (known: %s)", c.Where(), c.ID, b, strings.Join(BrokerNames(), ", ")))
			}
		}
	}
	for _, b := range p.Brokers {
		k := brokerKinds[b]
		for _, c := range p.Cases {
			if !c.ForBroker(b) {
				continue
			}
			if err := k.supports(c.Factors); err != nil {
				problems = append(problems, fmt.Sprintf("%s: case %s on %s: %v", c.Where(), c.ID, b, err))
			}
		}
	}
	if len(problems) > 0 {
		return p, fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	if p.Units() == 0 {
		return p, fmt.Errorf("no case of %s runs on %s (see the cases' brokers:)", s.File, strings.Join(p.Brokers, ", "))
	}
	return p, nil
}

// Summary is what a run did, for the table printed at the end.
type Summary struct {
	Bundle  string
	Records []results.Record
	Failed  int
	Wall    time.Duration
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
	bundle, err := results.Create(o.Out)
	if err != nil {
		return nil, err
	}
	runID := newRunID()
	sum := &Summary{Bundle: o.Out}
	start := time.Now()
	defer func() { sum.Wall = time.Since(start) }()
	unit := 0
	for _, netName := range p.Networks {
		nw, err := openNetwork(ctx, netName, o.LabName, len(o.URLs) > 0 && o.BrokerPID == 0, o.BrokerPID, log)
		if err != nil {
			return sum, fmt.Errorf("network %s: %w", netName, err)
		}
		for _, bName := range p.Brokers {
			err := runBroker(ctx, p, o, bundle, nw, bName, runID, &unit, sum)
			if err != nil {
				nw.close()
				return sum, fmt.Errorf("broker %s on %s: %w", bName, netName, err)
			}
		}
		nw.close()
	}
	return sum, nil
}

func runBroker(ctx context.Context, p Plan, o Options, bundle *results.Bundle, nw *network,
	bName, runID string, unit *int, sum *Summary) error {
	k := brokerKinds[bName]
	var b broker.Broker
	var err error
	if u, ok := o.URLs[bName]; ok {
		b, err = broker.NewExternal(bName, u)
	} else {
		b, err = k.newBroker(ctx, o.LabName, o.Log)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Log, "starting %s (%s) on %s\n", bName, b.Version(), nw.describe())
	ep, err := b.Start(ctx, nw.host)
	if err != nil {
		return err
	}
	defer b.Stop(context.Background())
	drv, err := k.newDriver(ctx, ep)
	if err != nil {
		return err
	}
	defer drv.Close()
	if o.WarmupRun {
		warmUp(ctx, o, drv, p, bName, runID)
	}
	for _, c := range p.Cases {
		if !c.ForBroker(bName) {
			continue
		}
		var subTputs []float64
		for rep := 1; !enoughReps(rep-1, subTputs, p.Reps, o); rep++ {
			*unit++
			if ctx.Err() != nil {
				return ctx.Err()
			}
			revived, err := reviveBroker(ctx, b, o.Log)
			if err != nil {
				return err
			}
			rec := runCase(ctx, o, drv, b, nw, c, rep, runID, p)
			if revived != "" {
				rec.Flags = append(rec.Flags, revived)
			}
			if rec.Result != nil && rec.Result.Histogram != nil {
				if enc, err := rec.Result.Histogram.Encode(); err == nil {
					rec.HistFile, _ = bundle.WriteHistogram(histName(rec), enc)
				}
			}
			if err := bundle.Append(rec); err != nil {
				return fmt.Errorf("write record: %w", err)
			}
			sum.Records = append(sum.Records, *rec)
			if rec.Error != "" {
				sum.Failed++
			} else {
				subTputs = append(subTputs, rec.Result.SubTput)
			}
			fmt.Fprintf(o.Log, "[%d/%d] %s\n", *unit, p.Units(), progressLine(rec))
		}
	}
	return nil
}

// reviveBroker restarts a broker whose process ended on its own (a crash,
// the OOM killer, a stray signal) before the next case, so that one death
// costs the case it happened in, not every case after it. It returns the
// flag for the next record, or an error when the broker cannot be
// restarted (the run cannot go on with it).
func reviveBroker(ctx context.Context, b broker.Broker, log io.Writer) (string, error) {
	w, ok := b.(broker.Watched)
	if !ok {
		return "", nil
	}
	exit := w.Exited()
	if exit == nil {
		return "", nil
	}
	return restartBroker(ctx, b, log, fmt.Errorf("died before this case: %w", exit))
}

// restartBroker kills what is left of b and starts it again with the same
// store, address and credentials (broker.Restartable), for the reason why.
// It returns the flag for the record of the case that follows.
func restartBroker(ctx context.Context, b broker.Broker, log io.Writer, why error) (string, error) {
	r, ok := b.(broker.Restartable)
	if !ok {
		return "", fmt.Errorf("broker %s %v, and it cannot be restarted", b.Name(), why)
	}
	fmt.Fprintf(log, "broker %s %v; restarting it\n", b.Name(), why)
	_ = r.Kill()
	if err := r.Restart(ctx); err != nil {
		return "", fmt.Errorf("broker %s %v; restart failed: %w", b.Name(), why, err)
	}
	return "broker-restarted: " + why.Error(), nil
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
		_ = drv.Purge(context.Background(), prefix)
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

// enoughReps decides whether a case has run enough repetitions: at least
// min, and with a CI target until it is met or MaxReps is reached.
func enoughReps(done int, subTputs []float64, min int, o Options) bool {
	if done < min {
		return false
	}
	if o.CITarget <= 0 {
		return true
	}
	maxReps := o.MaxReps
	if maxReps <= 0 {
		maxReps = 10
	}
	if done >= maxReps {
		return true
	}
	return CIReached(subTputs, o.CITarget)
}

// CIReached reports whether the 95 % confidence half-width of xs is within
// target (a fraction) of their mean.
func CIReached(xs []float64, target float64) bool {
	if len(xs) < 2 {
		return false
	}
	mean, half := metrics.MeanCI95(xs)
	if mean == 0 || math.IsNaN(half) {
		return false
	}
	return half/mean <= target
}

func histName(r *results.Record) string {
	return fmt.Sprintf("%s-%s-%s-r%d", sanitize(r.CaseID), r.Broker, r.Network.Profile, r.Rep)
}

// runCase runs one repetition of one case and builds its record.
func runCase(ctx context.Context, o Options, drv driver.Driver, b broker.Broker, nw *network,
	c scenario.Case, rep int, runID string, p Plan) *results.Record {
	c.PublishWindow = nw.publishWindow(c) // recorded as used
	rec := &results.Record{
		Schema: results.SchemaVersion, RunID: runID, Suite: p.Suite.Name, File: p.Suite.File,
		CaseID: c.ID, Name: c.Name, Rep: rep, Quick: o.Quick,
		Broker: drv.Name(), BrokerVersion: b.Version(), BrokerSettings: b.Settings(),
		Mechanism: drv.Mechanism(c.Factors), Factors: c.Factors, FullFactors: c.Full, Settings: results.SettingsOf(c),
		Paper: c.Paper, Note: c.Note, Versions: versions(b), Started: time.Now(),
		Seed: o.Seed + int64(rep), Network: nw.record(),
	}
	fm := ""
	if d, ok := drv.(driver.FilterMechanism); ok {
		fm = d.FilterMechanism(c.Factors)
	}
	rec.Filter = results.FilterInfoOf(c.Factors, fm)
	prefix := fmt.Sprintf("pslab-%s-c%s-r%d", runID, sanitize(c.ID), rep)
	rec.Phases = &results.Phases{}
	waited, quiet := nw.waitIdle(ctx)
	rec.Phases.IdleWaitS = waited.Seconds()
	if !quiet {
		rec.Flags = append(rec.Flags, fmt.Sprintf("link-busy: the link still carried traffic of the previous case after %.0f s", waited.Seconds()))
	}
	purgeStart := time.Now()
	err := purgeRetrying(ctx, drv, "pslab-")
	if err != nil && ctx.Err() == nil {
		// A broker that does not answer its administration any more (seen:
		// an Artemis 2.44 deadlock in deleteAddress while it tore down an
		// aborted STOMP connection, docs/artemis.md) would fail every later
		// case: restart it, and purge what its store kept.
		flag, rerr := restartBroker(ctx, b, o.Log, fmt.Errorf("stopped answering (purge: %w)", err))
		if rerr == nil {
			rec.Flags = append(rec.Flags, flag)
			err = purgeRetrying(ctx, drv, "pslab-")
		}
	}
	rec.Phases.PurgeS = time.Since(purgeStart).Seconds()
	if err != nil {
		rec.Error = "purge: " + err.Error()
		return rec
	}
	// With an unshaped set-up the counters restart when the shaping is put
	// back: the case's link figures are taken from there (Connected below).
	unshaped := c.ConnectUnshaped && nw.shapedLink()
	var before *netem.Counters
	if !unshaped {
		before = nw.snapshot()
	} else if err := nw.unshape(); err != nil {
		rec.Error = "lift the link's shaping for connection set-up: " + err.Error()
		if rerr := nw.reshape(); rerr != nil {
			rec.Error += "; put it back: " + rerr.Error()
		}
		return rec
	}
	interval := time.Second
	if c.Window < 5*time.Second {
		interval = c.Window / 5
	}
	sampler := metrics.NewProcSampler(interval)
	sampler.Watch("client", os.Getpid())
	if pid := b.PID(); pid > 0 {
		sampler.Watch("broker", pid)
	} else if pid := o.brokerProcess(drv.Name()); pid > 0 { // a broker container: its process
		sampler.Watch("broker", pid)
	}
	sctx, stopSampling := context.WithCancel(ctx)
	samplingStart := time.Now()
	sampler.Start(sctx)
	cfg := load.Config{Case: c, Prefix: prefix, Driver: drv, Seed: rec.Seed,
		Injector: injector{nw: nw, b: b, sampler: sampler},
		// On the emulated link a graceful close waits behind the queued data
		// and the purge below removes everything anyway: drop instead.
		AbortAtEnd: nw.profile.Shaped()}
	reshaped := false
	if unshaped {
		cfg.Connected = func() error {
			t := time.Now()
			err := nw.reshape()
			reshaped = err == nil
			rec.Phases.ReshapeS = time.Since(t).Seconds()
			before = nw.snapshot()
			return err
		}
	}
	if o.Verbose {
		cfg.Progress = func(pr load.Progress) {
			fmt.Fprintf(o.Log, "    %-6s %5.1fs sent %d received %d\n", pr.Phase, pr.Elapsed.Seconds(), pr.Sent, pr.Received)
		}
	}
	res, err := load.Run(ctx, cfg)
	if unshaped && !reshaped {
		// A set-up that failed left the link unshaped: the next case must
		// not start on it.
		if rerr := nw.reshape(); rerr != nil && err == nil {
			err = fmt.Errorf("put the link's shaping back: %w", rerr)
		}
	}
	stopSampling()
	samples := sampler.Stop()
	rec.WallS = time.Since(rec.Started).Seconds()
	rec.Network.Link = nw.linkOver(before)
	if cfg.AbortAtEnd {
		// First the sockets the dropped connections left on the broker, so
		// that the broker has torn those connections down before the purge
		// deletes their addresses: Artemis 2.44 can deadlock when a
		// deleteAddress disconnects a consumer whose connection is failing
		// at that moment (docs/artemis.md).
		n, rerr := nw.resetConnections()
		rec.Phases.LeftoverSockets = n
		if rerr != nil {
			rec.Flags = append(rec.Flags, "reset-failed: "+rerr.Error())
		}
		if n > 0 {
			time.Sleep(teardownSettle)
		}
	}
	// A failed purge after the case does not spoil what was measured: it is
	// flagged, and the next case's purge (which must succeed) retries it.
	purgeStart = time.Now()
	perr := drv.Purge(context.Background(), prefix)
	rec.Phases.PurgeAfterS = time.Since(purgeStart).Seconds()
	if perr != nil {
		rec.Flags = append(rec.Flags, "purge-after-failed: "+perr.Error())
	}
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	rec.Result = res
	rec.Audit = audit.Evaluate(c.Factors, res)
	// Resources over the window only: from the end of the warm-up to the
	// end of the window, relative to the sampler's start.
	ws := res.Start.Sub(samplingStart) + c.Warmup
	rec.Resources = resourcesOf(samples, ws.Seconds(), (ws + c.Window).Seconds(), interval.Seconds())
	rec.Throughput = results.ThroughputOf(rec)
	rec.Flags = append(rec.Flags, flagsFor(rec)...)
	return rec
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
	}
}

func sanitize(id string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, id)
}

func newRunID() string {
	return fmt.Sprintf("%s%04x", time.Now().UTC().Format("0102t150405"), rand.Uint32()&0xffff)
}

// Version is pslab's version: the VCS revision it was built from, if known.
func Version() string {
	v := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v = s.Value[:12]
			}
			if s.Key == "vcs.modified" && s.Value == "true" {
				v += "+dirty"
			}
		}
	}
	return v
}

func versions(b broker.Broker) results.Versions {
	return results.Versions{Pslab: Version(), Go: runtime.Version(), Kernel: kernel(), Broker: b.Version()}
}

func kernel() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:])
}
