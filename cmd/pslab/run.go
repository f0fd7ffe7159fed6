package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"pslab/internal/lab"
	"pslab/internal/report"
	"pslab/internal/results"
	"pslab/internal/scenario"
	"pslab/netem"
)

type runFlags struct {
	brokers   []string
	networks  []string
	cases     string
	quick     bool
	reps      int
	out       string
	seed      int64
	verbose   bool
	urls      []string
	ci        string
	maxReps   int
	labName   string
	brokerPID int
	warmupRun bool
	// skipUnsupported: --skip-unsupported, leave out (with a note) the
	// cases a broker cannot express instead of refusing the run.
	skipUnsupported bool
	cpus            string
	parallel        int
	// containers: --container BROKER[=CONTAINER] (container.go)
	containers []string
	dryRun     bool // --dry-run (dryrun.go)
	// tcpCongestion: --tcp-congestion, set in the lab's namespaces
	tcpCongestion string
}

func newRunCmd() *cobra.Command {
	var f runFlags
	var rf resumeFlags
	cmd := &cobra.Command{
		Use:   "run FILE...",
		Short: "Run scenario files against brokers over network profiles",
		Long: `Run every case of each scenario file on each listed broker and network
profile, write one JSON line per case x broker x network x repetition to
<out>/records.jsonl (atomically), and print a summary table with the networks
side by side.

The embedded NATS server is started (as a child process) by pslab itself; so
is Artemis, which is installed on first use. Flags override the scenario
file. All files are validated first: with any error, nothing is run and pslab
exits with code 2. The output directory has one writer: the run holds
<out>/.pslab.lock until it ends, and a second run or resume into it is
refused (exit 2, naming the holder's pid). run.json keeps a --url without
its password (a resume asks for it again).`,
		Example: `  pslab run scenarios/smoke.yaml
  pslab run scenarios/smoke.yaml --quick --network wireline
  pslab run scenarios/gaddah-kunz-set1.yaml --cases 1-4,17 --reps 3 --out runs/set1
  pslab run --resume runs/set1`,
		Args: func(cmd *cobra.Command, args []string) error {
			if rf.dir != "" {
				return nil // resumeRun checks
			}
			return argsCheck(cobra.MinimumNArgs(1))(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if rf.dir != "" {
				return resumeRun(cmd, args, f, rf)
			}
			return runRun(cmd, args, f, rf)
		},
	}
	addRunFlags(cmd, &f, true)
	addResumeFlags(cmd, &rf)
	return cmd
}

func init() { rootCmd.AddCommand(newRunCmd()) }

// defaultLabName is --lab's default. The hermetic tests use their own
// (lab_test.go), so that a pslab running on the machine in the default
// lab does not refuse their runs.
var defaultLabName = "pslab"

// addRunFlags registers the flags shared by run and sweep; fileFlags adds
// those that only make sense with scenario files.
func addRunFlags(cmd *cobra.Command, f *runFlags, fileFlags bool) {
	fl := cmd.Flags()
	if fileFlags {
		fl.StringVar(&f.cases, "cases", "", "case ids to run, e.g. 1-4,17 or nats-subject.* (default: all)")
		fl.BoolVar(&f.quick, "quick", false, "apply the file's quick overrides (short windows, small counts)")
	}
	def := func(file, sweep string) string { // what a flag left out means
		if fileFlags {
			return "(default: " + file + ")"
		}
		return "(default: " + sweep + ")"
	}
	fl.StringSliceVar(&f.brokers, "broker", nil, "brokers to run on, e.g. nats,artemis "+def("the file's", scenario.DefaultBroker))
	fl.StringSliceVar(&f.networks, "network", nil, "network profiles, e.g. wireline,wifi-paper or a profile YAML file "+def("the file's", "wireline"))
	fl.IntVar(&f.reps, "reps", 0, "repetitions per case "+def("the file's", "1"))
	fl.StringVar(&f.out, "out", "", "output directory (default runs/<suite>-<time>)")
	fl.Int64Var(&f.seed, "seed", 1, "seed for selector values and ranges")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "a progress line per second while a case runs")
	fl.StringVar(&f.ci, "ci", "", "repeat each case until the 95 % CI half-widths of subscriber throughput and mean latency are within this share of the mean, e.g. 5% "+def("the file's ci:", "none"))
	fl.IntVar(&f.maxReps, "max-reps", 0, "cap on repetitions with a CI target "+def("the file's max_reps:, else 10", "10"))
	fl.StringVar(&f.labName, "lab", defaultLabName, "name of the lab: prefix of its namespaces (<lab>-cli, -rtr, -brk); two runs at once need different names")
	fl.IntVar(&f.brokerPID, "broker-pid", 0, "with --url: put the broker side of the emulated link in this process's network namespace (a broker container's PID); the URL then uses 10.77.2.2")
	fl.BoolVar(&f.skipUnsupported, "skip-unsupported", false, "leave out, with a note each, the cases a broker cannot express (e.g. dups-ok over MQTT QoS 0) instead of refusing the run")
	fl.BoolVar(&f.warmupRun, "warmup-run", false, "run each broker's first case once, unrecorded, before the recorded runs (a just-started JVM broker is slow at first)")
	fl.StringVar(&f.cpus, "cpus", "", "CPU sets of the broker and the load clients, disjoint: broker=LIST,clients=LIST (e.g. broker=1,clients=0), or off (default: the CPUs pslab may use split in two, the clients the lower half)")
	fl.IntVar(&f.parallel, "parallel", 0, "run the cases of each shaped network (wifi-paper etc.) in this many labs at once, <lab>p1..pN, each with its own broker; wireline runs alone "+def("the file's parallel:, else 1", "1"))
	fl.StringArrayVar(&f.urls, "url", nil, "use a running broker instead of starting one: NAME=URL, e.g. nats=nats://user:pass@192.168.1.20:4222 (add ?monitor=8222, the NATS server's monitoring port, so that what it holds for core subscribers counts as backlog); as root a broker on another host is reached through the emulated link (every profile), otherwise over the host network (wireline only)")
	addDryRunFlag(cmd, &f.dryRun)
	fl.StringVar(&f.tcpCongestion, "tcp-congestion", "", "TCP congestion control set in the lab's namespaces (both ends of every connection), e.g. cubic or bbr; one the kernel has (/proc/sys/net/ipv4/tcp_available_congestion_control) (default: the host's, inherited; records carry it either way)")
	fl.StringArrayVar(&f.containers, "container", nil, "measure a broker container through the emulated link: BROKER[=CONTAINER], e.g. nats (container pslab-nats) or artemis=pslab-artemis; finds its PID with docker inspect, credentials from NATS_*/ARTEMIS_* in the environment or ./.env (docs/containers.md)")
}

