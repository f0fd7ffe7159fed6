package load

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/driver"
	"pslab/internal/record"
	"pslab/internal/scenario"
)

func disconnectCase(sub scenario.Subscription, del scenario.Delivery) scenario.Case {
	c := quickCase(sub, del)
	c.Publishers, c.Subscribers, c.Topics = 1, 2, 1
	c.Model = scenario.FewToMany
	c.Rate = 500 // open loop: a steady stream to lose or queue
	c.Window = 2 * time.Second
	c.Faults = []scenario.Fault{{Kind: scenario.SubscriberDisconnect, At: 500 * time.Millisecond, For: 700 * time.Millisecond, Subscribers: 1}}
	// A message pulled by the subscriber that left but not handled comes
	// again after JetStream's AckWait (30 s); the drain ends as soon as
	// everything has arrived.
	c.Drain = 35 * time.Second
	return c
}

// TestSubscriberDisconnectDurableKeepsEverything: a durable subscriber
// taken away for 0.7 s gets its backlog on return and loses nothing.
func TestSubscriberDisconnectDurableKeepsEverything(t *testing.T) {
	d := startNATS(t)
	c := disconnectCase(scenario.Durable, scenario.Persistent)
	res, err := Run(context.Background(), Config{Case: c, Prefix: "pslab-test-fdur", Driver: d, Seed: 5})
	require.NoError(t, err)
	require.NoError(t, d.Purge(context.Background(), "pslab-test-fdur"))
	require.Len(t, res.Faults, 1)
	f := res.Faults[0]
	t.Logf("durable: %+v counts %+v", f, res.Counts)
	assert.Empty(t, f.Error)
	assert.Equal(t, 1, f.Reconnected)
	assert.Positive(t, f.DueWhile, "messages were published while the subscriber was away")
	assert.GreaterOrEqual(t, f.Backlog, f.DueWhile/2, "the backlog comes back on reconnection")
	assert.Greater(t, f.EndS, f.StartS)
	assert.Zero(t, res.Counts.Lost, "durable + persistent loses nothing across a disconnect")
	assert.Zero(t, res.Counts.Unexpected)
}

// TestSubscriberDisconnectNonDurableLosesWhatWasPublished: a non-durable
// subscriber (core NATS, and a JetStream ephemeral consumer) misses about
// what was published while it was away; the other subscriber misses
// nothing.
func TestSubscriberDisconnectNonDurableLosesWhatWasPublished(t *testing.T) {
	d := startNATS(t)
	for _, del := range scenario.Deliveries {
		c := disconnectCase(scenario.NonDurable, del)
		c.Drain = 5 * time.Second // what is lost never comes
		res, err := Run(context.Background(), Config{Case: c, Prefix: "pslab-test-fnon" + string(del[:3]), Driver: d, Seed: 5})
		require.NoError(t, err)
		f := res.Faults[0]
		t.Logf("non-durable %s: %+v counts %+v", del, f, res.Counts)
		assert.Positive(t, f.DueWhile, del)
		assert.Positive(t, res.Counts.Lost, del)
		// At least about what was published while away. Messages in flight
		// to it when it was closed are lost too, and so is what is published
		// until its new subscription takes effect, which a busy machine
		// delays (CI saw 1.67x): no upper ratio, but only the subscriber
		// that left loses anything, so never more than was sent.
		assert.GreaterOrEqual(t, res.Counts.Lost, f.DueWhile/2, "%s: lost against due while away", del)
		assert.LessOrEqual(t, res.Counts.Lost, res.Counts.Sent, "%s: only one of two subscribers lost messages", del)
		assert.Zero(t, res.Counts.Duplicated, del)
		require.NoError(t, d.Purge(context.Background(), "pslab-test-fnon"+string(del[:3])))
	}
}

// TestLinkFaultWithoutInjectorIsRefused: a schedule that needs the link is
// refused before anything connects, not silently skipped.
func TestLinkFaultWithoutInjectorIsRefused(t *testing.T) {
	d := startNATS(t)
	c := quickCase(scenario.NonDurable, scenario.NonPersistent)
	c.Faults = []scenario.Fault{{Kind: scenario.LinkOutage, At: 100 * time.Millisecond, For: 100 * time.Millisecond}}
	_, err := Run(context.Background(), Config{Case: c, Prefix: "pslab-test-fref", Driver: d})
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrNoInjector), err.Error())
}

// fakeInjector records what it was asked to do.
type fakeInjector struct {
	mu    sync.Mutex
	calls []string
	can   error
	// slowFirstRestore is how long the first LinkRestore takes (an undo
	// made late by a busy machine); the others return at once.
	slowFirstRestore time.Duration
}

func (f *fakeInjector) note(call string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
}

func (f *fakeInjector) Can(scenario.FaultKind) error { return f.can }
func (f *fakeInjector) LinkLoss(p float64) (string, error) {
	f.note("loss")
	return "", nil
}
func (f *fakeInjector) LinkRestore() (string, error) {
	f.note("restore")
	f.mu.Lock()
	wait := f.slowFirstRestore
	f.slowFirstRestore = 0
	f.mu.Unlock()
	time.Sleep(wait)
	return "restored", nil
}
func (f *fakeInjector) BrokerKill() error                   { return errors.New("not here") }
func (f *fakeInjector) BrokerRestart(context.Context) error { return nil }

