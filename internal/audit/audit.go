// Package audit checks what a case's delivery guarantees promise against
// what the load engine's per-publisher sequence accounting observed, under
// the case's fault schedule: a durable subscription with persistent
// delivery loses nothing across a broker restart or an outage; a
// non-durable one loses about what was published while it was away; AUTO
// acknowledgement does not duplicate, DUPS_OK may.
package audit

import (
	"fmt"
	"strings"

	"pslab/internal/record"
	"pslab/internal/scenario"
)

// Verdict of one check.
type Verdict string

// Verdicts.
const (
	Holds        Verdict = "holds"
	Fails        Verdict = "fails"
	Inconclusive Verdict = "inconclusive" // the run cannot tell (e.g. the drain ended early)
	Observed     Verdict = "observed"     // nothing is promised; the number is reported
)

// Check is one promise and what was observed.
type Check struct {
	Promise  string  `json:"promise"`
	Observed string  `json:"observed"`
	Verdict  Verdict `json:"verdict"`
}

// Ratio bounds for "loses about what was published while away": messages
// in flight to a subscriber when it left are lost too, and some published
// just before it came back may reach the new subscription.
const (
	awayLossLow  = 0.5
	awayLossHigh = 1.5
)

// Evaluate audits one case run. It returns nil without a result.
func Evaluate(f scenario.Factors, res *record.Result) []Check {
	if res == nil {
		return nil
	}
	c := res.Counts
	kinds := faultKinds(res.Faults)
	var out []Check
	add := func(promise, observed string, v Verdict) {
		out = append(out, Check{Promise: promise, Observed: observed, Verdict: v})
	}
	lost := fmt.Sprintf("lost %d of %d due", c.Lost, c.Expected)
	if c.Backlog > 0 || c.InFlight > 0 || c.ToBroker > 0 {
		lost += fmt.Sprintf(" (%d still queued at the broker, %d in flight, %d on their way to it: not lost)", c.Backlog, c.InFlight, c.ToBroker)
	}
	doubt := inDoubtDeliveries(c)
	if c.InDoubt > 0 {
		lost += fmt.Sprintf(", %d sends in doubt (%d deliveries)", c.InDoubt, doubt)
	}
	under := "without faults"
	if len(kinds) > 0 {
		under = "across " + strings.Join(kinds, ", ")
	}
	restart := has(res.Faults, scenario.BrokerRestart)
	// What the mechanism promises: the JMS factors' (a durable
	// subscription keeps what is published while away; persistent
	// delivery survives a restart), or the driver's (MQTT: by QoS).
	p := res.Promises
	durable := f.Subscription == scenario.Durable
	keeps, survives := durable, f.Delivery == scenario.Persistent
	basis := ""
	if p != nil {
		keeps, survives, basis = durable && p.KeepsWhileAway, p.SurvivesRestart, p.Basis+": "
	}
	why := ""
	if p != nil && p.Why != "" {
		why = " (" + p.Why + ")"
	}
	switch {
	case keeps && (survives || !restart):
		promise := basis + "durable subscription: nothing lost " + under + " (beyond sends in doubt when a connection broke)"
		switch {
		case c.Lost <= doubt:
			add(promise, lost, Holds)
		case !res.DrainComplete:
			add(promise, lost+"; the drain ended before everything arrived", Inconclusive)
		default:
			add(promise, lost, Fails)
		}
	case keeps && p == nil:
		add("durable, non-persistent: messages held by the broker do not survive its restart (loss allowed)", lost, Observed)
	case keeps:
		add(basis+"durable subscription: what the broker holds does not survive its restart"+why+" (loss allowed)", lost, Observed)
	case durable:
		add(basis+"durable subscription: nothing promised for messages published while its subscriber is away"+why, lost+" "+under, Observed)
	default:
		if due, ok := dueWhileAway(res.Faults); ok {
			promise := fmt.Sprintf("%snon-durable subscription: loses about what was published while it was away (%.1f-%.1fx)", basis, awayLossLow, awayLossHigh)
			obs := fmt.Sprintf("%s; %d published to it while away", lost, due)
			switch {
			case due == 0:
				add(promise, obs, Inconclusive)
			case ratioIn(c.Lost, due):
				add(promise, fmt.Sprintf("%s (%.2fx)", obs, float64(c.Lost)/float64(due)), Holds)
			default:
				add(promise, fmt.Sprintf("%s (%.2fx)", obs, float64(c.Lost)/float64(due)), Fails)
			}
		} else {
			add(basis+"non-durable subscription: nothing promised for messages published while it is not connected", lost+" "+under, Observed)
		}
	}
	dups := fmt.Sprintf("%d duplicated, %d flagged redelivered", c.Duplicated, c.Redelivered)
	resent := resentDeliveries(c)
	if c.Resent > 0 {
		dups += fmt.Sprintf(", %d resent by a client after reconnecting (%d deliveries)", c.Resent, resent)
	}
	switch {
	case p != nil && p.NoDuplicates && (survives || !restart):
		v := Holds
		if c.Duplicated > 0 {
			v = Fails
			dups += sessionNote(res.Faults)
		}
		add(basis+"no duplicates", dups, v)
	case p != nil && p.NoDuplicates:
		if c.Duplicated > 0 {
			dups += sessionNote(res.Faults)
		}
		add(basis+"no duplicates while the broker's state lives; across its restart nothing is promised"+why, dups, Observed)
	case f.Ack == scenario.AckAuto:
		// JMS lets AUTO redeliver after a failure (the message then carries
		// JMSRedelivered); a duplicate the broker did not flag breaks it,
		// unless a client sent the message again after reconnecting (MQTT
		// QoS 1 does: the copy reaches the subscribers unflagged).
		v := Holds
		if c.Duplicated > c.Redelivered+resent {
			v = Fails
		}
		promise := "AUTO acknowledgement: no duplicates, except redeliveries flagged as such after a failure"
		if p != nil || c.Resent > 0 {
			promise += " and sends a client repeated after reconnecting"
		}
		add(basis+promise, dups, v)
	case f.Ack == scenario.AckDupsOK:
		add(basis+"DUPS_OK acknowledgement: duplicates allowed", dups, Observed)
	case f.Ack == scenario.AckClient:
		add(basis+"CLIENT acknowledgement: unacknowledged messages are redelivered after a failure (duplicates allowed)", dups, Observed)
	}
	v := Holds
	if c.DecodeErrors > 0 || c.Unexpected > 0 {
		v = Fails
	}
	add("every delivery intact and for its subscriber", fmt.Sprintf("%d failed decoding, %d unexpected", c.DecodeErrors, c.Unexpected), v)
	for _, fr := range res.Faults {
		if fr.Kind == scenario.SubscriberDisconnect || fr.Kind == scenario.BrokerRestart {
			v := Holds
			if fr.NotReconnected > 0 || fr.Error != "" {
				v = Fails
			}
			obs := fmt.Sprintf("%d reconnected (longest %.2f s), %d did not; backlog %d delivered, caught up %.2f s after the fault", fr.Reconnected, fr.ReconnectS, fr.NotReconnected, fr.Backlog, fr.CatchupS)
			if fr.Sessions != nil {
				obs += "; " + fr.Sessions.String()
			}
			if fr.Error != "" {
				obs += "; " + fr.Error
			}
			add(fmt.Sprintf("clients come back after %s", fr.Fault), obs, v)
		}
	}
	return out
}

