package lab

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/audit"
	"pslab/internal/brokers"
	"pslab/internal/brokers/fake"
	"pslab/internal/driver"
	"pslab/internal/metrics"
	"pslab/internal/results"
	"pslab/internal/scenario"
	"pslab/netem"
)

// Hermetic tests of the lab on the in-memory fake broker: no root (the
// fake runs on the host's loopback, even as root), no broker process.

// fakeCase is a short open-loop case on one topic.
func fakeCase(id string, sub scenario.Subscription) scenario.Case {
	c := scenario.Defaults()
	c.ID, c.Name = id, "fake "+id
	c.Publishers, c.Subscribers, c.Model = 1, 2, scenario.FewToMany
	c.Subscription = sub
	c.DurableName, c.ClientID = "{prefix}-d{sub}", "{prefix}-c{sub}"
	c.Rate = 300
	c.Warmup, c.Window, c.Drain = 200*time.Millisecond, time.Second, 10*time.Second
	return c
}

// runOnFake runs suite s on a fake broker with knobs k through MakePlan
// and Run, and returns the summary and the records read back from the
// bundle.
func runOnFake(t *testing.T, k fake.Knobs, reps int, cases ...scenario.Case) (*Summary, []results.Record) {
	t.Helper()
	reg := &brokers.Registry{}
	reg.Register(fake.Descriptor(k))
	s := &scenario.Suite{Name: "t", File: "t.yaml", Brokers: []string{fake.Name}, Networks: []string{"wireline"}, Reps: reps, Cases: cases}
	var log bytes.Buffer
	o := Options{Out: t.TempDir(), Log: &log, Registry: reg, LabName: "labfk"}
	p, err := MakePlan(s, o)
	require.NoError(t, err)
	sum, err := Run(context.Background(), p, o)
	require.NoError(t, err, log.String())
	recs, err := results.Read(o.Out)
	require.NoError(t, err)
	return sum, recs
}

// TestRunOnFakeEndToEnd: a plan of two cases (one with a subscriber
// disconnect) and two repetitions runs end to end: every record is
// complete, on loopback, flagged simulated, loses nothing, keeps its
// promises, and reads back from the bundle with typed flags.
func TestRunOnFakeEndToEnd(t *testing.T) {
	dis := fakeCase("dis", scenario.Durable)
	dis.Faults = []scenario.Fault{{Kind: scenario.SubscriberDisconnect, At: 300 * time.Millisecond, For: 300 * time.Millisecond, Subscribers: 1}}
	sum, recs := runOnFake(t, fake.Knobs{}, 2, fakeCase("plain", scenario.NonDurable), dis)
	require.Len(t, sum.Records, 4)
	assert.Zero(t, sum.Failed)
	require.Len(t, recs, 4, "every record is in the bundle")
	for i, r := range recs {
		where := fmt.Sprintf("%s rep %d", r.CaseID, r.Rep)
		assert.Empty(t, r.Error, where)
		assert.Equal(t, fake.Name, r.Broker, where)
		assert.Equal(t, sum.Records[i].CaseID, r.CaseID)
		assert.Equal(t, "loopback", r.Network.Path, where)
		assert.NotEmpty(t, r.Network.TCPCongestion, "%s: the TCP congestion control is recorded", where)
		assert.Equal(t, netem.HostCongestionControl(), r.Network.TCPCongestion, where)
		_, sim := results.Flagged(r.Flags, results.FlagSimulated)
		assert.True(t, sim, "%s: a fake record says it measured no broker", where)
		_, lo := results.Flagged(r.Flags, results.FlagLoopback)
		assert.True(t, lo, where)
		require.NotNil(t, r.Result, where)
		n := r.Result.Counts
		assert.Positive(t, n.Received, where)
		assert.Zero(t, n.Lost, where)
		assert.Equal(t, n.Expected, n.Received, where)
		assert.Zero(t, audit.Failed(r.Audit), "%s: %+v", where, r.Audit)
		assert.NotEmpty(t, r.Audit, where)
		assert.NotNil(t, r.Phases, where)
		assert.NotNil(t, r.Resources, where)
		assert.NotNil(t, r.Throughput, where)
	}
	// Repetitions run in rounds (reps.go): every case once, then again.
	reps := map[string][]int{}
	for _, r := range recs {
		reps[r.CaseID] = append(reps[r.CaseID], r.Rep)
	}
	assert.Equal(t, map[string][]int{"plain": {1, 2}, "dis": {1, 2}}, reps)
	for _, r := range recs {
		if r.CaseID == "dis" {
			require.Len(t, r.Result.Faults, 1)
			assert.Equal(t, 1, r.Result.Faults[0].Reconnected)
		}
	}
}

