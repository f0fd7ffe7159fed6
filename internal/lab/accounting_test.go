package lab

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/driver"
	"pslab/internal/load"
	"pslab/internal/results"
)

func TestAccountingFlagsBacklogNotLoss(t *testing.T) {
	steady := load.Steady{Levelled: true}
	// A durable case whose broker still held 1770 deliveries: backlog, not
	// lost, and the drain says why it ended.
	r := record(10, 10, false, 0)
	r.Result.Counts.Backlog = 1770
	r.Result.Counts.SentInWindow, r.Result.Counts.DueInWindow, r.Result.Latency.Count = 500, 500, 100
	r.Result.Accounting = &load.Accounting{Held: &driver.Held{Backlog: 1770}, Steady: steady,
		Drain: load.Drain{Ended: load.DrainStalled, S: 7.5}}
	fs := flagsFor(r)
	assert.Equal(t, []string{"drain-incomplete", "backlog"}, flagNames(fs))
	assert.Contains(t, fs[1].Detail, "1770")
	assert.Contains(t, fs[0].Detail, "backlog 1770, in flight 0, lost 0")
	assert.Contains(t, fs[1].Detail, "queued at the broker")

	// Core NATS: part of the backlog had left the server's buffers; the
	// flag says it is on its way, at most the backlog.
	r.Result.Accounting.Held.InSockets = 5000
	fs = flagsFor(r)
	assert.Contains(t, fs[1].Detail, "1770 deliveries still on their way")
	assert.Contains(t, fs[1].Detail, "1770 or more of them, in the socket buffers")

	// The broker could not be asked: lost may include backlog.
	r = record(10, 10, false, 40)
	r.Result.Counts.SentInWindow, r.Result.Counts.DueInWindow, r.Result.Latency.Count = 500, 500, 100
	r.Result.Accounting = &load.Accounting{HeldError: "no answer", Steady: steady, Drain: load.Drain{Ended: load.DrainBound}}
	assert.Equal(t, []string{"drain-incomplete", "lost-unverified"}, flagNames(flagsFor(r)))

	// A warm-up that did not level off, and a window delivering an
	// earlier backlog.
	r = record(10, 10, true, 0)
	r.Result.Counts.SentInWindow, r.Result.Counts.DueInWindow, r.Result.Latency.Count = 500, 500, 100
	r.Result.Accounting = &load.Accounting{Held: &driver.Held{}, Steady: load.Steady{Why: "rising"}, SubExceedsPub: true, SubOverPub: 1.4}
	assert.Equal(t, []string{"not-steady", "sub-exceeds-pub"}, flagNames(flagsFor(r)))

	// Nothing sent in the window; or sent, but none of it arrived.
	r = record(10, 10, true, 0)
	r.Result.Accounting = &load.Accounting{Held: &driver.Held{}, Steady: steady}
	assert.Equal(t, []string{"no-sends-in-window"}, flagNames(flagsFor(r)))
	r.Result.Counts.SentInWindow, r.Result.Counts.DueInWindow = 365, 365
	assert.Equal(t, []string{"no-latency"}, flagNames(flagsFor(r)))

	// An older record (no accounting block) keeps its old flag, with the
	// warning that its lost may include backlog.
	fs = flagsFor(record(10, 10, false, 7))
	assert.Equal(t, []string{"drain-incomplete"}, flagNames(fs))
	assert.Contains(t, fs[0].Detail, "may include backlog")
}

