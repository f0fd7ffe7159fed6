package lab

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"pslab/internal/driver"
	"pslab/internal/load"
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