func runRun(cmd *cobra.Command, files []string, f runFlags, rf resumeFlags) error {
	opts, err := optionsFrom(cmd, f)
	if rf.force { // only a resume has something to force
		const why = "--force: only with --resume DIR (it overrides a resume's refusal); a new run has nothing to force"
		var bad badInputError
		if err == nil {
			err = badInputf("%s", why)
		} else if errors.As(err, &bad) {
			err = badInputf("%v\n%s", err, why)
		}
	}
	if err != nil {
		return withFileProblems(err, files, f.quick)
	}
	plans, err := loadPlans(files, f.quick, opts)
	if err != nil {
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
	return runPlans(cmd, plans, opts, root)
}

// loadPlans parses and plans every scenario file before anything runs;
// every problem of every file is reported at once, as bad input.
func loadPlans(files []string, quick bool, opts lab.Options) ([]lab.Plan, error) {
	var plans []lab.Plan
	var problems []string
	for _, file := range files {
		s, err := scenario.Load(file, scenario.Options{Quick: quick})
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		p, err := lab.MakePlan(s, opts)
		if err != nil { // each problem says its file:line, or its flag
			problems = appendNew(problems, strings.Split(err.Error(), "\n")...)
			continue
		}
		plans = append(plans, p)
	}
	if len(problems) > 0 {
		return nil, badInput(errors.New(strings.Join(problems, "\n")))
	}
	return plans, nil
}

// optionsFrom checks the shared flags and turns them into lab options.
// Every problem of the flags is reported at once, as bad input.
func optionsFrom(cmd *cobra.Command, f runFlags) (lab.Options, error) {
	var problems []string
	var fatal error // an error that is no bad input (the machine)
	add := func(err error) {
		var bad badInputError
		switch {
		case err == nil:
		case errors.As(err, &bad):
			problems = appendNew(problems, strings.Split(err.Error(), "\n")...)
		case fatal == nil:
			fatal = err
		}
	}
	add(checkRunFlags(cmd, f))
	filter, err := parseCaseFilter(f.cases)
	add(badInput(err))
	ciTarget, err := parsePercent(f.ci)
	if err != nil {
		add(badInputf("--ci: %v", err))
	}
	if f.maxReps < 0 || cmd.Flags().Changed("max-reps") && f.maxReps < 1 {
		add(badInputf("--max-reps must be at least 1, got %d", f.maxReps))
	}
	if f.parallel < 0 || cmd.Flags().Changed("parallel") && f.parallel < 1 {
		add(badInputf("--parallel must be at least 1, got %d", f.parallel))
	}
	if f.tcpCongestion != "" {
		add(badInput(netem.CheckCongestionControl(f.tcpCongestion)))
	}
	urls, err := parseURLs(f.urls)
	add(err)
	cpus, err := parseCPUs(f.cpus)
	add(err)
	if urls == nil {
		urls = map[string]string{}
	}
	brokerPID, containerPIDs, err := resolveContainers(f.containers, urls, f.brokerPID, processEnv(), dockerPID, netnsInode)
	add(err)
	if fatal != nil {
		return lab.Options{}, fatal
	}
	if len(problems) > 0 {
		return lab.Options{}, badInput(errors.New(strings.Join(problems, "\n")))
	}
	brokers := f.brokers
	if len(brokers) == 0 && len(containerPIDs) > 0 { // the containers' brokers, not the file's
		brokers = sortedKeys(containerPIDs)
	}
	return lab.Options{CPUs: cpus, WarmupRun: f.warmupRun, SkipUnsupported: f.skipUnsupported, BrokerPID: brokerPID, BrokerPIDs: containerPIDs, LabName: f.labName, CITarget: ciTarget, MaxReps: f.maxReps, URLs: urls, Brokers: brokers,
		Networks: f.networks, Cases: filter, Reps: f.reps, Quick: f.quick, Seed: f.seed, Parallel: f.parallel,
		Log: cmd.ErrOrStderr(), Verbose: f.verbose, TCPCongestion: f.tcpCongestion}, nil
}

// withFileProblems adds to bad flags the problems of the scenario files
// (as far as they can be checked without the flags), so that one try
// shows them all; any other error is returned as it is.
func withFileProblems(flagErr error, files []string, quick bool) error {
	var bad badInputError
	if !errors.As(flagErr, &bad) {
		return flagErr
	}
	problems := strings.Split(flagErr.Error(), "\n")
	for _, file := range files {
		if _, err := scenario.Load(file, scenario.Options{Quick: quick}); err != nil {
			problems = appendNew(problems, strings.Split(err.Error(), "\n")...)
		}
	}
	return badInput(errors.New(strings.Join(problems, "\n")))
}

// runPlans runs validated plans one after the other and prints a summary
// of each; the first SIGINT or SIGTERM stops them all. A resumable run
// (out holds its run.json) logs the part in out's parts.log: started, and
// how it ended.
func runPlans(cmd *cobra.Command, plans []lab.Plan, opts lab.Options, out string) error {
	ctx, stop := interruptible(context.Background(), cmd.ErrOrStderr())
	defer stop()
	return inPart(cmd, out, func() error { return runPlansIn(ctx, cmd, plans, opts, out) })
}

// inPart runs a part of the run in out (pslab run or pslab capacity, or
// their --resume) and logs it in out's parts.log: started, and how it
// ended.
func inPart(cmd *cobra.Command, out string, run func() error) error {
	part := beginPart(cmd, out)
	err := run()
	if part != nil {
		if perr := part.End(exitCodeOf(err)); perr != nil {
			fmt.Fprintln(cmd.ErrOrStderr(), "parts.log:", perr)
		}
	}
	return err
}

// beginPart starts this part's line in the parts.log of run directory
// out (nil when out holds no run.json: not a resumable run).
func beginPart(cmd *cobra.Command, out string) *results.Part {
	if out == "" {
		return nil
	}
	if _, err := os.Stat(filepath.Join(out, lab.RunInfoFile)); err != nil {
		return nil
	}
	host, _ := os.Hostname()
	var u unix.Utsname
	_ = unix.Uname(&u)
	about := fmt.Sprintf("%s, %s, %d cores, kernel %s, command: pslab %s",
		versionLine(), host, runtime.NumCPU(), unix.ByteSliceToString(u.Release[:]), strings.Join(redactedArgs(os.Args[1:]), " "))
	part, err := results.BeginPart(out, about)
	if err != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "parts.log:", err)
		return nil
	}
	return part
}