// TestDrainIncompleteSaysWhyLostMayBeUnsent: a drain-incomplete flag says
// when lost may include sends the broker never received (a flush cut by
// the drain's bound, a send in doubt after a dropped connection), and
// says nothing of the kind otherwise.
func TestDrainIncompleteSaysWhyLostMayBeUnsent(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cut      bool
		notAsked string // why the publishers could not say what the broker had not received
		inDoubt  int64
		ended    string
		contains []string
		lacks    []string
	}{
		{"plain", false, "", 0, load.DrainStalled, nil, []string{"flush", "in doubt", "on their way"}},
		{"flush-cut", true, "", 0, load.DrainStalled, []string{"cut the publishers' flush after 62.0 s: 0 send(s) had not reached the broker yet"}, []string{"in doubt", "on their way", "never received"}},
		{"flush-cut, not asked", true, "artemis publishers cannot say", 0, load.DrainStalled,
			[]string{"cut the publishers' flush after 62.0 s, so lost may include sends the broker never received (artemis publishers cannot say)"}, []string{"in doubt", "on their way"}},
		{"in-doubt", false, "", 1, load.DrainStalled, []string{"1 send(s) in doubt"}, []string{"flush", "on their way"}},
		{"still-arriving", false, "", 0, load.DrainBound, []string{"still on their way"}, []string{"flush", "in doubt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &load.Result{
				Counts: load.Counts{Sent: 111, SentInWindow: 2, Expected: 111, Received: 110, Lost: 1, InDoubt: tc.inDoubt, DueInWindow: 2},
				Accounting: &load.Accounting{
					Held:          &driver.Held{},
					Drain:         load.Drain{Ended: tc.ended, S: 64, FlushS: 62, FlushCut: tc.cut},
					ToBrokerError: tc.notAsked,
					Steady:        load.Steady{Levelled: true},
				},
			}
			res.Latency.Count = 2
			f, ok := results.Flagged(accountingFlags(res), results.FlagDrainIncomplete)
			require.True(t, ok)
			assert.Contains(t, f.Detail, "lost 1")
			for _, s := range tc.contains {
				assert.Contains(t, f.Detail, s)
			}
			for _, s := range tc.lacks {
				assert.NotContains(t, f.Detail, s)
			}
		})
	}
}

// TestFlagsNameConnectionsLost: connections the server closed that their
// clients had not noticed, and client outages without a fault, are
// flagged connections-lost with their causes, most first; a cut flush
// whose sends the broker had not routed says so.
func TestFlagsNameConnectionsLost(t *testing.T) {
	steady := load.Steady{Levelled: true}
	r := record(10, 10, false, 500)
	r.Result.Counts.SentInWindow, r.Result.Counts.DueInWindow, r.Result.Latency.Count = 500, 500, 100
	r.Result.Accounting = &load.Accounting{Steady: steady, Drain: load.Drain{Ended: load.DrainBound},
		Held: &driver.Held{ClosedByServer: 6, ClosedReasons: map[string]int{"Slow Consumer (Write Deadline)": 5, "Stale Connection": 1}}}
	r.Result.UnexplainedOutages = 3
	r.Result.OutageCauses = map[string]int{"EOF": 1, "read: connection reset by peer": 2}
	fs := flagsFor(r)
	assert.Equal(t, []string{"drain-incomplete", "connections-lost", "connections-lost"}, flagNames(fs))
	assert.Contains(t, fs[1].Detail, "closed 6 subscriber connection(s) (Slow Consumer (Write Deadline): 5, Stale Connection: 1)")
	assert.Contains(t, fs[2].Detail, "3 client connection(s) dropped without a scheduled fault (all outages by cause: read: connection reset by peer: 2, EOF: 1)")
	assert.NotContains(t, fs[2].Detail, "by its reason", "no replaced connections known: nothing said of the broker's reasons")

	// The broker's reasons for the connections the clients replaced
	// (core NATS: a slow consumer the client only saw as EOF).
	r.Result.Accounting.Held.ReplacedReasons = map[string]int{"Slow Consumer (Pending Bytes)": 3}
	fs = flagsFor(r)
	assert.Contains(t, fs[2].Detail, "(all outages by cause: read: connection reset by peer: 2, EOF: 1); the broker had closed subscriber connections their clients replaced, by its reason: Slow Consumer (Pending Bytes): 3")

	routed := int64(900)
	r = record(10, 10, false, 0)
	r.Result.Counts.Expected, r.Result.Counts.ToBroker = 1000, 100
	r.Result.Counts.SentInWindow, r.Result.Counts.DueInWindow, r.Result.Latency.Count = 500, 500, 100
	r.Result.Accounting = &load.Accounting{Steady: steady, Drain: load.Drain{Ended: load.DrainBound, FlushCut: true, FlushS: 75},
		Held: &driver.Held{Routed: &routed}, ToBrokerUnrouted: true}
	fs = flagsFor(r)
	require.NotEmpty(t, fs)
	assert.Contains(t, fs[0].Detail, "the broker had put 900 of the 1000 due deliveries on the case's queues")
}
