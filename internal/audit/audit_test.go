package audit

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/load"
	"pslab/internal/scenario"
)

func factors(sub scenario.Subscription, del scenario.Delivery, ack scenario.AckMode) scenario.Factors {
	return scenario.Factors{Publishers: 1, Subscribers: 1, Topics: 1, Subscription: sub, Delivery: del, Ack: ack}
}

func verdicts(cs []Check) []Verdict {
	var v []Verdict
	for _, c := range cs {
		v = append(v, c.Verdict)
	}
	return v
}

func TestDurablePersistentAcrossRestart(t *testing.T) {
	f := factors(scenario.Durable, scenario.Persistent, scenario.AckAuto)
	restart := load.FaultResult{Fault: scenario.Fault{Kind: scenario.BrokerRestart}, Reconnected: 2}
	res := &load.Result{DrainComplete: true, Faults: []load.FaultResult{restart},
		Counts: load.Counts{Sent: 500, Expected: 1000, Received: 995, Lost: 5, InDoubt: 3}}
	cs := Evaluate(f, res)
	require.Len(t, cs, 4)
	assert.Equal(t, []Verdict{Holds, Holds, Holds, Holds}, verdicts(cs))
	assert.Contains(t, cs[0].Promise, "across broker-restart")
	assert.Contains(t, cs[0].Observed, "3 sends in doubt (6 deliveries)", "two subscribers are due each message")

	res.Counts.Lost, res.Counts.InDoubt = 5, 0
	assert.Equal(t, Fails, Evaluate(f, res)[0].Verdict, "lost beyond what was in doubt")
	res.DrainComplete = false
	assert.Equal(t, Inconclusive, Evaluate(f, res)[0].Verdict, "the drain ended early")

	res.Faults[0].NotReconnected = 1
	assert.Equal(t, Fails, Evaluate(f, res)[3].Verdict, "a client that never came back")
}

func TestDurableNonPersistentRestartMayLose(t *testing.T) {
	f := factors(scenario.Durable, scenario.NonPersistent, scenario.AckAuto)
	res := &load.Result{DrainComplete: true, Faults: []load.FaultResult{{Fault: scenario.Fault{Kind: scenario.BrokerRestart}}},
		Counts: load.Counts{Expected: 1000, Lost: 300}}
	assert.Equal(t, Observed, Evaluate(f, res)[0].Verdict)
}

func TestNonDurableDisconnectLosesWhatWasPublished(t *testing.T) {
	f := factors(scenario.NonDurable, scenario.NonPersistent, scenario.AckDupsOK)
	away := load.FaultResult{Fault: scenario.Fault{Kind: scenario.SubscriberDisconnect}, DueWhile: 400, Reconnected: 1}
	res := &load.Result{DrainComplete: true, Faults: []load.FaultResult{away}, Counts: load.Counts{Expected: 2000, Lost: 430, Duplicated: 3}}
	cs := Evaluate(f, res)
	assert.Equal(t, Holds, cs[0].Verdict)
	assert.Contains(t, cs[0].Observed, "1.07x")
	assert.Equal(t, Observed, cs[1].Verdict, "DUPS_OK may duplicate")

	res.Counts.Lost = 0
	assert.Equal(t, Fails, Evaluate(f, res)[0].Verdict, "lost nothing while away: not non-durable behaviour")
	res.Faults[0].DueWhile = 0
	assert.Equal(t, Inconclusive, Evaluate(f, res)[0].Verdict, "nothing was published while away")
}

func TestAutoMustNotDuplicate(t *testing.T) {
	f := factors(scenario.NonDurable, scenario.NonPersistent, scenario.AckAuto)
	res := &load.Result{DrainComplete: true, Counts: load.Counts{Expected: 10, Received: 10, Duplicated: 1, Unexpected: 1}}
	cs := Evaluate(f, res)
	assert.Equal(t, []Verdict{Observed, Fails, Fails}, verdicts(cs))
	assert.Equal(t, 2, Failed(cs))
	res.Counts.Redelivered = 1
	assert.Equal(t, Holds, Evaluate(f, res)[1].Verdict, "a duplicate flagged redelivered after a failure is allowed (JMS)")
	assert.Nil(t, Evaluate(f, nil))
}
