package mqtt

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/audit"
	"pslab/internal/load"
	"pslab/internal/record"
	"pslab/internal/scenario"
)

// Faults through the load engine on the in-process broker, and the audit
// of MQTT's promises: a subscriber taken away, the broker restarted.

func faultCase(sub scenario.Subscription, del scenario.Delivery, ack scenario.AckMode, k scenario.FaultKind) scenario.Case {
	c := quickCase(sub, del, ack)
	c.Publishers, c.Subscribers, c.Topics = 1, 2, 1
	c.Model = scenario.FewToMany
	c.Rate = 300
	c.Window = 2500 * time.Millisecond
	c.Drain = 35 * time.Second // nats-server redelivers an unacknowledged QoS 1 delivery after 30 s; ends once all arrived
	f := scenario.Fault{Kind: k, At: 500 * time.Millisecond, For: 800 * time.Millisecond}
	if k == scenario.SubscriberDisconnect {
		f.Subscribers = 1
	}
	c.Faults = []scenario.Fault{f}
	return c
}

// restarter is a load.Injector that kills and restarts the in-process
// broker (link faults need the lab's router).
type restarter struct{ b *inproc }

func (r restarter) Can(k scenario.FaultKind) error {
	if k == scenario.BrokerRestart {
		return nil
	}
	return errors.New("no link here")
}
func (restarter) LinkLoss(float64) (string, error)      { return "", errors.New("no link") }
func (restarter) LinkRestore() (string, error)          { return "", errors.New("no link") }
func (r restarter) BrokerKill() error                   { r.b.stop(); return nil }
func (r restarter) BrokerRestart(context.Context) error { return r.b.tryStart() } // the fault's goroutine

func runFault(t *testing.T, b *inproc, d *Driver, c scenario.Case, prefix string) (*load.Result, []audit.Check) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := load.Run(ctx, load.Config{Case: c, Prefix: prefix, Driver: d, Seed: 5, Injector: restarter{b}})
	require.NoError(t, err)
	require.NoError(t, d.Purge(context.Background(), prefix))
	require.Len(t, res.Faults, 1)
	require.NotNil(t, res.Promises, "the MQTT driver says what it promised")
	cs := audit.Evaluate(c.Factors, res)
	for _, ch := range cs {
		t.Logf("%s: %s -> %s", ch.Promise, ch.Observed, ch.Verdict)
	}
	return res, cs
}

func TestAwayDurableQoS1LosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("a fault schedule of seconds: not in -short")
	}
	b := startInproc(t)
	d := newTestDriver(t, b)
	res, cs := runFault(t, b, d, faultCase(scenario.Durable, scenario.Persistent, scenario.AckAuto, scenario.SubscriberDisconnect), "pslab-fa1")
	f := res.Faults[0]
	assert.Equal(t, 1, f.Reconnected)
	if assert.NotNil(t, f.Sessions, "a persistent session's CONNACK answer is recorded") {
		assert.Equal(t, record.FaultSessions{Subscribers: record.SessionCounts{Resumed: 1}}, *f.Sessions,
			"the subscriber that came back found its session")
	}
	assert.Positive(t, f.DueWhile)
	assert.Zero(t, res.Counts.Lost)
	assert.Zero(t, audit.Failed(cs))
	assert.Equal(t, audit.Holds, cs[0].Verdict)
}

func TestAwayCleanQoS0LosesWhatWasPublished(t *testing.T) {
	if testing.Short() {
		t.Skip("a fault schedule of seconds: not in -short")
	}
	b := startInproc(t)
	d := newTestDriver(t, b)
	c := faultCase(scenario.NonDurable, scenario.NonPersistent, scenario.AckAuto, scenario.SubscriberDisconnect)
	c.Drain = 3 * time.Second
	res, cs := runFault(t, b, d, c, "pslab-fa0")
	assert.Positive(t, res.Counts.Lost)
	assert.Zero(t, audit.Failed(cs))
	assert.Equal(t, audit.Holds, cs[0].Verdict, "loses about what was published while away")
	assert.Contains(t, cs[0].Promise, "MQTT QoS 0")
}

// TestBrokerRestartQoS1AndQoS2: across a broker restart a durable QoS 1
// subscription loses nothing (nats-server's JetStream keeps sessions and
// messages) and QoS 2 delivers nothing twice.
func TestBrokerRestartQoS1AndQoS2(t *testing.T) {
	if testing.Short() {
		t.Skip("a fault schedule of seconds: not in -short")
	}
	b := startInproc(t)
	d := newTestDriver(t, b)
	for i, ack := range []scenario.AckMode{scenario.AckAuto, scenario.AckExactlyOnce} {
		t.Run(string(ack), func(t *testing.T) {
			c := faultCase(scenario.Durable, scenario.Persistent, ack, scenario.BrokerRestart)
			res, cs := runFault(t, b, d, c, "pslab-fr"+string(rune('a'+i)))
			f := res.Faults[0]
			assert.Empty(t, f.Error)
			assert.Positive(t, res.ClientOutages, "clients noticed the restart")
			// Every client keeps a persistent session (QoS 1/2): each
			// reconnection has the broker's answer about it.
			if assert.NotNil(t, f.Sessions) {
				s := f.Sessions
				assert.Equal(t, f.Reconnected, s.Publishers.Resumed+s.Publishers.Gone+s.Subscribers.Resumed+s.Subscribers.Gone)
				t.Logf("reconnected %d: %s", f.Reconnected, s)
			}
			// nats-server's MQTT does not always keep QoS 2's exactly-once
			// across its restart: a CI run saw 2 of 1,620 deliveries twice,
			// without the DUP flag (docs/mqtt.md). The audit must say so
			// (its no-duplicates promise fails exactly when there are
			// duplicates), and every other promise holds.
			for _, ch := range cs {
				if strings.Contains(ch.Promise, "no duplicates") {
					assert.Equal(t, res.Counts.Duplicated > 0, ch.Verdict == audit.Fails, "%s: %s -> %s", ch.Promise, ch.Observed, ch.Verdict)
					continue
				}
				assert.NotEqual(t, audit.Fails, ch.Verdict, "%s: %s", ch.Promise, ch.Observed)
			}
			if res.Counts.Duplicated > 0 {
				t.Logf("the broker delivered %d twice across its restart", res.Counts.Duplicated)
			}
		})
	}
}
