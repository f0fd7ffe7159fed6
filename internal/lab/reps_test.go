package lab

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/load"
	"pslab/internal/metrics"
	"pslab/internal/results"
	"pslab/internal/scenario"
)

func TestEnoughRepsHonoursMinimumCITargetAndCap(t *testing.T) {
	tight := []float64{100, 100.5, 99.5}
	wide := []float64{100, 150, 50}
	assert.False(t, enoughReps(2, tight[:2], tight[:2], 3, 0, 10), "below the minimum")
	assert.True(t, enoughReps(3, wide, wide, 3, 0, 10), "no CI target: the minimum is enough")

	assert.True(t, enoughReps(3, tight, tight, 3, 0.05, 5), "both half-widths 1.2 % of the mean")
	assert.False(t, enoughReps(3, wide, tight, 3, 0.05, 5), "throughput's half-width far above 5 %")
	assert.False(t, enoughReps(3, tight, wide, 3, 0.05, 5), "mean latency's half-width far above 5 %")
	assert.False(t, enoughReps(3, tight, nil, 3, 0.05, 5), "no latency measured: no interval")
	assert.True(t, enoughReps(5, wide, wide, 3, 0.05, 5), "the cap ends it")
	rule := results.NewStopping(0.05, 2, 10)
	assert.False(t, CIReached([]float64{100}, rule), "one value has no interval")
	assert.False(t, CIReached([]float64{0, 0}, rule), "zero mean")
	assert.False(t, CIReached(tight[:2], results.NewStopping(0.05, 3, 10)), "fewer values than the rule's minimum: no look")
	assert.True(t, CIReached(tight, results.NewStopping(0.05, 3, 10)))
	// 9 % of the mean: within 5 % at plain 95 % (half-width 2.5 %)? At
	// 1 - 0.05/8 (t(0.99688, 3) = 6.4 against 3.18) it is twice as wide.
	mid := []float64{100, 103, 97, 100}
	assert.True(t, CIReached(mid, &results.Stopping{Target: 0.05, MinReps: 3, MaxReps: 10, Looks: 1, Level: 0.95}))
	assert.False(t, CIReached(mid, &results.Stopping{Target: 0.025, MinReps: 3, MaxReps: 10, Looks: 8, Level: metrics.LooksLevel(8)}))
}

// TestCIRuleCoversUnderOptionalStopping: paper mode's `ci:` rule (at least
// 3, at most 10 repetitions, until the intervals of subscriber throughput
// and mean latency are within ±5 %) on normal data with a fixed seed, at
// CVs of 2-10 % and with the two metrics independent (ρ = 0) or moving
// together (ρ = 1: the rule then looks at one metric, the worst case). The interval reported at the
// stop, corrected over the 8 looks (results.NewStopping, what enoughReps
// and the report use), covers the true mean of each metric in at least
// 94 % of the trials of every setting; the plain 95 % interval under the
// same rule, stopped on itself (the old rule), covers less where the rule
// looks at one metric (ρ = 1, CV 6-10 %: 91 %). Deterministic: the same counts every time.
func TestCIRuleCoversUnderOptionalStopping(t *testing.T) {
	const trials, mu = 4000, 100.0
	rng := rand.New(rand.NewPCG(31, 4))
	corrected := results.NewStopping(0.05, 3, 10)
	require.Equal(t, 8, corrected.Looks)
	plain := &results.Stopping{Target: 0.05, MinReps: 3, MaxReps: 10, Looks: 1, Level: 0.95}
	type tally struct{ covered, runs, n int }
	// run repeats one row under rule until it stops, and counts whether
	// the intervals at the stop cover mu.
	run := func(rule *results.Stopping, cv, rho float64, tl *tally) {
		var sub, lat []float64
		for done := 1; ; done++ {
			z := rng.NormFloat64()
			sub = append(sub, mu*(1+cv*z))
			lat = append(lat, mu*(1+cv*(rho*z+math.Sqrt(1-rho*rho)*rng.NormFloat64())))
			stop := done >= rule.MinReps && (done >= rule.MaxReps || CIReached(sub, rule) && CIReached(lat, rule))
			if rule == corrected {
				require.Equal(t, stop, enoughReps(done, sub, lat, 3, 0.05, 10), "the rule tested is enoughReps")
			}
			if stop {
				break
			}
		}
		for _, xs := range [][]float64{sub, lat} {
			m, h := rule.CIOf(xs)
			if math.Abs(m-mu) <= h {
				tl.covered++
			}
			tl.n++
		}
		tl.runs += len(sub)
	}
	var early tally // the plain rule where it mostly stops before the cap
	for _, rho := range []float64{0, 1} {
		for _, cv := range []float64{0.02, 0.04, 0.06, 0.10} {
			var c, p tally
			for range trials {
				run(corrected, cv, rho, &c)
				run(plain, cv, rho, &p)
			}
			t.Logf("ρ %.1f, CV %2.0f %%: corrected covers %.3f in %.2f reps on average; plain 95 %% covers %.3f in %.2f reps",
				rho, 100*cv, float64(c.covered)/float64(c.n), float64(c.runs)/trials, float64(p.covered)/float64(p.n), float64(p.runs)/trials)
			assert.GreaterOrEqual(t, float64(c.covered)/float64(c.n), 0.94, "ρ %.1f, CV %.0f %%: the corrected interval at the stop covers", rho, 100*cv)
			if rho == 1 && cv >= 0.06 {
				early.covered, early.n = early.covered+p.covered, early.n+p.n
			}
		}
	}
	t.Logf("plain 95 %%, one metric, CV 6-10 %%: covers %.3f", float64(early.covered)/float64(early.n))
	assert.Less(t, float64(early.covered)/float64(early.n), 0.93, "the plain interval under optional stopping covers less")
}