// TestLinkStepsAreAppliedInOrder: loss steps apply and restore one after
// another; the injector's refusal stops the case before it starts.
func TestLinkStepsAreAppliedInOrder(t *testing.T) {
	d := startNATS(t)
	c := quickCase(scenario.NonDurable, scenario.NonPersistent)
	c.Window = time.Second
	c.Faults = []scenario.Fault{
		{Kind: scenario.LinkLoss, At: 100 * time.Millisecond, For: 200 * time.Millisecond, LossPct: 20},
		{Kind: scenario.LinkOutage, At: 400 * time.Millisecond, For: 200 * time.Millisecond},
	}
	inj := &fakeInjector{}
	res, err := Run(context.Background(), Config{Case: c, Prefix: "pslab-test-fstep", Driver: d, Injector: inj})
	require.NoError(t, err)
	assert.Equal(t, []string{"loss", "restore", "loss", "restore"}, inj.calls)
	require.Len(t, res.Faults, 2)
	assert.Less(t, res.Faults[0].EndS, res.Faults[1].StartS)
	assert.Equal(t, "restored", res.Faults[0].Detail)

	inj = &fakeInjector{can: errors.New("no emulated link on loopback")}
	_, err = Run(context.Background(), Config{Case: c, Prefix: "pslab-test-fstep2", Driver: d, Injector: inj})
	require.ErrorContains(t, err, "no emulated link on loopback")
	assert.Empty(t, inj.calls)
}

// TestLinkStepAfterALateUndoLastsItsDuration: when the undo of one link
// step ends after the next step's scheduled start, the next step is applied
// after that undo, late, and still lasts its full duration from when it was
// applied (StartS records that time, not the schedule).
func TestLinkStepAfterALateUndoLastsItsDuration(t *testing.T) {
	d := startNATS(t)
	c := quickCase(scenario.NonDurable, scenario.NonPersistent)
	c.Window = time.Second
	step := 100 * time.Millisecond
	c.Faults = []scenario.Fault{
		{Kind: scenario.LinkLoss, At: 100 * time.Millisecond, For: step, LossPct: 20},
		{Kind: scenario.LinkOutage, At: 250 * time.Millisecond, For: step},
	}
	// The first undo ends at least 100+100+300 ms into the window, after
	// the second step's scheduled 250 ms.
	inj := &fakeInjector{slowFirstRestore: 300 * time.Millisecond}
	res, err := Run(context.Background(), Config{Case: c, Prefix: "pslab-test-flate", Driver: d, Injector: inj})
	require.NoError(t, err)
	assert.Equal(t, []string{"loss", "restore", "loss", "restore"}, inj.calls)
	require.Len(t, res.Faults, 2)
	first, second := res.Faults[0], res.Faults[1]
	scheduled := (c.Warmup + c.Faults[1].At).Seconds()
	assert.GreaterOrEqual(t, second.StartS, first.EndS, "applied after the step before it was undone")
	assert.Greater(t, second.StartS, scheduled, "applied late")
	assert.GreaterOrEqual(t, second.EndS-second.StartS, step.Seconds(), "lasts its duration from its application")
}

// TestFaultResultsCountSessionAnswersPerRole: each reconnection a fault
// explains adds the broker's answer about the session to the fault's
// counts of its client's role; reconnections without an answer (NATS,
// STOMP, clean sessions) add none, and a fault none of whose clients
// answered has no sessions block (absent, not zero).
func TestFaultResultsCountSessionAnswersPerRole(t *testing.T) {
	t0 := time.Now()
	yes, no := true, false
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	out := func(lost float64, session *bool) driver.Outage {
		return driver.Outage{Lost: at(lost), Restored: at(lost + 5), Session: session}
	}
	r := &run{faults: []FaultResult{
		{Fault: scenario.Fault{Kind: scenario.LinkOutage}, StartS: 1, EndS: 3},
		{Fault: scenario.Fault{Kind: scenario.BrokerRestart}, StartS: 10, EndS: 14},
	}}
	res := &Result{Start: t0}
	pubs := []driver.ConnStats{{Outages: []driver.Outage{out(1.5, nil), out(10.2, &no)}}}
	subs := []driver.ConnStats{
		{Outages: []driver.Outage{out(1.2, nil), out(10.1, &yes)}},
		{Outages: []driver.Outage{out(10.3, &yes), {Lost: at(11)}}},
		{Outages: []driver.Outage{out(10.4, &no)}},
	}
	r.faultResults(res, pubs, subs)
	require.Len(t, res.Faults, 2)
	assert.Equal(t, 2, res.Faults[0].Reconnected)
	assert.Nil(t, res.Faults[0].Sessions, "no answer recorded: absent")
	f := res.Faults[1]
	assert.Equal(t, 4, f.Reconnected)
	assert.Equal(t, 1, f.NotReconnected)
	require.NotNil(t, f.Sessions)
	assert.Equal(t, record.FaultSessions{Publishers: record.SessionCounts{Gone: 1}, Subscribers: record.SessionCounts{Resumed: 2, Gone: 1}}, *f.Sessions)
}
