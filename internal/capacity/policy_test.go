package capacity

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/lab"
	"pslab/internal/results"
	"pslab/internal/scenario"
	"pslab/netem"
)

// system is a synthetic broker for the policy: a load is sustained when
// it is at most its capacity times a noise factor drawn per probe, and
// its latency grows with the load.
type system struct {
	capacity float64
	noise    float64 // the threshold varies by ±noise (uniform) per probe
	latNoise float64 // the latency's relative noise per run (default 0.02)
	rng      *rand.Rand
}

// run makes the record of one policy run on the system.
func (s *system) run(run lab.PolicyRun, rep int) results.Record {
	c := run.Case
	offered := c.Rate * float64(c.Publishers)
	threshold := s.capacity * (1 + s.noise*(2*s.rng.Float64()-1))
	ln := s.latNoise
	if ln == 0 {
		ln = 0.02
	}
	delivered, p99 := 1.0, 1+2*offered/s.capacity*math.Exp(ln*s.rng.NormFloat64())
	if offered > threshold {
		delivered, p99 = threshold/offered, 400
	}
	r := synthetic(c.Publishers, c.Rate, c.Window.Seconds(), delivered, float64(c.Subscribers), p99)
	r.Result.Latency.MeanMs = p99 / 3
	if delivered < 1 {
		r.Result.Latency.Count = int64(float64(r.Result.Counts.DueInWindow) * delivered)
	}
	r.Suite, r.CaseID, r.Broker, r.Rep, r.Factors = "s", c.ID, "b", rep, c.Factors
	r.Network.Profile = "wireline"
	run.Judge(r)
	return *r
}

func policyRow() lab.PolicyRow {
	c := scenario.Defaults()
	c.ID, c.Publishers, c.Subscribers, c.Topics = "01", 2, 2, 1
	return lab.PolicyRow{Suite: "s", Broker: "b", Network: "wireline", Case: c, Link: netem.Profile{Name: "wireline"},
		Floor: &results.LatencyFloor{FloorMs: 0.05}}
}

// drive runs the policy on the system until the row is done.
func drive(t *testing.T, p Params, s *system) []results.Record {
	t.Helper()
	return driveWith(t, p, s, nil)
}

// TestPolicyFindsTheCapacity: on a system with a sharp threshold the
// pilot and the counted searches bracket it, the capacity is within the
// resolution of it, the CI covers it, and then every load runs its
// first stage; each record says its mode, offered load and verdict.
func TestPolicyFindsTheCapacity(t *testing.T) {
	p := DefaultParams()
	p.DefaultStart = 1000
	s := &system{capacity: 23456, rng: rand.New(rand.NewPCG(3, 4))}
	recs := drive(t, p, s)
	rs := p.Results(recs)
	require.Len(t, rs, 1)
	r := rs[0]
	assert.True(t, r.Done)
	assert.Equal(t, p.MinSearches, r.Searches, "no spread: Stein's first stage is enough")
	assert.InDelta(t, 1, r.Capacity/s.capacity, 0.02)
	assert.LessOrEqual(t, r.Lo, s.capacity)
	assert.GreaterOrEqual(t, r.Hi, s.capacity)
	assert.InDelta(t, 1, r.HalfPct, 0.01, "no spread: the CI is half the resolution")
	assert.True(t, r.WithinTarget(p))
	assert.Equal(t, BoundBroker, r.Bound.Name)
	assert.Equal(t, "elimination", r.Bound.Basis, "no CPU samples")
	require.Len(t, r.Levels, 3)
	for _, l := range r.Levels {
		assert.GreaterOrEqual(t, l.N, p.LatencyMinReps)
		assert.InEpsilon(t, l.Fraction*r.Capacity, l.Load, 1e-3)
		assert.Equal(t, l.N, l.Sustained)
	}
	probes, fixed := 0, 0
	for i, rec := range recs {
		require.NotNil(t, rec.Probe, "record %d", i)
		assert.InDelta(t, rec.Settings.Rate*2, rec.Probe.OfferedPerS, 1e-6)
		assert.NotEmpty(t, rec.Probe.Why)
		switch rec.Mode {
		case results.ModeCapacityProbe:
			probes++
			assert.Positive(t, rec.Probe.Step)
			assert.Contains(t, []string{PhaseRamp, PhaseBisect, PhaseConfirm}, rec.Probe.Phase)
			if rec.Probe.Search == 0 {
				assert.Zero(t, rec.Probe.Confirm, "the pilot: one probe decides")
				assert.NotEqual(t, PhaseConfirm, rec.Probe.Phase)
			} else {
				assert.Equal(t, DefaultConfirmUnshaped, rec.Probe.Confirm, "a counted search on the wireline: 2 of 3")
			}
			assert.NotEmpty(t, rec.Probe.StartFrom)
			assert.Nil(t, rec.FixedLoad)
		case results.ModeFixedLoad:
			fixed++
			require.NotNil(t, rec.FixedLoad)
			assert.Contains(t, []int{1, 2}, rec.FixedLoad.Stage)
			assert.Positive(t, rec.FixedLoad.TargetMeanMs)
		default:
			t.Errorf("record %d: mode %q", i, rec.Mode)
		}
	}
	assert.Equal(t, r.Probes, probes)
	t.Logf("%d probes, %d fixed-load runs, capacity %s (true %g)", probes, fixed, r.Text, s.capacity)
}