// TestRunOnFakeFlagsWhatWentWrong: a broker that duplicates without
// flagging the redelivery breaks AUTO's promise (audit-failed); one that
// drops leaves the drain incomplete (drain-incomplete), with the loss
// counted.
func TestRunOnFakeFlagsWhatWentWrong(t *testing.T) {
	t.Run("duplicates", func(t *testing.T) {
		_, recs := runOnFake(t, fake.Knobs{DuplicateEvery: 10}, 1, fakeCase("dup", scenario.NonDurable))
		require.Len(t, recs, 1)
		r := recs[0]
		assert.Positive(t, r.Result.Counts.Duplicated)
		assert.Positive(t, audit.Failed(r.Audit))
		_, ok := results.Flagged(r.Flags, results.FlagAuditFailed)
		assert.True(t, ok, "flags: %v", r.Flags)
	})
	t.Run("drops", func(t *testing.T) {
		c := fakeCase("drop", scenario.NonDurable)
		c.Drain = time.Second // what is dropped never comes
		_, recs := runOnFake(t, fake.Knobs{DropEvery: 10}, 1, c)
		require.Len(t, recs, 1)
		r := recs[0]
		assert.Positive(t, r.Result.Counts.Lost)
		f, ok := results.Flagged(r.Flags, results.FlagDrainIncomplete)
		require.True(t, ok, "flags: %v", r.Flags)
		assert.Contains(t, f.Detail, "due deliveries had not arrived")
	})
}

// TestMakePlanRefusesTheFakeOnAnEmulatedLink: an in-memory broker sends
// nothing over a link, so an emulated link is refused for it.
func TestMakePlanRefusesTheFakeOnAnEmulatedLink(t *testing.T) {
	reg := &brokers.Registry{}
	reg.Register(fake.Descriptor(fake.Knobs{}))
	s := &scenario.Suite{Name: "t", File: "t.yaml", Brokers: []string{fake.Name}, Networks: []string{"wifi-paper"}, Reps: 1,
		Cases: []scenario.Case{fakeCase("x", scenario.NonDurable)}}
	_, err := MakePlan(s, Options{Registry: reg})
	assert.ErrorContains(t, err, "runs in memory")
	_, err = MakePlan(s, Options{Registry: reg, Brokers: []string{"nats"}, Networks: []string{"wireline"}})
	assert.ErrorContains(t, err, `unknown broker "nats" (known: fake)`, "the lab knows only the brokers of its registry")
}

// purgeCounter counts a driver's purges by prefix.
type purgeCounter struct {
	driver.Driver
	mu     sync.Mutex
	purged []string
}

func (d *purgeCounter) Purge(ctx context.Context, prefix string) error {
	d.mu.Lock()
	d.purged = append(d.purged, prefix)
	d.mu.Unlock()
	return d.Driver.Purge(ctx, prefix)
}

// TestCaseStepsTearDownAfterAFailedLoad: when the load step fails, the
// tear-down step still purges the case's names, and the record carries
// the load's error and no result.
func TestCaseStepsTearDownAfterAFailedLoad(t *testing.T) {
	d := &purgeCounter{Driver: fake.Open(fake.Knobs{})}
	c := fakeCase("bad", scenario.NonDurable)
	c.Topics = 0 // the driver refuses it
	s := &session{o: Options{Log: &bytes.Buffer{}}, p: Plan{Suite: &scenario.Suite{Name: "t", File: "t.yaml"}},
		runID: "test", nw: &network{profile: netem.Profile{Name: "wireline"}}, b: fake.New(fake.Knobs{}), drv: d}
	cr := s.newCaseRun(c, 1)
	var names []string
	for _, st := range cr.steps() {
		names = append(names, st.name)
	}
	assert.Equal(t, []string{"wait for an idle link", "wait for a quiet machine", "purge before", "lift the shaping for set-up", "run the load",
		"tear down", "load outcome", "measure"}, names)
	rec := s.runCase(context.Background(), c, 1)
	assert.Contains(t, rec.Error, "at least one topic")
	assert.Nil(t, rec.Result)
	require.Len(t, d.purged, 2, "one purge before, one after")
	assert.Equal(t, "pslab-", d.purged[0])
	assert.True(t, strings.HasPrefix(d.purged[1], "pslab-test-cbad-r1"), d.purged[1])
}

// TestRunOnFakeRefusesFaultsItCannotApply: a broker restart on the fake
// and a link outage without the emulated link are refused in the record,
// not silently skipped; the run goes on with the next case.
func TestRunOnFakeRefusesFaultsItCannotApply(t *testing.T) {
	restart := fakeCase("restart", scenario.Durable)
	restart.Faults = []scenario.Fault{{Kind: scenario.BrokerRestart, At: 300 * time.Millisecond, For: 300 * time.Millisecond}}
	outage := fakeCase("outage", scenario.Durable)
	outage.Faults = []scenario.Fault{{Kind: scenario.LinkOutage, At: 300 * time.Millisecond, For: 300 * time.Millisecond}}
	sum, recs := runOnFake(t, fake.Knobs{}, 1, restart, outage, fakeCase("plain", scenario.NonDurable))
	require.Len(t, recs, 3)
	assert.Equal(t, 2, sum.Failed)
	assert.Contains(t, recs[0].Error, "refused: pslab cannot kill and restart broker fake")
	assert.Contains(t, recs[1].Error, "refused")
	assert.Contains(t, recs[1].Error, "emulated link")
	assert.Empty(t, recs[2].Error)
	assert.Nil(t, recs[0].Result)
}

