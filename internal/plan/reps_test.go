package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/metrics"
	"pslab/internal/record"
	"pslab/internal/results"
	"pslab/internal/scenario"
)

// rec is a finished record of case id on broker over net: sub throughput
// tput, mean latency lat ms, n deliveries in a 4 s window after 1 s of
// warm-up, 8 s of wall time (3 s beyond warm-up and window, a 2 s drain).
func rec(net, broker, id string, tput, lat float64, n int64) results.Record {
	return results.Record{Suite: "s", CaseID: id, Broker: broker, Network: results.Network{Profile: net},
		Factors:  scenario.Factors{Publishers: 1, Subscribers: 1, Topics: 1, Size: 100, Subscription: scenario.NonDurable},
		Settings: results.Settings{WarmupS: 1, WindowS: 4, DrainS: 2}, WallS: 8,
		Result: &record.Result{SubTput: tput, Latency: metrics.LatencySummary{Count: 1, MeanMs: lat},
			Counts: record.Counts{ReceivedInWindow: n}, SubSeries: []int64{0, 10, 10, 10, 10}}}
}

func TestRepsFromRecords(t *testing.T) {
	var recs []results.Record
	for _, v := range []float64{90, 100, 110} { // CV 10 % on the wireline
		recs = append(recs, rec("wireline", "b", "01", v, 1, 100000))
	}
	for _, v := range []float64{80, 100, 120} { // CV 20 % at 4 s on the shaped link
		recs = append(recs, rec("wifi-paper", "b", "01", v, 1, 40)) // 10 deliveries/s: 100 s for 1000
	}
	recs = append(recs, rec("wifi-paper", "b", "01", 1, 1, 1)) // quick: left out
	recs[len(recs)-1].Quick = true
	o := DefaultOptions()
	o.Windows = []float64{100}
	o.Chosen = map[string]Phases{"wireline": {2, 5, 5}, "wifi-paper": {5, 400, 15}}
	var b strings.Builder
	require.NoError(t, Reps(&b, recs, o))
	out := b.String()
	t.Log(out)
	assert.Contains(t, out, "| wireline | b | 1 | 4 | 10.0 % | 0.0 % | 0 % | 100000 | 0 of 3 |")
	assert.Contains(t, out, "| wifi-paper | b | 1 | 4 | 20.0 % |", "the quick record is left out")
	assert.Contains(t, out, "| s | 01 | 1/1/1 100 B non-durable | 10.0 | 100 |")
	// CV 20 % at 4 s, window 400 s: 20 % * sqrt(4/400) = 2 %: 5 reps at
	// the `ci:` rule's corrected level (1 - 0.05/8 for 3-10 reps; 3 at a
	// plain 95 %); the wireline's 10 % needs 35 (18), capped at 10. Per
	// wifi-paper run: 5 + 400 + 15 + (3 - 2) s = 421 s; 5 runs = 0.58 h.
	// Per wireline run: 2 + 5 + 5 + 3 = 15 s, 10 runs = 0.04 h.
	assert.Contains(t, out, "| wifi-paper | b | 20.0 % | 5/400/15 | 2.0 % | 5 | 5 | 16.0 | 1 | 5 | 0.58 |")
	assert.Contains(t, out, "| wireline | b | 10.0 % | 2/5/5 | 10.0 % | 35 | 10 | 8.0 | 1 | 10 | 0.04 |")
	// The window choices: at 100 s, no floor: 20 % * sqrt(4/100) = 4 %: 9
	// reps; with the wireline's 10 % as floor: 35, capped at 10.
	assert.Contains(t, out, "| 100 | 0 of 1 | 10 | 0.3 | 0.1 | 9 |")

	o.Chosen = map[string]Phases{"wireline": {2, 5, 5}}
	assert.ErrorContains(t, Reps(&b, recs, o), "no run settings chosen for network wifi-paper")
}

func TestChosenFromTheScenarioFile(t *testing.T) {
	s, err := scenario.Parse("f.yaml", []byte("suite: s\nnetworks: [wireline, wifi-paper]\nmax_reps: 7\nper_network:\n  wifi-paper: {window: 180s}\ndefaults:\n  warmup: 1s\n  window: 4s\n  drain: 2s\ncases:\n  - {}\n"), scenario.Options{})
	require.NoError(t, err)
	ch, maxReps, err := ChosenFrom(s)
	require.NoError(t, err)
	assert.Equal(t, 7, maxReps)
	assert.Equal(t, Phases{1, 180, 2}, ch["wifi-paper"], "what per_network: leaves out comes from the cases")
}