// TestPolicyIsAReplay: the policy is a pure function of the records, so a
// resumed run goes on with the same next run: for every prefix of a
// row's records, Next asks for the run that came next.
func TestPolicyIsAReplay(t *testing.T) {
	p := DefaultParams()
	s := &system{capacity: 5000, noise: 0.03, rng: rand.New(rand.NewPCG(5, 6))}
	recs := drive(t, p, s)
	row := policyRow()
	for i := range recs {
		run, done := Policy{P: p}.Next(row, recs[:i])
		require.False(t, done, "prefix %d", i)
		assert.InDelta(t, recs[i].Settings.Rate, run.Case.Rate, 1e-9, "prefix %d", i)
		probe := &results.Record{}
		*probe = recs[i]
		probe.Mode, probe.Probe, probe.FixedLoad = "", nil, nil
		run.Judge(probe)
		assert.Equal(t, recs[i].Mode, probe.Mode, "prefix %d", i)
		if recs[i].Probe.Phase != PhaseFixed {
			assert.Equal(t, recs[i].Probe.Search, probe.Probe.Search, "prefix %d", i)
			assert.Equal(t, recs[i].Probe.Step, probe.Probe.Step, "prefix %d", i)
		}
	}
	_, done := Policy{P: p}.Next(row, recs)
	assert.True(t, done)
}

// TestPolicyNoisyThreshold: with a threshold that moves ±4 % from probe
// to probe, Stein's rule asks for more searches than the first stage,
// and the capacity stays within 5 % of the true one.
func TestPolicyNoisyThreshold(t *testing.T) {
	p := DefaultParams()
	p.Loads = nil
	s := &system{capacity: 800, noise: 0.04, rng: rand.New(rand.NewPCG(7, 8))}
	recs := drive(t, p, s)
	r := p.Results(recs)[0]
	assert.InDelta(t, 1, r.Capacity/s.capacity, 0.05)
	assert.GreaterOrEqual(t, r.Searches, p.MinSearches)
	assert.LessOrEqual(t, r.Searches, p.MaxSearches)
	assert.False(t, math.IsNaN(r.HalfPct))
	t.Logf("searches %d, estimates %v, capacity %s", r.Searches, r.Estimates, r.Text)
}

// TestPolicyBusyMachineRunsAgain: a probe flagged machine-busy is run
// again at the same load; the third busy attempt in a row counts.
func TestPolicyBusyMachineRunsAgain(t *testing.T) {
	p := DefaultParams()
	row := policyRow()
	s := &system{capacity: 1e9, rng: rand.New(rand.NewPCG(1, 1))}
	first, _ := Policy{P: p}.Next(row, nil)
	rec := s.run(first, 1)
	rec.Flags = []results.Flag{results.NewFlag(results.FlagMachineBusy, "others used 50%%")}
	recs := []results.Record{rec}
	again, _ := Policy{P: p}.Next(row, recs)
	assert.Equal(t, first.Case.Rate, again.Case.Rate, "the same load again")
	rec2 := s.run(again, 2)
	rec2.Flags = rec.Flags
	recs = append(recs, rec2)
	third, _ := Policy{P: p}.Next(row, recs)
	assert.Equal(t, first.Case.Rate, third.Case.Rate)
	rec3 := s.run(third, 3)
	rec3.Flags = rec.Flags
	assert.Equal(t, 3, rec3.Probe.Step, "steps count every attempt")
	recs = append(recs, rec3)
	next, _ := Policy{P: p}.Next(row, recs)
	assert.Greater(t, next.Case.Rate, first.Case.Rate, "the third busy attempt counts: sustained, the ramp goes on")
	rw := p.Analyze(row, recs)
	assert.Equal(t, 2, rw.Pilot.Busy)
}

// TestParamsCheck: every bad parameter is named, all at once.
func TestParamsCheck(t *testing.T) {
	p := DefaultParams()
	require.NoError(t, p.Check())
	p.Resolution, p.Target, p.MinSearches, p.Loads = 0.1, 0.04, 1, []float64{0.5, 1.2}
	err := p.Check()
	require.Error(t, err)
	for _, want := range []string{"--target ±4 %", "--reps must be at least 2", "--loads: 120 %", "coarser than the pilot's"} {
		assert.ErrorContains(t, err, want)
	}
}

