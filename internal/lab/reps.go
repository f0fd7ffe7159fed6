package lab

import (
	"hash/fnv"
	"math"
	"math/rand/v2"

	"pslab/internal/results"
	"pslab/internal/scenario"
)

// defaultMaxReps bounds sequential repetitions when neither the flag nor
// the scenario file gives one.
const defaultMaxReps = 10

// row is one case on one broker and network, with its repetitions so far.
type row struct {
	c        scenario.Case
	attempts int          // runs counted toward the bound: finished, and failed ones of this run
	used     map[int]bool // repetition numbers finished or tried
	subTputs []float64    // of finished repetitions
	latMeans []float64    // mean latency (ms) of finished repetitions with deliveries
	inflight int          // runs taken by a parallel lab and not recorded yet (parallel.go)
	// recs are the finished records in the order they ran and failed the
	// failed runs of this run: what a RowPolicy decides on (policy.go).
	recs   []results.Record
	failed int
}

// add counts a record of this row; finished ones feed the CI.
func (r *row) add(rec *results.Record) {
	r.attempts++
	r.used[rec.Rep] = true
	if !rec.Finished() {
		r.failed++
		return
	}
	r.recs = append(r.recs, *rec)
	r.subTputs = append(r.subTputs, rec.Result.SubTput)
	if rec.Result.Latency.Count > 0 {
		r.latMeans = append(r.latMeans, rec.Result.Latency.MeanMs)
	}
}

// nextRep is the lowest repetition number not finished or tried yet.
func (r *row) nextRep() int {
	n := 1
	for r.used[n] {
		n++
	}
	return n
}

// schedule runs the rows of one broker on one network in rounds: each
// round runs every row still short of its target once, in file order or,
// with `order: random`, in an order drawn from a seed recorded in each
// record, so that drift over time does not line up with the factors.
type schedule struct {
	rows     []*row
	min      int
	ci       float64
	maxReps  int
	random   bool
	seed     int64
	rng      *rand.Rand
	round    int
	queue    []*row
	position int
	// pol decides the rows' runs in a mode other than the paper's
	// repetitions (Options.Policy; nil: repetitions), with what it
	// knows of the network (policy.go).
	pol *rowPolicy
}

// newSchedule builds the rows of broker b on network net (the profile
// name records carry), counting the finished records of a resumed run.
func newSchedule(p Plan, o Options, b, net string, seed int64) *schedule {
	s := &schedule{min: p.Reps, ci: p.CITarget, maxReps: p.maxReps(), random: p.Suite.RandomOrder, pol: newRowPolicy(o, p.Suite.Name, b, net, p.networkArg(net))}
	h := fnv.New64a()
	h.Write([]byte(p.Suite.Name + "/" + net + "/" + b))
	s.seed = seed ^ int64(h.Sum64()>>1)
	s.rng = rand.New(rand.NewPCG(uint64(s.seed), 0x70736c6162))
	for _, c := range p.Cases {
		if !c.ForBroker(b) {
			continue
		}
		r := &row{c: p.caseOn(c, net, o.Quick), used: map[int]bool{}}
		for i := range o.Finished {
			f := &o.Finished[i]
			if f.Suite == p.Suite.Name && f.CaseID == c.ID && f.Broker == b && f.Network.Profile == net {
				r.add(f)
			}
		}
		for _, f := range o.aside {
			if f.Suite == p.Suite.Name && f.CaseID == c.ID && f.Broker == b && f.Network.Profile == net {
				r.used[f.Rep] = true
			}
		}
		s.rows = append(s.rows, r)
	}
	return s
}

// enough reports whether a row has run enough repetitions.
func (s *schedule) enough(r *row) bool {
	if s.pol != nil {
		return s.pol.enough(r)
	}
	return enoughReps(r.attempts, r.subTputs, r.latMeans, s.min, s.ci, s.maxReps)
}

// next returns the row to run next and its place in the order, or nil
// when every row is done. A row with a run in flight (parallel labs) is
// left out of a new round: its repetitions stay one after the other.
func (s *schedule) next() (*row, *results.Order) {
	for len(s.queue) == 0 {
		var short []*row
		for _, r := range s.rows {
			if !s.enough(r) && r.inflight == 0 {
				short = append(short, r)
			}
		}
		if len(short) == 0 {
			return nil, nil
		}
		if s.random {
			s.rng.Shuffle(len(short), func(i, j int) { short[i], short[j] = short[j], short[i] })
		}
		s.round++
		s.queue, s.position = short, 0
	}
	r := s.queue[0]
	s.queue = s.queue[1:]
	s.position++
	ord := &results.Order{Random: s.random, Round: s.round, Position: s.position}
	if s.random {
		ord.Seed = s.seed
	}
	return r, ord
}

// remaining is the number of runs this schedule still needs at least (each
// row up to its minimum, and one more for each row short of its target)
// and at most (each row up to the bound). Runs in flight in parallel labs
// are among them until recorded.
func (s *schedule) remaining() (least, most int) {
	if s.pol != nil {
		return s.pol.remaining(s.rows)
	}
	for _, r := range s.rows {
		if s.enough(r) {
			continue
		}
		least += max(1, s.min-r.attempts)
		if s.ci > 0 {
			most += max(s.min, s.maxReps) - r.attempts
		} else {
			most += s.min - r.attempts
		}
	}
	return least, most
}

// enoughReps decides whether a row has run enough repetitions: at least
// min, and with a CI target until the confidence half-widths of both
// subscriber throughput and mean latency are within it, or maxReps runs.
// The intervals are corrected for the repeated looks
// (results.NewStopping: Bonferroni over the repetition counts it may stop
// at), so that the interval reported at the stop covers with at least
// 95 % (TestCIRuleCoversUnderOptionalStopping).
func enoughReps(done int, subTputs, latMeans []float64, min int, ci float64, maxReps int) bool {
	if done < min {
		return false
	}
	if ci <= 0 {
		return true
	}
	if done >= maxReps {
		return true
	}
	rule := results.NewStopping(ci, min, maxReps)
	return CIReached(subTputs, rule) && CIReached(latMeans, rule)
}

// CIReached reports whether the interval of xs under rule (its
// confidence level) is within rule.Target (a fraction) of their mean. It
// looks only at rule.MinReps values or more: the looks the rule's
// correction counts (a failed repetition adds no value).
func CIReached(xs []float64, rule *results.Stopping) bool {
	if len(xs) < max(rule.MinReps, 2) {
		return false
	}
	mean, half := rule.CIOf(xs)
	if mean == 0 || math.IsNaN(half) {
		return false
	}
	return half/mean <= rule.Target
}

// minDeliveries is the fewest deliveries a window must hold for its
// throughput and latency to be more than a handful of bursts (issue 16;
// docs/report.md sizes the reproduction's windows for it).
const minDeliveries = 1000

func fewDeliveriesFlag(n int64) results.Flag {
	return results.NewFlag(results.FlagFewDeliveries, "%d < %d in the window (lengthen the window: per_network in the scenario file)", n, minDeliveries)
}
