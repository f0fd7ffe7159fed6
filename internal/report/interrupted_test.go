package report

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/load"
	"pslab/internal/results"
)

// TestInterruptedRecordIsNeitherResultNorFailure: a case run cut short by
// SIGINT (89.5 msg/s over 9 s of a 20 s window) must not enter the means
// nor count as a failed repetition; the report says it was left out.
func TestInterruptedRecordIsNeitherResultNorFailure(t *testing.T) {
	full := rec("01", "wireline", 200, "")
	cut := rec("01", "wireline", 89.5, "")
	cut.Rep = 2
	cut.Result.Interrupted = &load.Interruption{Phase: "window", WindowMeasuredS: 9}
	d := Build([]results.Record{full, cut})
	assert.Zero(t, d.Failed)
	assert.Equal(t, 1, d.Interrupted)
	require.Len(t, d.Groups, 1)
	assert.Equal(t, 1, d.Groups[0].Reps)
	assert.InDelta(t, 200, d.Groups[0].Sub.Mean, 1e-9)
	var buf bytes.Buffer
	require.NoError(t, WriteMarkdown(&buf, d, ClaimsCheck{}, []string{"x"}))
	assert.Contains(t, buf.String(), "1 interrupted case run(s) left out")
}
