package report

import (
	"fmt"

	"pslab/internal/results"
)

// lostUnverified tells whether a record's lost count may include messages
// that were only queued: a record of an older pslab (no accounting block)
// whose drain ended early, or one whose broker could not be asked what it
// still held.
func lostUnverified(r *results.Record) bool {
	res := r.Result
	if res == nil || res.Counts.Lost == 0 {
		return false
	}
	if res.Accounting == nil {
		return !res.DrainComplete
	}
	return res.Accounting.Held == nil
}

// lostCell is a group's lost count for the tables: only loss, with the
// backlog the broker still held and the deliveries due for sends still on
// their way to it beside it, and marked lostMark when some of its
// records' lost may include backlog.
func lostCell(g *Group) string {
	s := fmt.Sprint(g.Lost)
	if g.LostUnverified > 0 {
		s += lostMark
	}
	if g.Backlog > 0 {
		s += fmt.Sprintf(" +%d backlog", g.Backlog)
	}
	if g.ToBroker > 0 {
		s += fmt.Sprintf(" +%d to broker", g.ToBroker)
	}
	return s
}

// lostMark marks a lost count that may include backlog; lostNote explains it.
const (
	lostMark = "*"
	lostNote = "* lost may include backlog: records of an older pslab (or whose broker could not be asked what it held) count every delivery missing when the drain ended as lost (flag drain-incomplete)."
)

// anyLostUnverified tells whether a lost cell of d carries lostMark.
func anyLostUnverified(d *Dataset) bool {
	for _, g := range d.Groups {
		if g.LostUnverified > 0 {
			return true
		}
	}
	return false
}