// A case from a sweep carries its varied values into its records.
func TestRecordsCarryTheSweepsValues(t *testing.T) {
	c := fakeCase("01", scenario.NonDurable)
	c.Warmup, c.Window, c.Drain = 100*time.Millisecond, 300*time.Millisecond, time.Second
	c.Varied = []scenario.Setting{{Key: "size", Value: "100"}, {Key: "rate", Value: "300"}}
	plain := fakeCase("02", scenario.NonDurable)
	plain.Warmup, plain.Window, plain.Drain = 100*time.Millisecond, 300*time.Millisecond, time.Second
	_, recs := runOnFake(t, fake.Knobs{}, 1, c, plain)
	require.Len(t, recs, 2)
	assert.Equal(t, []string{"size=100", "rate=300"}, recs[0].Varied)
	assert.Empty(t, recs[1].Varied)
}

// TestCITargetRecordsItsStoppingRule: a run with a CI target writes the
// rule into every record (Settings.Stopping: target, repetitions, looks,
// the correction and its level), so that the report computes the
// intervals it stopped on; a run without one writes none.
func TestCITargetRecordsItsStoppingRule(t *testing.T) {
	reg := &brokers.Registry{}
	reg.Register(fake.Descriptor(fake.Knobs{}))
	s := &scenario.Suite{Name: "t", File: "t.yaml", Brokers: []string{fake.Name}, Networks: []string{"wireline"}, Reps: 2,
		Cases: []scenario.Case{fakeCase("ci", scenario.NonDurable)}}
	var log bytes.Buffer
	o := Options{Out: t.TempDir(), Log: &log, Registry: reg, LabName: "labfc", CITarget: 0.05, MaxReps: 4}
	p, err := MakePlan(s, o)
	require.NoError(t, err)
	_, err = Run(context.Background(), p, o)
	require.NoError(t, err, log.String())
	recs, err := results.Read(o.Out)
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	for _, r := range recs {
		require.NotNil(t, r.Settings.Stopping, "rep %d", r.Rep)
		assert.Equal(t, results.Stopping{Target: 0.05, MinReps: 2, MaxReps: 4, Looks: 3, Method: metrics.CIMethodLooks, Level: 1 - 0.05/3}, *r.Settings.Stopping)
	}
	_, plain := runOnFake(t, fake.Knobs{}, 1, fakeCase("plain", scenario.NonDurable))
	require.Len(t, plain, 1)
	assert.Nil(t, plain[0].Settings.Stopping, "no CI target, no rule")
}

// TestConnectFailureIsRetriedOnce: a case whose clients fail to connect
// runs again from the start, once, and says so (connect-retried, with the
// first attempt's error); when the second attempt fails too the case
// fails with that error.
func TestConnectFailureIsRetriedOnce(t *testing.T) {
	t.Run("the second attempt connects", func(t *testing.T) {
		sum, recs := runOnFake(t, fake.Knobs{FailSubscribes: 1}, 1, fakeCase("retry", scenario.Durable))
		assert.Zero(t, sum.Failed)
		require.Len(t, recs, 1)
		r := recs[0]
		require.Empty(t, r.Error)
		f, ok := results.Flagged(r.Flags, results.FlagConnectRetried)
		require.True(t, ok, "flagged: %v", r.Flags)
		assert.Contains(t, f.Detail, "fake: subscribe 1 refused")
		c := r.Result.Counts
		assert.Positive(t, c.Received)
		assert.Equal(t, c.Expected, c.Received, "the second attempt's deliveries, all of them")
		assert.Zero(t, c.Lost+c.Duplicated)
	})
	t.Run("both attempts fail", func(t *testing.T) {
		sum, recs := runOnFake(t, fake.Knobs{FailSubscribes: 1 << 30}, 1, fakeCase("never", scenario.NonDurable))
		assert.Equal(t, 1, sum.Failed)
		require.Len(t, recs, 1)
		assert.Contains(t, recs[0].Error, "knob FailSubscribes")
		f, ok := results.Flagged(recs[0].Flags, results.FlagConnectRetried)
		require.True(t, ok, "the first attempt's failure is kept: %v", recs[0].Flags)
		assert.Contains(t, f.Detail, "fake: subscribe 1 refused")
		assert.NotContains(t, recs[0].Error, "subscribe 1 refused", "the error is the second attempt's")
	})
}
