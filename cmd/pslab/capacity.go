package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"pslab/internal/brokers"
	"pslab/internal/capacity"
	"pslab/internal/lab"
	"pslab/internal/plot"
	"pslab/internal/results"
	"pslab/internal/scenario"
	"pslab/netem"
)

// capacityFlags are pslab capacity's own flags (the shared ones are run's).
type capacityFlags struct {
	resolution, target, tolerance string
	latencyBounds, phases         []string
	confirm                       []string
	loads, latencyTarget          string
	latencyReps, latencyMaxReps   int
	priors                        []string
	start                         float64
	maxProbes, busyAttempts       int
	quietWait                     time.Duration
}

// capacityCommand names capacity runs in run.json (lab.RunInfo.Command).
const capacityCommand = "capacity"

func newCapacityCmd() *cobra.Command {
	var f runFlags
	var cf capacityFlags
	var rf resumeFlags
	cmd := &cobra.Command{
		Use:   "capacity FILE...",
		Short: "Find each row's capacity (highest sustained offered load) and its latency at fixed fractions of it",
		Long: `For each case row (case x broker x network) of the scenario files, find the
highest offered load the system sustains, open loop (each publisher at a
rate, latency from the intended send time): a probe runs the case at one
load and is sustained when, over its window, at least 99 % of the
deliveries due arrive, the backlog does not grow by more than 1 % of them,
nothing is lost and the p99 latency is within the network's bound
(--latency-bound). A search ramps from a start (a prior from paper-mode
records, the emulated link's computed goodput, or --start), then bisects
to --resolution. The row's first search (the pilot) finds where the
counted searches start; their number follows Stein's two-stage rule for
a 95 % CI within ±--target on the capacity (--reps first, at most
--max-reps). Each row then runs at fixed fractions of its capacity
(--loads) until the 95 % CIs of its mean and p99 latency are within
±--latency-target or within the latency floor measured at the start.

Every probe and fixed-load run is a record (mode capacity-probe or
fixed-load) in <out>/records.jsonl with its offered load, verdict and why.
At the end (and on an interruption) pslab writes CAPACITY.md (validity
table, capacity per row with its CI and what bound it: broker, client
(a lower bound, shown ≥), link), capacity.csv, capacity.json and
plots/hockey-*.png. Resumable like runs (--resume DIR). See
docs/capacity.md.`,
		Example: `  pslab capacity scenarios/smoke.yaml --broker nats --network wireline --cases 1
  pslab capacity scenarios/gaddah-kunz-set1.yaml --prior results/gaddah-kunz-repro/gaddah-kunz-set1 --out runs/cap1
  pslab capacity scenarios/smoke.yaml --resolution 2% --reps 3 --loads 25,50,80 --latency-bound wireline=250ms,wifi-paper=5s
  pslab capacity --resume runs/cap1
  pslab capacity table runs/cap1`,
		Args: func(cmd *cobra.Command, args []string) error {
			if rf.dir != "" {
				return nil
			}
			return argsCheck(cobra.MinimumNArgs(1))(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if rf.dir != "" {
				return resumeCapacity(cmd, args, f, cf, rf)
			}
			return runCapacity(cmd, args, f, cf)
		},
	}
	addRunFlags(cmd, &f, true)
	addCapacityFlags(cmd, &cf)
	addResumeFlags(cmd, &rf)
	cmd.Flags().Lookup("reps").Usage = "counted searches per row in the first stage of Stein's rule (default 3)"
	cmd.Flags().Lookup("max-reps").Usage = "at most this many counted searches per row (default 6)"
	cmd.Flags().Lookup("ci").Usage = "not used by capacity (see --target and --latency-target)"
	cmd.AddCommand(newCapacityTableCmd())
	return cmd
}

func init() { rootCmd.AddCommand(newCapacityCmd()) }

func addCapacityFlags(cmd *cobra.Command, cf *capacityFlags) {
	fl := cmd.Flags()
	fl.StringVar(&cf.resolution, "resolution", "2%", "a search bisects until its highest sustained and lowest failing loads are within this")
	fl.StringVar(&cf.target, "target", "5%", "95 % CI half-width aimed at on each row's capacity (Stein's two-stage rule over the searches)")
	fl.StringVar(&cf.tolerance, "tolerance", "1%", "share of the due deliveries that may be missing, or add to the backlog, in a sustained probe")
	fl.StringSliceVar(&cf.latencyBounds, "latency-bound", nil, "p99 latency bound of a sustained probe per network profile, e.g. wireline=250ms,wifi-paper=5s (default 250ms unshaped, 5s shaped)")
	fl.StringSliceVar(&cf.phases, "phases", nil, "a probe's warm-up/window/drain per network profile, e.g. wireline=1s/3s/2s,wifi-paper=5s/30s/10s (those are the defaults)")
	fl.StringSliceVar(&cf.confirm, "confirm", nil, "probes that judge each load a counted search's answer rests on, per network profile: the majority decides (3: 2 of 3; 1: one probe), e.g. wireline=3,wifi-paper=1 (those are the defaults: 3 unshaped, 1 shaped)")
	fl.StringVar(&cf.loads, "loads", "25,50,80", "fractions of each row's capacity (%) to measure latency at, or none")
	fl.StringVar(&cf.latencyTarget, "latency-target", "5%", "95 % CI half-width aimed at on mean and p99 latency at each load (or the measured latency floor)")
	fl.IntVar(&cf.latencyReps, "latency-reps", 3, "runs per load in the first stage of Stein's rule")
	fl.IntVar(&cf.latencyMaxReps, "latency-max-reps", 10, "at most this many runs per load")
	fl.StringArrayVar(&cf.priors, "prior", nil, "records (paper mode) whose delivered rate per row is where the row's pilot search starts, e.g. results/gaddah-kunz-repro/gaddah-kunz-set1 (repeatable; a directory with no paper-mode record, such as a capacity bundle, is refused)")
	fl.Float64Var(&cf.start, "start", 1000, "offered msgs/s where a row's pilot starts when it has no prior and no emulated link")
	fl.IntVar(&cf.maxProbes, "max-probes", 14, "at most this many probes per search")
	fl.DurationVar(&cf.quietWait, "quiet-wait", 2*time.Minute, "before each probe on an unshaped path, wait at most this long for processes outside the run to leave the machine (0: do not wait)")
	fl.IntVar(&cf.busyAttempts, "busy-attempts", capacity.BusyAttempts, "a probe measured while other processes used the machine (flag machine-busy) runs again, up to this many attempts in a row (1: never again)")
}

// capacityParams turns the flags into the search's parameters; every
// problem names its flag, all at once, as bad input.
func capacityParams(cmd *cobra.Command, f runFlags, cf capacityFlags) (capacity.Params, error) {
	p := capacity.DefaultParams()
	p.FrameOverhead = frameOverhead
	var bad []string
	pct := func(flag, v string, dst *float64) {
		x, err := parsePercent(v)
		if err != nil {
			bad = append(bad, fmt.Sprintf("--%s: %v", flag, err))
			return
		}
		*dst = x
	}
	pct("resolution", cf.resolution, &p.Resolution)
	pct("target", cf.target, &p.Target)
	pct("tolerance", cf.tolerance, &p.Tolerance)
	pct("latency-target", cf.latencyTarget, &p.LatencyTarget)
	if cmd.Flags().Changed("ci") {
		bad = append(bad, "--ci: pslab capacity decides repetitions by Stein's rule: give --target (capacity) and --latency-target instead")
	}
	if f.reps > 0 {
		p.MinSearches = f.reps
	}
	if f.maxReps > 0 {
		p.MaxSearches = f.maxReps
	} else if p.MaxSearches < p.MinSearches {
		p.MaxSearches = 2 * p.MinSearches
	}
	p.LatencyMinReps, p.LatencyMaxReps = cf.latencyReps, cf.latencyMaxReps
	p.MaxProbes = cf.maxProbes
	p.BusyAttempts = cf.busyAttempts
	if cf.quietWait < 0 {
		bad = append(bad, fmt.Sprintf("--quiet-wait must not be negative, got %s", cf.quietWait))
	}
	if cf.busyAttempts < 1 {
		bad = append(bad, fmt.Sprintf("--busy-attempts must be at least 1, got %d", cf.busyAttempts))
	}
	if cf.start <= 0 {
		bad = append(bad, fmt.Sprintf("--start must be positive, got %g", cf.start))
	}
	p.DefaultStart = cf.start
	if cf.maxProbes < 4 {
		bad = append(bad, fmt.Sprintf("--max-probes must be at least 4, got %d", cf.maxProbes))
	}
	bad = readNamed("latency-bound", cf.latencyBounds, namedDuration, p.LatencyBound, bad)
	bad = readNamed("phases", cf.phases, namedPhases, p.Phases, bad)
	bad = readNamed("confirm", cf.confirm, namedCount, p.Confirm, bad)
	loads, err := parseLoads(cf.loads)
	if err != nil {
		bad = append(bad, "--loads: "+err.Error())
	}
	p.Loads = loads
	priors, err := readPriors(cf.priors)
	if err != nil {
		bad = append(bad, err.Error())
	}
	p.Priors = priors
	if err := p.Check(); err != nil { // on what parsed: a flag that did not is said above
		bad = append(bad, err.Error())
	}
	if len(bad) > 0 {
		return p, badInput(errors.New(strings.Join(bad, "\n")))
	}
	return p, nil
}

// frameOverhead is the bytes broker's protocol frame adds to a message
// body of a case on the wire, from the broker registry (0: not known,
// capacity.FrameOverhead then).
func frameOverhead(broker string, f scenario.Factors) int {
	d, ok := brokers.Lookup(broker)
	if !ok || d.Capabilities.FrameOverhead == nil {
		return 0
	}
	return d.Capabilities.FrameOverhead(f)
}

// readNamed reads flag's NETWORK=VALUE values into dst; each one that does
// not read is added to bad, which it returns.
func readNamed[T any](flag string, vals []string, read func(string) (string, T, error), dst map[string]T, bad []string) []string {
	for _, v := range vals {
		name, x, err := read(v)
		if err != nil {
			bad = append(bad, "--"+flag+" "+v+": "+err.Error())
			continue
		}
		dst[name] = x
	}
	return bad
}

// named reads NETWORK=VALUE: a known network profile's name and its
// value by parse; want is the form said when there is no "=".
func named[T any](v, want string, parse func(string) (T, error)) (string, T, error) {
	var zero T
	name, s, ok := strings.Cut(v, "=")
	if !ok {
		return "", zero, fmt.Errorf("want %s", want)
	}
	// Keyed by the profile's own name, which the search looks it up by: a
	// profile file's path names the profile inside it.
	prof, err := netem.LoadProfile(name)
	if err != nil {
		return "", zero, err
	}
	name = prof.Name
	x, err := parse(s)
	if err != nil {
		return "", zero, err
	}
	return name, x, nil
}

// namedDuration reads NETWORK=DURATION.
func namedDuration(v string) (string, time.Duration, error) {
	return named(v, "NETWORK=DURATION, e.g. wireline=250ms", time.ParseDuration)
}

// namedCount reads NETWORK=N.
func namedCount(v string) (string, int, error) {
	return named(v, "NETWORK=N, e.g. wireline=3", func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil {
			return 0, fmt.Errorf("%q is not a whole number", s)
		}
		return n, nil
	})
}