// runPlansIn is runPlans under a context the caller made interruptible
// (a command that runs plans in several calls stops at the first signal).
func runPlansIn(ctx context.Context, cmd *cobra.Command, plans []lab.Plan, opts lab.Options, out string) error {
	return runPlansWith(ctx, cmd, plans, opts, out, planOutput{
		describe: func(p lab.Plan) string { return "x " + p.RepsText() },
		after: func(p lab.Plan, sum *lab.Summary) error {
			if len(sum.Records) == 0 {
				return nil
			}
			fmt.Fprintln(cmd.OutOrStdout())
			fmt.Fprintf(cmd.OutOrStdout(), "suite %s (%s), wall time %s, records in %s\n",
				p.Suite.Name, p.Suite.File, sum.Wall.Round(time.Second), filepath.Join(sum.Bundle, "records.jsonl"))
			report.WriteSummary(cmd.OutOrStdout(), sum.Records)
			return nil
		},
	})
}

// planOutput is what a command says around each plan it runs: what the
// plan runs, after "N case(s) x N broker(s) x N network(s)", and what it
// writes once the plan has run (also when it stopped early).
type planOutput struct {
	describe func(p lab.Plan) string
	after    func(p lab.Plan, sum *lab.Summary) error
}

// runPlansWith runs plans one after the other, each into its bundle
// under out, with po's output around each.
func runPlansWith(ctx context.Context, cmd *cobra.Command, plans []lab.Plan, opts lab.Options, out string, po planOutput) error {
	failed := 0
	for _, p := range plans {
		o := opts
		o.Out = outDir(out, p.Suite.Name, len(plans) > 1)
		lock, err := lockOut(o.Out) // covered when the caller holds out
		if err != nil {
			return err
		}
		defer lock.Release()
		for _, n := range p.Notes {
			fmt.Fprintln(cmd.ErrOrStderr(), "note:", n)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "suite %s: %d case(s) x %d broker(s) x %d network(s) %s -> %s\n",
			p.Suite.Name, len(p.Cases), len(p.Brokers), len(p.Networks), po.describe(p), o.Out)
		sum, err := lab.Run(ctx, p, o)
		if sum != nil {
			failed += sum.Failed
			if aerr := po.after(p, sum); aerr != nil && err == nil {
				err = aerr
			}
		}
		if ie, ok := interruption(ctx, err); ok {
			return ie
		}
		if err != nil {
			return err
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d case run(s) failed (see the error field of their records)", failed)
	}
	return nil
}

// parsePercent reads "5%" or "0.05" as a fraction; "" is 0.
func parsePercent(s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	return scenario.ParsePercent(s)
}

func outDir(flag, suite string, many bool) string {
	if flag == "" {
		return filepath.Join("runs", fmt.Sprintf("%s-%s", suite, time.Now().Format("20060102-150405")))
	}
	if many {
		return filepath.Join(flag, suite)
	}
	return flag
}

// parseCaseFilter reads "1-4,17,03a,nats.*": numeric ranges match numeric
// case ids (so 3 matches "03"), "X*" matches ids starting with X, anything
// else matches an id exactly.
func parseCaseFilter(s string) (func(string) bool, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	type span struct{ lo, hi int }
	var spans []span
	exact := map[string]bool{}
	var prefixes []string
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if strings.HasSuffix(part, "*") {
			prefixes = append(prefixes, strings.TrimSuffix(part, "*"))
			continue
		}
		if lo, hi, ok := strings.Cut(part, "-"); ok {
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 == nil && err2 == nil {
				if a > b {
					return nil, fmt.Errorf("--cases: bad range %q (want e.g. 1-4)", part)
				}
				spans = append(spans, span{a, b})
				continue
			}
			if err1 == nil || err2 == nil { // half numeric: a typo of a range
				return nil, fmt.Errorf("--cases: bad range %q (want e.g. 1-4)", part)
			}
		}
		if n, err := strconv.Atoi(part); err == nil {
			spans = append(spans, span{n, n})
			continue
		}
		exact[part] = true
	}
	return func(id string) bool {
		if exact[id] {
			return true
		}
		for _, p := range prefixes {
			if strings.HasPrefix(id, p) {
				return true
			}
		}
		n, err := strconv.Atoi(id)
		if err != nil {
			return false
		}
		for _, sp := range spans {
			if n >= sp.lo && n <= sp.hi {
				return true
			}
		}
		return false
	}, nil
}

// parseURLs reads --url NAME=URL values.
func parseURLs(vals []string) (map[string]string, error) {
	urls := map[string]string{}
	for _, u := range vals {
		name, raw, ok := strings.Cut(u, "=")
		if !ok {
			return nil, badInputf("--url %q: want NAME=URL, e.g. nats=nats://127.0.0.1:4222", u)
		}
		resolved, err := urlFrom(raw)
		if err != nil {
			return nil, badInputf("--url %s=%s: %v", name, raw, err)
		}
		urls[name] = resolved
	}
	return urls, nil
}
