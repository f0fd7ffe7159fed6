package lab

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/results"
	"pslab/internal/scenario"
	"pslab/netem"
)

// driveShared runs schedule s with labs workers taking rows at once, each
// run giving values from vals (by case id and the row's runs so far). It
// returns the (case, rep) pairs run, and how often a worker found a row it
// took already in flight elsewhere (must be never).
func driveShared(t *testing.T, s *schedule, labs int, vals func(id string, n int) (float64, float64)) (runs map[string]int, reps map[string][]int, overlaps int) {
	t.Helper()
	sh := &sharedSchedule{s: s}
	sh.cond = sync.NewCond(&sh.mu)
	runs, reps = map[string]int{}, map[string][]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range labs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				r, rep, ord, _, _ := sh.take(context.Background())
				if r == nil {
					return
				}
				sh.mu.Lock()
				if r.inflight != 1 {
					overlaps++
				}
				n := r.attempts
				sh.mu.Unlock()
				assert.NotNil(t, ord)
				tput, lat := vals(r.c.ID, n)
				rec := repRecord(r.c.ID, rep, tput, lat, "")
				assert.NoError(t, sh.finish(r, &rec, func() error {
					mu.Lock()
					defer mu.Unlock()
					runs[fmt.Sprintf("%s/%d", r.c.ID, rep)]++
					reps[r.c.ID] = append(reps[r.c.ID], rep)
					return nil
				}))
			}
		}()
	}
	wg.Wait()
	return runs, reps, overlaps
}

// TestSharedScheduleRunsEachRepetitionOnce: three labs share a schedule of
// five cases with three repetitions: every repetition runs exactly once,
// a row never runs in two labs at once, and each row's repetitions are
// numbered 1, 2, 3 in the order they ran.
func TestSharedScheduleRunsEachRepetitionOnce(t *testing.T) {
	for round := 0; round < 20; round++ { // many interleavings
		s := newSchedule(repsPlan(5, 3, 0, round%2 == 1), Options{}, "nats", "wifi-paper", int64(round))
		runs, reps, overlaps := driveShared(t, s, 3, func(string, int) (float64, float64) { return 1, 1 })
		assert.Zero(t, overlaps)
		require.Len(t, runs, 15)
		for k, n := range runs {
			assert.Equal(t, 1, n, k)
		}
		for id, rs := range reps {
			assert.Equal(t, []int{1, 2, 3}, rs, id)
		}
		least, most := s.remaining()
		assert.Zero(t, least+most)
	}
}

// TestSharedScheduleKeepsTheCIRule: under a CI target, rows in parallel
// labs stop as alone: a steady row after its minimum, a noisy one at the
// bound.
func TestSharedScheduleKeepsTheCIRule(t *testing.T) {
	noisy := []float64{100, 160, 60, 130, 70, 150, 50, 140, 80, 120}
	s := newSchedule(repsPlan(4, 3, 0.05, false), Options{}, "nats", "wifi-paper", 1)
	_, reps, overlaps := driveShared(t, s, 3, func(id string, n int) (float64, float64) {
		if id == "02" {
			return 100, noisy[n]
		}
		return 100, 10
	})
	assert.Zero(t, overlaps)
	assert.Len(t, reps["01"], 3)
	assert.Len(t, reps["02"], 10, "the bound")
	assert.Len(t, reps["03"], 3)
	assert.Len(t, reps["04"], 3)
}

// TestSharedScheduleStops: after stop (a lab failed) no lab takes a row.
func TestSharedScheduleStops(t *testing.T) {
	sh := &sharedSchedule{s: newSchedule(repsPlan(2, 1, 0, false), Options{}, "nats", "wifi-paper", 1)}
	sh.cond = sync.NewCond(&sh.mu)
	r, rep, _, _, _ := sh.take(context.Background())
	require.NotNil(t, r)
	assert.Equal(t, 1, rep)
	sh.stop()
	r2, _, _, _, _ := sh.take(context.Background())
	assert.Nil(t, r2)
	sh.giveBack(r)
	assert.Zero(t, r.inflight)
}

func TestParallelLabNamesAndRefusals(t *testing.T) {
	assert.Equal(t, "pslabp2", parallelLabName("", 2))
	assert.Equal(t, "lab7p10", parallelLabName("lab7", 10))
	assert.Equal(t, 1, labsFor(Options{Parallel: 4}, "wireline"), "CPU-bound: alone")
	assert.Equal(t, 4, labsFor(Options{Parallel: 4}, "wifi-paper"))
	assert.Equal(t, 1, labsFor(Options{}, "wifi-paper"))

	s := &scenario.Suite{Name: "t", File: "t.yaml", Brokers: []string{"nats"}, Networks: []string{"wireline"}, Reps: 1,
		Cases: []scenario.Case{scenario.Defaults()}}
	_, err := MakePlan(s, Options{Parallel: 2, URLs: map[string]string{"nats": "nats://127.0.0.1:1"}})
	assert.ErrorContains(t, err, "--url/--broker-pid give one running broker")
	_, err = MakePlan(s, Options{Parallel: 2, BrokerPID: 1})
	assert.ErrorContains(t, err, "--url/--broker-pid give one running broker")
	_, err = MakePlan(s, Options{Parallel: 2, LabName: "abcdefghi"})
	assert.ErrorContains(t, err, "use a shorter --lab")
	p, err := MakePlan(s, Options{Parallel: 2})
	require.NoError(t, err)
	assert.Contains(t, p.Notes, "network wireline is not shaped (CPU-bound): its cases run in one lab, alone")
	p, err = MakePlan(s, Options{})
	require.NoError(t, err)
	assert.Empty(t, p.Notes, "no --parallel, no note")
}