// namedPhases reads NETWORK=WARMUP/WINDOW/DRAIN.
func namedPhases(v string) (string, capacity.Phases, error) {
	const want = "NETWORK=WARMUP/WINDOW/DRAIN, e.g. wireline=1s/3s/2s"
	return named(v, want, func(s string) (capacity.Phases, error) {
		parts := strings.Split(s, "/")
		if len(parts) != 3 {
			return capacity.Phases{}, fmt.Errorf("want %s", want)
		}
		var ds [3]time.Duration
		for i, part := range parts {
			d, err := time.ParseDuration(part)
			if err != nil {
				return capacity.Phases{}, err
			}
			ds[i] = d
		}
		return capacity.Phases{Warmup: ds[0], Window: ds[1], Drain: ds[2]}, nil
	})
}

// parseLoads reads "25,50,80" (percent of the capacity) or "none".
func parseLoads(s string) ([]float64, error) {
	if strings.TrimSpace(s) == "none" || strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []float64
	for _, part := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(part), "%"), 64)
		if err != nil {
			return nil, fmt.Errorf("%q: want percents, e.g. 25,50,80, or none", part)
		}
		out = append(out, v/100)
	}
	return out, nil
}

// readPriors reads paper-mode records into offered loads per row: the
// median over a row's finished records of its delivered rate in offered
// terms (subscriber throughput over the deliveries due per send). A
// directory with no finished paper-mode record is refused (a capacity
// bundle's records are probes at chosen loads, not a delivered rate;
// before, it was read as no prior at all, and every pilot started from
// --start).
func readPriors(paths []string) (map[string]float64, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	rates := map[string][]float64{}
	var bad []string
	for _, p := range paths {
		recs, err := results.Read(p)
		if err != nil {
			bad = append(bad, fmt.Sprintf("--prior %s: %v", p, err))
			continue
		}
		used, other := 0, 0
		for _, r := range recs {
			if r.ModeOf() != results.ModePaper {
				other++
			}
			if !r.Finished() || r.ModeOf() != results.ModePaper || r.Result.Counts.Expected == 0 {
				continue
			}
			c := r.Result.Counts
			k := capacity.PriorKey(r.Suite, r.CaseID, r.Broker, r.Network.Profile)
			rates[k] = append(rates[k], r.Result.SubTput*float64(c.Sent)/float64(c.Expected))
			used++
		}
		if used == 0 {
			bad = append(bad, fmt.Sprintf("--prior %s: no finished paper-mode record (pslab run) among its %d record(s), %d of them capacity-mode: a prior is a row's delivered rate in paper mode", p, len(recs), other))
		}
	}
	if len(bad) > 0 {
		return nil, errors.New(strings.Join(bad, "\n"))
	}
	out := map[string]float64{}
	for k, xs := range rates {
		out[k] = median(xs)
	}
	return out, nil
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// capacityOptions are run's options with the capacity policy, after the
// capacity flags are checked.
func capacityOptions(cmd *cobra.Command, f runFlags, cf capacityFlags) (lab.Options, capacity.Params, error) {
	p, perr := capacityParams(cmd, f, cf)
	opts, err := optionsFrom(cmd, f)
	if err != nil || perr != nil {
		return opts, p, errors.Join(perr, err)
	}
	opts.Policy = capacity.Policy{P: p}
	opts.QuietWait = cf.quietWait
	// Each broker's first case once, unrecorded, before the probes: a
	// JVM broker just started took no sends in its first probe's window.
	opts.WarmupRun = true
	return opts, p, nil
}

// checkCapacityPlans refuses cases a capacity probe cannot run: a fault
// schedule (a probe needs a steady load).
func checkCapacityPlans(plans []lab.Plan) error {
	var bad []string
	for _, p := range plans {
		for _, c := range p.Cases {
			if len(c.Faults) > 0 {
				bad = append(bad, fmt.Sprintf("%s: case %s has faults: a capacity probe needs a steady load; leave it out with --cases", c.Where(), c.ID))
			}
		}
	}
	if len(bad) > 0 {
		return badInput(errors.New(strings.Join(bad, "\n")))
	}
	return nil
}

func runCapacity(cmd *cobra.Command, files []string, f runFlags, cf capacityFlags) error {
	opts, p, err := capacityOptions(cmd, f, cf)
	if err != nil {
		return err
	}
	plans, err := loadPlans(files, f.quick, opts)
	if err != nil {
		return err
	}
	if err := checkCapacityPlans(plans); err != nil {
		return err
	}
	if f.dryRun {
		return dryRun(cmd, plans, opts, f.out)
	}
	root, lock, err := startRunInfo(cmd, files, plans, f.out)
	if err != nil {
		return err
	}
	defer lock.Release()
	return runCapacityPlans(cmd, plans, opts, p, root)
}

// runCapacityPlans runs the plans under the capacity policy and writes
// each bundle's tables and figures, also when a plan failed or was
// interrupted (what has run so far, marked not finished).
func runCapacityPlans(cmd *cobra.Command, plans []lab.Plan, opts lab.Options, p capacity.Params, root string) error {
	ctx, stop := interruptible(context.Background(), cmd.ErrOrStderr())
	defer stop()
	return inPart(cmd, root, func() error { return capacityPlansIn(ctx, cmd, plans, opts, p, root) })
}

func capacityPlansIn(ctx context.Context, cmd *cobra.Command, plans []lab.Plan, opts lab.Options, p capacity.Params, root string) error {
	return runPlansWith(ctx, cmd, plans, opts, root, planOutput{
		describe: func(lab.Plan) string { return capacity.Policy{P: p}.Describe() },
		after: func(_ lab.Plan, sum *lab.Summary) error {
			if len(sum.Records) == 0 && !holdsRecords(sum.Bundle) {
				return nil
			}
			return writeCapacityOutputs(cmd, p, sum.Bundle, sum.Wall)
		},
	})
}

// writeCapacityOutputs writes CAPACITY.md, capacity.csv, capacity.json
// and plots/ of bundle dir from its records, and prints the tables.
func writeCapacityOutputs(cmd *cobra.Command, p capacity.Params, dir string, wall time.Duration) error {
	recs, err := results.Read(dir)
	if err != nil {
		return err
	}
	rs := p.Results(recs)
	var md bytes.Buffer
	capacity.WriteMarkdown(&md, p, rs, []string{dir})
	if wall > 0 {
		fmt.Fprintf(&md, "\nWall time of this part: %s.\n", wall.Round(time.Second))
	}
	fmt.Fprintln(cmd.OutOrStdout())
	_, _ = cmd.OutOrStdout().Write(md.Bytes())
	if err := results.WriteAtomic(filepath.Join(dir, "CAPACITY.md"), md.Bytes()); err != nil {
		return err
	}
	if err := writeWith(filepath.Join(dir, "capacity.csv"), func(w io.Writer) error { return capacity.WriteCSV(w, rs) }); err != nil {
		return err
	}
	if err := writeWith(filepath.Join(dir, "capacity.json"), func(w io.Writer) error { return capacity.WriteJSON(w, rs) }); err != nil {
		return err
	}
	out, err := plot.Hockey(capacity.HockeyCases(rs), plot.Options{OutDir: filepath.Join(dir, "plots")})
	for _, s := range out.Skipped {
		fmt.Fprintln(cmd.ErrOrStderr(), "skipped:", s)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "capacity: %d row(s) -> %s (CAPACITY.md, capacity.csv, capacity.json, %d plot file(s))\n", len(rs), dir, len(out.Files))
	return err
}

func writeWith(path string, write func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return err
	}
	return results.WriteAtomic(path, buf.Bytes())
}

