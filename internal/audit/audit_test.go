package audit

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/load"
	"pslab/internal/record"
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

// MQTT: the promises come from the QoS and the broker (record.Promises).

func mqttPromises(qos int, survives bool) *record.Promises {
	switch qos {
	case 0:
		return &record.Promises{Basis: "MQTT QoS 0 (at most once)", NoDuplicates: true}
	case 2:
		return &record.Promises{Basis: "MQTT QoS 2 (exactly once)", KeepsWhileAway: true, SurvivesRestart: survives, NoDuplicates: true, Why: "store written every second"}
	}
	return &record.Promises{Basis: "MQTT QoS 1 (at least once)", KeepsWhileAway: true, SurvivesRestart: survives, Why: "store written every second"}
}

func TestMQTTQoS1PersistentSessionLosesNothingAcrossAnOutage(t *testing.T) {
	f := factors(scenario.Durable, scenario.Persistent, scenario.AckAuto)
	outage := load.FaultResult{Fault: scenario.Fault{Kind: scenario.LinkOutage}}
	res := &load.Result{DrainComplete: true, Faults: []load.FaultResult{outage}, Promises: mqttPromises(1, true),
		Counts: load.Counts{Sent: 100, Expected: 100, Received: 100, Duplicated: 3, Resent: 2, Redelivered: 1}}
	cs := Evaluate(f, res)
	assert.Equal(t, []Verdict{Holds, Holds, Holds}, verdicts(cs))
	assert.Contains(t, cs[0].Promise, "MQTT QoS 1 (at least once): durable subscription: nothing lost across link-outage")
	assert.Contains(t, cs[1].Observed, "2 resent by a client after reconnecting (2 deliveries)")
	res.Counts.Duplicated = 4
	assert.Equal(t, Fails, Evaluate(f, res)[1].Verdict, "more duplicates than flagged and resent")
	res.Counts.Duplicated, res.Counts.Lost = 0, 5
	assert.Equal(t, Fails, Evaluate(f, res)[0].Verdict)
}

func TestMQTTRestartOfABrokerWhosePersistenceDoesNotSurviveAKill(t *testing.T) {
	f := factors(scenario.Durable, scenario.Persistent, scenario.AckExactlyOnce)
	restart := load.FaultResult{Fault: scenario.Fault{Kind: scenario.BrokerRestart}, Reconnected: 2}
	res := &load.Result{DrainComplete: true, Faults: []load.FaultResult{restart}, Promises: mqttPromises(2, false),
		Counts: load.Counts{Sent: 100, Expected: 100, Received: 90, Lost: 10, Duplicated: 2}}
	cs := Evaluate(f, res)
	assert.Equal(t, []Verdict{Observed, Observed, Holds, Holds}, verdicts(cs))
	assert.Contains(t, cs[0].Promise, "does not survive its restart (store written every second)")
	res.Promises = mqttPromises(2, true)
	cs = Evaluate(f, res)
	assert.Equal(t, []Verdict{Fails, Fails, Holds, Holds}, verdicts(cs), "a broker whose store survives: QoS 2 loses nothing and never duplicates")
	assert.Equal(t, "MQTT QoS 2 (exactly once): no duplicates", cs[1].Promise)
}

func TestMQTTQoS0(t *testing.T) {
	away := load.FaultResult{Fault: scenario.Fault{Kind: scenario.SubscriberDisconnect}, DueWhile: 200, Reconnected: 1}
	f := factors(scenario.NonDurable, scenario.NonPersistent, scenario.AckAuto)
	res := &load.Result{DrainComplete: true, Faults: []load.FaultResult{away}, Promises: mqttPromises(0, false),
		Counts: load.Counts{Sent: 1000, Expected: 1000, Lost: 210}}
	cs := Evaluate(f, res)
	assert.Equal(t, []Verdict{Holds, Holds, Holds, Holds}, verdicts(cs))
	assert.Contains(t, cs[0].Promise, "MQTT QoS 0 (at most once): non-durable subscription: loses about what was published while it was away")
	res.Counts.Duplicated = 1
	assert.Equal(t, Fails, Evaluate(f, res)[1].Verdict, "at most once")

	f.Subscription = scenario.Durable // a persistent session: MQTT promises nothing for QoS 0 while away
	res.Counts.Duplicated = 0
	cs = Evaluate(f, res)
	assert.Equal(t, Observed, cs[0].Verdict)
	assert.Contains(t, cs[0].Promise, "nothing promised for messages published while its subscriber is away")
}

// TestQoS2DuplicateNamesTheBrokersSessionAnswer: a QoS 2 duplicate after
// a broker restart still fails "no duplicates"; the finding names what
// the broker answered on the reconnections (CONNACK session present): a
// session gone, or every session resumed. Without the answers recorded
// (older records, other protocols) it says nothing of them.
func TestQoS2DuplicateNamesTheBrokersSessionAnswer(t *testing.T) {
	f := factors(scenario.Durable, scenario.Persistent, scenario.AckExactlyOnce)
	restart := load.FaultResult{Fault: scenario.Fault{Kind: scenario.BrokerRestart}, Reconnected: 3}
	res := &load.Result{DrainComplete: true, Faults: []load.FaultResult{restart}, Promises: mqttPromises(2, true),
		Counts: load.Counts{Sent: 100, Expected: 200, Received: 200, Duplicated: 2, Resent: 1}}
	cs := Evaluate(f, res)
	require.Len(t, cs, 4)
	assert.Equal(t, Fails, cs[1].Verdict)
	assert.NotContains(t, cs[1].Observed, "session")
	assert.NotContains(t, cs[3].Observed, "session")

	res.Faults[0].Sessions = &record.FaultSessions{Publishers: record.SessionCounts{Gone: 1}, Subscribers: record.SessionCounts{Resumed: 2}}
	cs = Evaluate(f, res)
	assert.Equal(t, []Verdict{Holds, Fails, Holds, Holds}, verdicts(cs), "the attribution weakens nothing")
	assert.Contains(t, cs[1].Observed, "2 duplicated")
	assert.Contains(t, cs[1].Observed, "broker kept no session (CONNACK session present 0) for 1 of 1 publisher and 0 of 2 subscriber reconnections")
	assert.Contains(t, cs[3].Observed, "sessions resumed/gone: publishers 0/1, subscribers 2/0")

	res.Faults[0].Sessions = &record.FaultSessions{Publishers: record.SessionCounts{Resumed: 1}, Subscribers: record.SessionCounts{Resumed: 2}}
	cs = Evaluate(f, res)
	assert.Equal(t, Fails, cs[1].Verdict)
	assert.Contains(t, cs[1].Observed, "the broker said it kept every session (CONNACK session present 1 for 1 publisher and 2 subscriber reconnections)")

	res.Counts.Duplicated = 0
	cs = Evaluate(f, res)
	assert.Equal(t, Holds, cs[1].Verdict)
	assert.NotContains(t, cs[1].Observed, "CONNACK", "no duplicate to attribute")
}
