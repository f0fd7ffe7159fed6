package lab

import (
	"fmt"
	"time"

	"pslab/internal/results"
)

// overheadEstimate is the time per case run outside warm-up, window and
// drain assumed before any run of a network was measured (connect, idle
// wait, purges, close; docs/report.md measures it).
const overheadEstimate = 3 * time.Second

// progress estimates a whole run's remaining time: per network, the runs
// still due times the measured time per case run (from the end of one run
// to the end of the next, set-up between runs included), or before the
// first run of a network the case's warm-up, window and drain plus
// overheadEstimate.
type progress struct {
	start time.Time
	done  int
	// block is the schedule of the broker x network running now; its
	// remaining runs replace the plan's count for it.
	block    *schedule
	blockKey string
	// finished blocks, and the measured time per run by network.
	finished map[string]bool
	perRun   map[string]time.Duration
	runs     map[string]int
	last     time.Time
	plan     Plan
	// nets are the networks' profile names, in plan order.
	nets []string
	// labs is the number of labs running a network's cases at once
	// (parallel.go; absent: one).
	labs map[string]int
	// quick: a --quick run (its phases over shaped links, Plan.caseOn).
	quick bool
	// policy, when the run has one, estimates the runs of rows not
	// started yet (policy.go).
	policy RowPolicy
}

func newProgress(p Plan, nets []string, now time.Time) *progress {
	return &progress{start: now, last: now, plan: p, nets: nets,
		finished: map[string]bool{}, perRun: map[string]time.Duration{}, runs: map[string]int{}}
}

func blockKey(net, b string) string { return net + "/" + b }

// begin marks the start of broker b on network net with its schedule.
func (pr *progress) begin(net, b string, s *schedule) {
	pr.block, pr.blockKey = s, blockKey(net, b)
}

// end marks the current block done.
func (pr *progress) end() { pr.finished[pr.blockKey], pr.block = true, nil }

// ran records one case run on net ending at now.
func (pr *progress) ran(net string, now time.Time) {
	d := now.Sub(pr.last)
	pr.last = now
	pr.done++
	n := pr.runs[net]
	pr.perRun[net] = (pr.perRun[net]*time.Duration(n) + d) / time.Duration(n+1)
	pr.runs[net] = n + 1
}

// perRunOf is the measured or estimated time of one case run on net. The
// measured time runs from one record to the next, so with labs side by
// side it is already the time per run of all of them; the estimate is
// divided by the number of labs.
func (pr *progress) perRunOf(net string) time.Duration {
	if d, ok := pr.perRun[net]; ok {
		return d
	}
	ww, drain := pr.plan.meanPhases(net, pr.quick, pr.policy)
	labs := time.Duration(max(1, pr.labs[net]))
	return (ww + drain + overheadEstimate) / labs
}

// meanPhases are the mean warm-up plus window, and the mean drain, of the
// plan's cases on network net (a profile name), as they run (caseOn:
// quick's phases over a shaped link), or the phases a PhasedPolicy gives
// its runs there.
func (p Plan) meanPhases(net string, quick bool, pol RowPolicy) (warmupWindow, drain time.Duration) {
	if w, win, d, ok := PolicyPhases(pol, p.networkArg(net)); ok {
		return w + win, d
	}
	n := 0
	for _, c := range p.Cases {
		c = p.caseOn(c, net, quick)
		warmupWindow += c.Warmup + c.Window
		drain += c.Drain
		n++
	}
	if n == 0 {
		return 0, 0
	}
	return warmupWindow / time.Duration(n), drain / time.Duration(n)
}

// left is the remaining time, at least and at most (the most differs when
// rows repeat until a CI target).
func (pr *progress) left() (least, most time.Duration, runsLeast, runsMost int) {
	for _, net := range pr.nets {
		per := pr.perRunOf(net)
		for _, b := range pr.plan.Brokers {
			k := blockKey(net, b)
			var l, m int
			switch {
			case pr.finished[k]:
			case k == pr.blockKey && pr.block != nil:
				l, m = pr.block.remaining()
			default:
				l, m = pr.plannedRuns(b)
			}
			least += time.Duration(l) * per
			most += time.Duration(m) * per
			runsLeast += l
			runsMost += m
		}
	}
	return least, most, runsLeast, runsMost
}

