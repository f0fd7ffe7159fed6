package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/results"
)

// capRec is a capacity record of case id on broker over net, in lab,
// started at t0+at seconds: a probe of search (0 the pilot), or a
// fixed-load run when search < 0.
func capRec(net, lab, broker, id string, search int, at, wall float64) results.Record {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	r := results.Record{RunID: "run1", Suite: "s", CaseID: id, Broker: broker,
		Network: results.Network{Profile: net, Lab: lab},
		Started: t0.Add(time.Duration(at * float64(time.Second))), WallS: wall}
	if search < 0 {
		r.Mode, r.FixedLoad = results.ModeFixedLoad, &results.FixedLoad{Fraction: 0.5}
	} else {
		r.Mode, r.Probe = results.ModeCapacityProbe, &results.Probe{Search: search}
	}
	return r
}

// TestCapacityBudget: the cost of a run is the time to the next start in
// its lab (the last one its wall time and purge after), runs per row
// split into pilot, counted and fixed-load, paper-mode records left out,
// and the projection multiplies rows, runs per row and seconds per run
// over the labs.
func TestCapacityBudget(t *testing.T) {
	recs := []results.Record{
		// wireline, row 01: pilot 2 probes, counted 2, fixed 1; 10 s apart.
		capRec("wireline", "", "nats", "01", 0, 0, 6),
		capRec("wireline", "", "nats", "01", 0, 10, 6),
		capRec("wireline", "", "nats", "01", 1, 20, 6),
		capRec("wireline", "", "nats", "01", 2, 30, 6),
		capRec("wireline", "", "nats", "01", -1, 40, 6),
		// row 02: 3 probes, 10 s apart; its last is the lab's last: 6 s wall + 4 s purge.
		capRec("wireline", "", "nats", "02", 0, 50, 6),
		capRec("wireline", "", "nats", "02", 1, 60, 6),
		capRec("wireline", "", "nats", "02", 2, 70, 6),
		// wifi-paper in two labs running at once: 40 s apart in each.
		capRec("wifi-paper", "p1", "nats", "01", 0, 0, 35),
		capRec("wifi-paper", "p2", "nats", "02", 0, 1, 35),
		capRec("wifi-paper", "p1", "nats", "01", 1, 40, 35),
		capRec("wifi-paper", "p2", "nats", "02", 1, 41, 35),
		// paper mode: left out.
		{RunID: "run0", Suite: "s", CaseID: "01", Broker: "nats", Network: results.Network{Profile: "wireline"}, WallS: 1000},
	}
	recs[7].Phases = &results.Phases{PurgeAfterS: 4}
	b, err := CapacityBudget(recs, map[string]int{"wireline": 100, "wifi-paper": 50, "lan": 3}, map[string]int{"wifi-paper": 2})
	require.NoError(t, err)
	assert.Equal(t, 12, b.Records)
	require.Len(t, b.Groups, 2)
	wl := b.Groups[1]
	assert.Equal(t, BudgetGroup{Network: "wireline", Broker: "nats", Rows: 2, RunsMedian: 4, RunsMin: 3, RunsMax: 5,
		Pilot: 1.5, Counted: 2, Fixed: 0.5, SecPerRun: 10}, wl)
	wifi := b.Groups[0]
	assert.Equal(t, "wifi-paper", wifi.Network)
	assert.Equal(t, 2.0, wifi.RunsMedian)
	assert.Equal(t, 37.5, wifi.SecPerRun, "40 s to the next start, 35 s for each lab's last")
	require.Len(t, b.Networks, 2)
	assert.Equal(t, 2*37.5*50/2.0, b.Networks[0].Seconds)
	assert.Equal(t, 4*10*100.0, b.Networks[1].Seconds)
	assert.Equal(t, b.Networks[0].Seconds+b.Networks[1].Seconds, b.Seconds)
	assert.Equal(t, []string{"lan: rows given, but no capacity record of it: not projected"}, b.Unprojected)

	var out strings.Builder
	WriteCapacityBudget(&out, b)
	assert.Contains(t, out.String(), "| wireline | nats | 2 | 4 (3-5) | 1.5 + 2 + 0.5 | 10.0 | 40 |")
	assert.Contains(t, out.String(), "Projected machine time: 5875 s (1.6 h)")

	_, err = CapacityBudget(recs[len(recs)-1:], nil, nil)
	assert.ErrorContains(t, err, "no capacity record")
}