// sessionNote says, for duplicates where nothing may come twice, what the
// broker answered about the clients' sessions when they reconnected after
// each fault (MQTT's CONNACK session present; "" where no fault recorded
// it). A broker that kept no session had lost the state that tells a
// PUBLISH sent again (DUP) from a new one: the duplicate is the broker's
// persistence. One that said it kept every session kept the session but
// not that state. It attributes; the verdict stays.
func sessionNote(fs []record.FaultResult) string {
	var out string
	for _, f := range fs {
		s := f.Sessions
		if s == nil {
			continue
		}
		pubs, subs := s.Publishers.Resumed+s.Publishers.Gone, s.Subscribers.Resumed+s.Subscribers.Gone
		if s.Gone() > 0 {
			out += fmt.Sprintf("; after %s the broker kept no session (CONNACK session present 0) for %d of %d publisher and %d of %d subscriber reconnections: its state of what it had received was gone, so a PUBLISH sent again was a new message to it",
				f.Fault, s.Publishers.Gone, pubs, s.Subscribers.Gone, subs)
			continue
		}
		out += fmt.Sprintf("; after %s the broker said it kept every session (CONNACK session present 1 for %d publisher and %d subscriber reconnections)", f.Fault, pubs, subs)
	}
	return out
}

// inDoubtDeliveries converts sends in doubt into deliveries: each message
// is due to Expected/Sent subscribers on average (the replication grade),
// rounded up.
func inDoubtDeliveries(c record.Counts) int64 {
	if c.InDoubt == 0 || c.Sent == 0 {
		return 0
	}
	return (c.InDoubt*c.Expected + c.Sent - 1) / c.Sent
}

// resentDeliveries converts sends a client repeated after reconnecting
// into deliveries that may come twice (expected / sent per send, rounded
// up).
func resentDeliveries(c record.Counts) int64 {
	if c.Resent == 0 || c.Sent == 0 {
		return 0
	}
	return (c.Resent*c.Expected + c.Sent - 1) / c.Sent
}

// Failed counts the checks that failed.
func Failed(cs []Check) int {
	n := 0
	for _, c := range cs {
		if c.Verdict == Fails {
			n++
		}
	}
	return n
}

func ratioIn(lost, due int64) bool {
	r := float64(lost) / float64(due)
	return r >= awayLossLow && r <= awayLossHigh
}

// dueWhileAway sums what was due to subscribers while a
// subscriber-disconnect fault kept them away.
func dueWhileAway(fs []record.FaultResult) (int64, bool) {
	var n int64
	ok := false
	for _, f := range fs {
		if f.Kind == scenario.SubscriberDisconnect {
			n += f.DueWhile
			ok = true
		}
	}
	return n, ok
}

func has(fs []record.FaultResult, k scenario.FaultKind) bool {
	for _, f := range fs {
		if f.Kind == k {
			return true
		}
	}
	return false
}

func faultKinds(fs []record.FaultResult) []string {
	var out []string
	seen := map[scenario.FaultKind]bool{}
	for _, f := range fs {
		if !seen[f.Kind] {
			seen[f.Kind] = true
			out = append(out, string(f.Kind))
		}
	}
	return out
}
