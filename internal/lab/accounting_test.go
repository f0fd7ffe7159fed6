package lab

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/driver"
	"pslab/internal/load"
	"pslab/internal/results"
)

// TestDrainIncompleteSaysWhyLostMayBeUnsent: a drain-incomplete flag says
// when lost may include sends the broker never received (a flush cut by
// the drain's bound, a send in doubt after a dropped connection), and
// says nothing of the kind otherwise.
func TestDrainIncompleteSaysWhyLostMayBeUnsent(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cut      bool
		inDoubt  int64
		ended    string
		contains []string
		lacks    []string
	}{
		{"plain", false, 0, load.DrainStalled, nil, []string{"flush", "in doubt", "on their way"}},
		{"flush-cut", true, 0, load.DrainStalled, []string{"cut the publishers' flush after 62.0 s"}, []string{"in doubt", "on their way"}},
		{"in-doubt", false, 1, load.DrainStalled, []string{"1 send(s) in doubt"}, []string{"flush", "on their way"}},
		{"still-arriving", false, 0, load.DrainBound, []string{"still on their way"}, []string{"flush", "in doubt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &load.Result{
				Counts: load.Counts{Sent: 111, SentInWindow: 2, Expected: 111, Received: 110, Lost: 1, InDoubt: tc.inDoubt, DueInWindow: 2},
				Accounting: &load.Accounting{
					Held:   &driver.Held{},
					Drain:  load.Drain{Ended: tc.ended, S: 64, FlushS: 62, FlushCut: tc.cut},
					Steady: load.Steady{Levelled: true},
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
