package report

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"

	"pslab/internal/driver"
	"pslab/internal/load"
	"pslab/internal/results"
)

func TestLostCellKeepsBacklogApartAndMarksOldRecords(t *testing.T) {
	// A new record: the broker held 1770, nothing lost.
	held := rec("04", "wifi-paper", 10, "")
	held.Result.Counts = load.Counts{Expected: 2342, Received: 572, Backlog: 1770}
	held.Result.Accounting = &load.Accounting{Held: &driver.Held{Backlog: 1770}}
	// An old record: drain-incomplete, lost = expected - received.
	old := rec("05", "wifi-paper", 10, "")
	old.Result.Counts = load.Counts{Expected: 2342, Received: 572, Lost: 1770}
	d := Build([]results.Record{held, old})
	assert.Equal(t, "0 +1770 backlog", lostCell(d.index[GroupKey{Suite: "s", Case: "04", Broker: "nats", Network: "wifi-paper"}]))
	assert.Equal(t, "1770*", lostCell(d.index[GroupKey{Suite: "s", Case: "05", Broker: "nats", Network: "wifi-paper"}]))
	var b bytes.Buffer
	WriteSummary(&b, []results.Record{held, old})
	assert.Contains(t, b.String(), lostNote)
	b.Reset()
	WriteSummary(&b, []results.Record{held})
	assert.NotContains(t, b.String(), lostNote, "no old record, no note")
}