// plannedRuns is the runs of broker b on a network not started yet.
func (pr *progress) plannedRuns(b string) (least, most int) {
	if pr.policy != nil {
		return pr.policyRuns(b)
	}
	rows := 0
	for _, c := range pr.plan.Cases {
		if c.ForBroker(b) {
			rows++
		}
	}
	least = rows * pr.plan.Reps
	most = least
	if pr.plan.CITarget > 0 {
		most = rows * max(pr.plan.Reps, pr.plan.maxReps())
	}
	return least, most
}

// line is the progress prefix of a case line: runs done of the total
// expected, the elapsed time and the ETA of the whole run.
func (pr *progress) line(now time.Time) string {
	least, most, rl, rm := pr.left()
	elapsed := now.Sub(pr.start).Round(time.Second)
	s := fmt.Sprintf("[%d/%d", pr.done, pr.done+rl)
	if rm > rl {
		s += fmt.Sprintf(", at most %d", pr.done+rm)
	}
	s += fmt.Sprintf("] elapsed %s, left %s", fmtDur(elapsed), fmtDur(least))
	if most > least {
		s += fmt.Sprintf(" to %s", fmtDur(most))
	}
	s += fmt.Sprintf(" (ETA %s", now.Add(least).Format("15:04"))
	if most > least {
		s += fmt.Sprintf(" to %s", now.Add(most).Format("Jan 2 15:04"))
	}
	return s + ")"
}

// fmtDur prints a duration as 1h02m, 5m07s or 42s.
func fmtDur(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	switch {
	case h > 0:
		return fmt.Sprintf("%dh%02dm", h, m)
	case m > 0:
		return fmt.Sprintf("%dm%02ds", m, s)
	}
	return fmt.Sprintf("%ds", s)
}

// profileNames are the profile names of networks as given (a name or a
// profile YAML file), as records carry them.
func profileNames(nets []string) []string {
	out := make([]string, 0, len(nets))
	for _, n := range nets {
		if spec, err := loadNetwork(n); err == nil {
			n = spec.recordName()
		}
		out = append(out, n)
	}
	return out
}

// networkArg is the --network value (a built-in profile's name or a
// profile file's path) of the plan's network whose records carry profile
// name name, else name: a profile file cannot be loaded by the name inside
// it, and the estimate (dry run, ETA) would take it for an unshaped path.
func (p Plan) networkArg(name string) string {
	for i, n := range profileNames(p.Networks) {
		if n == name {
			return p.Networks[i]
		}
	}
	return name
}

// maxReps is the bound on repetitions of a row under a CI target.
func (p Plan) maxReps() int {
	if p.MaxReps > 0 {
		return p.MaxReps
	}
	return defaultMaxReps
}

// RepsText says how many repetitions each row runs: "3 rep(s)", or with a
// CI target "3-10 rep(s) until the 95 % CIs of sub tput and mean latency
// are within ±5 % (bonferroni-looks: each of 8 looks at 99.38 %)", and
// the order.
func (p Plan) RepsText() string {
	s := fmt.Sprintf("%d rep(s)", p.Reps)
	if p.CITarget > 0 {
		st := results.NewStopping(p.CITarget, p.Reps, p.maxReps())
		s = fmt.Sprintf("%d-%d rep(s) until the 95 %% CIs of sub tput and mean latency are within ±%.3g %% (%s: each of %d looks at %.2f %%)",
			p.Reps, max(p.Reps, p.maxReps()), 100*p.CITarget, st.Method, st.Looks, 100*st.Level)
	}
	if p.Suite != nil && p.Suite.RandomOrder {
		s += ", in seeded random rounds"
	}
	return s
}