// TestProgressEstimateDividesByLabs: before a network's first run, its
// estimated time per run is shared among its labs.
func TestProgressEstimateDividesByLabs(t *testing.T) {
	p := repsPlan(2, 3, 0, false)
	p.Networks = []string{"wireline", "wifi-paper"}
	pr := newProgress(p, p.Networks, time.Now())
	alone := pr.perRunOf("wifi-paper")
	pr.labs = p.labsByNetwork(Options{Parallel: 4})
	assert.Equal(t, alone/4, pr.perRunOf("wifi-paper"))
	assert.Equal(t, pr.perRunOf("wireline"), alone, "wireline alone (same default phases)")
	pr.ran("wifi-paper", pr.start.Add(10*time.Second))
	assert.Equal(t, 10*time.Second, pr.perRunOf("wifi-paper"), "measured: already the time per run of all labs")
}

// TestParallelLabsOnWifiPaper: NATS on wifi-paper in two labs at once, three
// short cases of two repetitions: every repetition is recorded once, in
// one of the two labs (each runs some), with concurrent_labs 2 and no
// error, and no lab's namespaces are left behind.
func TestParallelLabsOnWifiPaper(t *testing.T) {
	if testing.Short() {
		t.Skip("emulated links skipped in -short mode")
	}
	if err := netem.Supported(); err != nil {
		t.Skipf("no link emulation here: %v", err)
	}
	var cases []scenario.Case
	for i := 1; i <= 3; i++ {
		c := scenario.Defaults()
		c.ID, c.Name = fmt.Sprintf("p%d", i), "parallel"
		c.Publishers, c.Subscribers, c.Topics = 1, 1, 1
		c.Rate, c.Size = 20, 100
		c.Warmup, c.Window, c.Drain = 500*time.Millisecond, 2*time.Second, 2*time.Second
		cases = append(cases, c)
	}
	s := &scenario.Suite{Name: "t", File: "t.yaml", Brokers: []string{"nats"}, Networks: []string{"wifi-paper"}, Reps: 2, Cases: cases}
	var log bytes.Buffer
	o := Options{Out: t.TempDir(), LabName: "labpr", Log: &log, Parallel: 2}
	p, err := MakePlan(s, o)
	require.NoError(t, err)
	sum, err := Run(context.Background(), p, o)
	t.Log(log.String())
	require.NoError(t, err)
	recs, err := results.Read(o.Out)
	require.NoError(t, err)
	require.Len(t, recs, 6)
	assert.Len(t, sum.Records, 6)
	seen := map[string]int{}
	labs := map[string]int{}
	for _, r := range recs {
		where := fmt.Sprintf("%s rep %d", r.CaseID, r.Rep)
		seen[where]++
		labs[r.Network.Lab]++
		assert.Empty(t, r.Error, where)
		assert.Equal(t, 2, r.Settings.ConcurrentLabs, where)
		assert.Equal(t, "namespaces", r.Network.Path, where)
		assert.NotNil(t, r.Network.Verify, "%s: its lab was verified", where)
		assert.NotEmpty(t, r.Network.TCPCongestion, "%s: the TCP congestion control of the lab's namespaces is recorded", where)
	}
	for _, c := range cases {
		for rep := 1; rep <= 2; rep++ {
			assert.Equal(t, 1, seen[fmt.Sprintf("%s rep %d", c.ID, rep)], "%s rep %d", c.ID, rep)
		}
	}
	assert.Len(t, labs, 2, "both labs ran cases: %v", labs)
	assert.Contains(t, labs, "labprp1")
	assert.Contains(t, labs, "labprp2")
	for _, name := range []string{"labprp1", "labprp2"} {
		left, err := netem.Cleanup(name)
		assert.NoError(t, err)
		assert.Empty(t, left, "lab %s left nothing behind", name)
	}
}

// TestParallelFlagOverTheFile: the suite's parallel: applies unless
// --parallel is given; --parallel 1 runs alone.
func TestParallelFlagOverTheFile(t *testing.T) {
	s := &scenario.Suite{Name: "t", File: "t.yaml", Brokers: []string{"nats"}, Networks: []string{"wireline"}, Reps: 1,
		Cases: []scenario.Case{scenario.Defaults()}, Parallel: 3}
	p, err := MakePlan(s, Options{})
	require.NoError(t, err)
	assert.Equal(t, 3, p.Parallel)
	p, err = MakePlan(s, Options{Parallel: 1})
	require.NoError(t, err)
	assert.Equal(t, 1, p.Parallel)
	assert.Empty(t, p.Notes)
	_, err = MakePlan(s, Options{URLs: map[string]string{"nats": "nats://127.0.0.1:1"}})
	assert.ErrorContains(t, err, "one running broker", "the file's parallel: is refused with --url too")
}

// TestRemainingCountsRunsInFlight: a run taken by a lab is still due until
// it is recorded, so the progress total stays the same.
func TestRemainingCountsRunsInFlight(t *testing.T) {
	sh := &sharedSchedule{s: newSchedule(repsPlan(2, 2, 0, false), Options{}, "nats", "wifi-paper", 1)}
	sh.cond = sync.NewCond(&sh.mu)
	r, rep, _, _, _ := sh.take(context.Background())
	require.NotNil(t, r)
	least, most := sh.s.remaining()
	assert.Equal(t, 4, least)
	assert.Equal(t, 4, most)
	rec := repRecord(r.c.ID, rep, 1, 1, "")
	require.NoError(t, sh.finish(r, &rec, func() error {
		l, _ := sh.s.remaining()
		assert.Equal(t, 3, l, "counted before its progress line")
		return nil
	}))
}