// resumeCapacity continues the capacity run in rf.dir with the files and
// flags its run.json keeps (as run --resume does for runs).
func resumeCapacity(cmd *cobra.Command, files []string, f runFlags, cf capacityFlags, rf resumeFlags) error {
	info, lock, stored, sf, scf, err := storedCapacityRun(cmd, files, f.urls, rf)
	if err != nil {
		return err
	}
	defer lock.Release()
	resumedFlags(cmd, &sf, f, rf)
	opts, p, err := capacityOptions(stored, sf, scf)
	if err != nil {
		return err
	}
	load := func(opts lab.Options) ([]lab.Plan, error) { return loadPlans(stored.Flags().Args(), sf.quick, opts) }
	return resumePlans(cmd, rf, info, opts, load, f.dryRun, func(plans []lab.Plan, opts lab.Options) error {
		return runCapacityPlans(cmd, plans, opts, p, rf.dir)
	})
}

// storedCapacityRun reads run.json of a capacity run and its flags (with
// the URLs urls give again, resumeURLs), and holds the run's lock
// (checkResume) when it returns no error.
func storedCapacityRun(cmd *cobra.Command, files, urls []string, rf resumeFlags) (lab.RunInfo, *results.DirLock, *cobra.Command, runFlags, capacityFlags, error) {
	var sf runFlags
	var scf capacityFlags
	info, lock, err := checkResume(cmd, files, rf)
	if err != nil {
		return info, nil, nil, sf, scf, err
	}
	fail := func(err error) (lab.RunInfo, *results.DirLock, *cobra.Command, runFlags, capacityFlags, error) {
		lock.Release()
		return info, nil, nil, sf, scf, err
	}
	if info.Command != capacityCommand {
		return fail(badInputf("%s is a run of pslab run, not of pslab capacity: resume it with pslab run --resume %s", rf.dir, rf.dir))
	}
	args, err := resumeURLs(info.Args, urls, filepath.Join(rf.dir, lab.RunInfoFile))
	if err != nil {
		return fail(err)
	}
	stored, err := storedCommand(cmd, capacityCommand, args, rf.dir, func(c *cobra.Command) {
		addRunFlags(c, &sf, true)
		addCapacityFlags(c, &scf)
	})
	if err != nil {
		return fail(err)
	}
	return info, lock, stored, sf, scf, nil
}

func newCapacityTableCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "table DIR...",
		Short: "Write the capacity tables and figures of capacity run bundles again, from their records",
		Long: `Read the records of capacity run bundles (each with the run.json that says
with which flags it ran) and write CAPACITY.md, capacity.csv, capacity.json
and plots/ into each again; with --out, write the markdown of all of them
to that file instead.`,
		Example: `  pslab capacity table runs/cap1
  pslab capacity table results/capacity-pilots/* --out CAPACITY.md`,
		Args: argsCheck(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, dirs []string) error {
			var all []results.Record
			var p capacity.Params
			for i, dir := range dirs {
				pd, err := bundleParams(cmd, dir)
				if err != nil {
					return err
				}
				if i == 0 {
					p = pd
				}
				if out == "" {
					if err := writeCapacityOutputs(cmd, pd, dir, 0); err != nil {
						return err
					}
					continue
				}
				recs, err := results.Read(dir)
				if err != nil {
					return badInput(err)
				}
				all = append(all, recs...)
			}
			if out == "" {
				return nil
			}
			return writeOutput(cmd, out, "capacity table", fmt.Sprintf("%d records", len(all)), func(w io.Writer) error {
				capacity.WriteMarkdown(w, p, p.Results(all), dirs)
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "write the markdown of all bundles to this file")
	return cmd
}

// bundleParams are the parameters a capacity bundle ran with: its
// run.json's flags (in dir, or in its parent for a suite directory of a
// run of several files).
func bundleParams(cmd *cobra.Command, dir string) (capacity.Params, error) {
	if _, err := os.Stat(filepath.Join(dir, results.RecordsFile)); err != nil {
		return capacity.Params{}, badInputf("%s: no %s: not a run bundle", dir, results.RecordsFile)
	}
	infoDir := dir
	if _, err := os.Stat(filepath.Join(dir, lab.RunInfoFile)); err != nil {
		infoDir = filepath.Dir(dir)
	}
	info, err := lab.ReadRunInfo(infoDir)
	if err != nil {
		return capacity.Params{}, badInputf("%s: %v (the capacity tables need the flags the run used)", dir, err)
	}
	if info.Command != capacityCommand {
		return capacity.Params{}, badInputf("%s was not made by pslab capacity", dir)
	}
	var sf runFlags
	var scf capacityFlags
	stored, err := storedCommand(cmd, capacityCommand, info.Args, infoDir, func(c *cobra.Command) {
		addRunFlags(c, &sf, true)
		addCapacityFlags(c, &scf)
	})
	if err != nil {
		return capacity.Params{}, err
	}
	scf.priors = nil // the probes say where their searches started
	return capacityParams(stored, sf, scf)
}