// repsPlan is a plan of n cases on nats over wireline.
func repsPlan(n, reps int, ci float64, random bool) Plan {
	s := &scenario.Suite{Name: "t", File: "t.yaml", Brokers: []string{"nats"}, Networks: []string{"wireline"}, Reps: reps, RandomOrder: random}
	for i := 1; i <= n; i++ {
		c := scenario.Defaults()
		c.ID = fmt.Sprintf("%02d", i)
		s.Cases = append(s.Cases, c)
	}
	return Plan{Suite: s, Brokers: s.Brokers, Networks: s.Networks, Cases: s.Cases, Reps: reps, CITarget: ci}
}

// repRecord is a finished (or failed) record of case id, repetition rep.
func repRecord(id string, rep int, tput, lat float64, errText string) results.Record {
	r := results.Record{Suite: "t", CaseID: id, Broker: "nats", Rep: rep, Network: results.Network{Profile: "wireline"}, Error: errText}
	if errText == "" {
		r.Result = &load.Result{SubTput: tput, Latency: metrics.LatencySummary{Count: 10, MeanMs: lat}}
	}
	return r
}

// drive runs a schedule to its end, each run giving values from vals
// (by case id), and returns the ids in run order with their rounds.
func drive(t *testing.T, s *schedule, vals func(id string, n int) (float64, float64)) (ids []string, rounds []int) {
	for i := 0; i < 1000; i++ {
		r, ord := s.next()
		if r == nil {
			return ids, rounds
		}
		tput, lat := vals(r.c.ID, r.attempts)
		rec := repRecord(r.c.ID, r.nextRep(), tput, lat, "")
		r.add(&rec)
		ids = append(ids, r.c.ID)
		rounds = append(rounds, ord.Round)
	}
	t.Fatal("schedule did not end")
	return nil, nil
}

func TestScheduleRunsRoundsInFileOrder(t *testing.T) {
	s := newSchedule(repsPlan(3, 2, 0, false), Options{}, "nats", "wireline", 1)
	least, most := s.remaining()
	assert.Equal(t, 6, least)
	assert.Equal(t, 6, most)
	ids, rounds := drive(t, s, func(string, int) (float64, float64) { return 1, 1 })
	assert.Equal(t, []string{"01", "02", "03", "01", "02", "03"}, ids)
	assert.Equal(t, []int{1, 1, 1, 2, 2, 2}, rounds)
}