// TestMarginalFailIsProbedAgain: a probe that fails by a small margin on
// the backlog alone is probed again at the same load, and that verdict
// counts; a clear failure counts at once.
func TestMarginalFailIsProbedAgain(t *testing.T) {
	p := DefaultParams()
	row := policyRow()
	s := &system{capacity: 1e9, rng: rand.New(rand.NewPCG(2, 2))}
	first, _ := Policy{P: p}.Next(row, nil)
	rec := s.run(first, 1)
	// 1.5 % of the due deliveries added to the backlog: a transient.
	rec.Result.SubSeries[3] -= int64(0.015 * float64(rec.Result.Counts.DueInWindow))
	first.Judge(&rec)
	require.False(t, rec.Probe.Sustained, rec.Probe.Why)
	require.True(t, rec.Probe.Marginal, rec.Probe.Why)
	recs := []results.Record{rec}
	again, _ := Policy{P: p}.Next(row, recs)
	assert.Equal(t, first.Case.Rate, again.Case.Rate, "the same load again")
	rec2 := s.run(again, 2)
	recs = append(recs, rec2)
	next, _ := Policy{P: p}.Next(row, recs)
	assert.Greater(t, next.Case.Rate, first.Case.Rate, "the second attempt was sustained: the ramp goes on")

	clear := s.run(first, 1)
	clear.Result.Latency.P99Ms = 900
	first.Judge(&clear)
	require.False(t, clear.Probe.Marginal, "a latency failure is not marginal")
	down, _ := Policy{P: p}.Next(row, []results.Record{clear})
	assert.Less(t, down.Case.Rate, first.Case.Rate, "a clear failure counts: the ramp goes down")
}

// TestLatencyOutOfReachStopsAtTheFirstStage: when the first stage shows
// that the latency targets need more runs than the cap, the load keeps
// its first stage and says how many runs it would need.
func TestLatencyOutOfReachStopsAtTheFirstStage(t *testing.T) {
	p := DefaultParams()
	s := &system{capacity: 5000, latNoise: 1, rng: rand.New(rand.NewPCG(9, 9))}
	recs := drive(t, p, s)
	r := p.Results(recs)[0]
	require.Len(t, r.Levels, 3)
	for _, l := range r.Levels {
		assert.Equal(t, p.LatencyMinReps, l.N)
		assert.Greater(t, l.Unreachable, p.LatencyMaxReps)
		assert.False(t, l.Within)
	}
}

// driveWith runs the policy on the system until the row is done; when
// capFor is not nil, it gives the system's capacity per search (the
// pilot is search 0).
func driveWith(t *testing.T, p Params, s *system, capFor func(search int) float64) []results.Record {
	t.Helper()
	row := policyRow()
	var recs []results.Record
	for i := 1; i <= 400; i++ {
		run, done := Policy{P: p}.Next(row, recs)
		if done {
			return recs
		}
		least, most := Policy{P: p}.Left(row, recs)
		require.Positive(t, least, "run %d: a row not done has runs left", i)
		require.GreaterOrEqual(t, most, least)
		if capFor != nil {
			probe := synthetic(run.Case.Publishers, run.Case.Rate, run.Case.Window.Seconds(), 1, float64(run.Case.Subscribers), 1)
			run.Judge(probe) // only to learn which search this run is
			if probe.Probe != nil && probe.Probe.Phase != PhaseFixed {
				s.capacity = capFor(probe.Probe.Search)
			}
		}
		recs = append(recs, s.run(run, i))
	}
	t.Fatal("the policy did not end")
	return nil
}

// A counted search that sustains nothing gives no estimate; the row says
// so (its capacity is from the other searches and may be high), not
// silently.
func TestCountedSearchWithoutASustainedLoadIsSaid(t *testing.T) {
	p := DefaultParams()
	p.DefaultStart = 1000
	s := &system{rng: rand.New(rand.NewPCG(5, 6))}
	recs := driveWith(t, p, s, func(search int) float64 {
		if search == 1 {
			return 1e-3 // the broker stalled for this search's probes
		}
		return 23456
	})
	rs := p.Results(recs)
	require.Len(t, rs, 1)
	r := rs[0]
	assert.Equal(t, 1, r.Unestimated)
	assert.Equal(t, r.Searches, len(r.Estimates)+1)
	assert.Contains(t, r.Text, "1 of 3 counted searches sustained no load")
	assert.InDelta(t, 1, r.Capacity/23456, 0.02, "the capacity is the other searches'")
}

// A counted search that runs out of probes while every load it probed
// was sustained gives the highest of them: a lower bound, said with ≥.
func TestCountedSearchOutOfProbesStillRisingIsALowerBound(t *testing.T) {
	p := DefaultParams()
	p.DefaultStart = 20000
	p.MaxProbes = 4
	s := &system{rng: rand.New(rand.NewPCG(7, 8))}
	recs := driveWith(t, p, s, func(search int) float64 {
		if search == 1 {
			return 1e9 // this search never fails
		}
		return 23456
	})
	rw := p.Analyze(policyRow(), recs)
	require.GreaterOrEqual(t, len(rw.Searches), p.MinSearches)
	require.Equal(t, MaxProbes, rw.Searches[0].State.Outcome)
	require.Zero(t, rw.Searches[0].State.Hi, "search 1 failed nothing")
	require.Equal(t, BoundBroker, rw.Bound.Name, "the other searches failed: the bound rule alone would not say ≥")
	assert.True(t, rw.LowerBound)
	assert.Contains(t, rw.String(), "≥ ")
}