func TestScheduleRandomOrderIsSeededPerRound(t *testing.T) {
	order := func(seed int64) []string {
		ids, _ := drive(t, newSchedule(repsPlan(20, 3, 0, true), Options{}, "nats", "wireline", seed),
			func(string, int) (float64, float64) { return 1, 1 })
		return ids
	}
	a := order(1)
	require.Len(t, a, 60)
	assert.Equal(t, a, order(1), "the same seed gives the same order")
	assert.NotEqual(t, a, order(2), "another seed another order")
	for round := 0; round < 3; round++ {
		seen := map[string]bool{}
		for _, id := range a[round*20 : (round+1)*20] {
			seen[id] = true
		}
		assert.Len(t, seen, 20, "round %d runs every case once", round+1)
	}
	assert.NotEqual(t, a[:20], a[20:40], "each round draws its own order")
}

func TestScheduleRepeatsOnlyRowsShortOfTheCI(t *testing.T) {
	s := newSchedule(repsPlan(2, 3, 0.05, false), Options{}, "nats", "wireline", 1)
	least, most := s.remaining()
	assert.Equal(t, 6, least)
	assert.Equal(t, 20, most, "up to the default bound of 10 each")
	noisy := []float64{100, 160, 60, 130, 70, 150, 50, 140, 80, 120}
	ids, _ := drive(t, s, func(id string, n int) (float64, float64) {
		if id == "02" { // steady throughput, noisy latency
			return 100, noisy[n]
		}
		return 100, 10
	})
	count := map[string]int{}
	for _, id := range ids {
		count[id]++
	}
	assert.Equal(t, 3, count["01"], "within 5 % after the minimum")
	assert.Equal(t, 10, count["02"], "latency never within 5 %: the bound")
}

func TestScheduleResumesWithoutRepeatingFinishedReps(t *testing.T) {
	interrupted := repRecord("01", 2, 100, 10, "")
	interrupted.Flags = []results.Flag{results.ParseFlag("interrupted: by a signal")}
	finished := []results.Record{
		repRecord("01", 1, 100, 10, ""), interrupted, repRecord("01", 3, 100, 10, ""),
		repRecord("02", 1, 0, 0, "purge: broker gone"),
		repRecord("03", 1, 100, 10, ""), repRecord("03", 2, 100, 10, ""), repRecord("03", 3, 100, 10, ""),
		repRecord("01", 4, 100, 10, ""), // another broker's: not this row's
	}
	finished[7].Broker = "artemis"
	var f []results.Record
	for _, r := range finished {
		if r.Finished() {
			f = append(f, r)
		}
	}
	require.Len(t, f, 6, "interrupted and failed records are not finished")
	s := newSchedule(repsPlan(3, 3, 0, false), Options{Finished: f}, "nats", "wireline", 1)
	var got []string
	for {
		r, _ := s.next()
		if r == nil {
			break
		}
		rep := r.nextRep()
		got = append(got, fmt.Sprintf("%s/r%d", r.c.ID, rep))
		rec := repRecord(r.c.ID, rep, 100, 10, "")
		r.add(&rec)
	}
	assert.Equal(t, []string{"01/r2", "02/r1", "02/r2", "02/r3"}, got)
}

func TestPerNetworkPhasesApplyToTheSchedule(t *testing.T) {
	p := repsPlan(1, 1, 0, false)
	d := 90 * time.Second
	p.Suite.PerNetwork = map[string]scenario.Phases{"wireline": {Window: &d}}
	s := newSchedule(p, Options{}, "nats", "wireline", 1)
	assert.Equal(t, d, s.rows[0].c.Window)
	assert.Equal(t, scenario.Defaults().Warmup, s.rows[0].c.Warmup, "fields not given keep the case's")
}

func TestFewDeliveriesFlag(t *testing.T) {
	r := record(50, 50, true, 0)
	r.Result.Counts.ReceivedInWindow = 999
	assert.Equal(t, []string{"few-deliveries"}, flagNames(flagsFor(r)))
	r.Result.Counts.ReceivedInWindow = 1000
	assert.Empty(t, flagsFor(r))
}
