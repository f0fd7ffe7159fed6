package plot

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHockey: one figure per case with points (PNG and SVG); a case
// without any point is skipped with the reason.
func TestHockey(t *testing.T) {
	dir := t.TempDir()
	cases := []HockeyCase{
		{Name: "s-01", Title: "s case 01", Curves: []HockeyCurve{
			{Label: "nats wireline", Capacity: 120000, Points: []HockeyPoint{
				{Delivered: 30000, MeanMs: 0.4, P99Ms: 2, Level: true},
				{Delivered: 60000, MeanMs: 0.6, P99Ms: 3, Level: true},
				{Delivered: 96000, MeanMs: 2, P99Ms: 20, Level: true},
				{Delivered: 110000, P99Ms: 40},
			}},
			{Label: "nats wifi-paper", Capacity: 400, LowerBound: true, Points: []HockeyPoint{
				{Delivered: 100, MeanMs: 30, P99Ms: 300, Level: true},
				{Delivered: 200, MeanMs: 50, P99Ms: 500, Level: true},
			}},
		}},
		{Name: "s-02", Title: "nothing yet", Curves: []HockeyCurve{{Label: "artemis wireline"}}},
	}
	out, err := Hockey(cases, Options{OutDir: dir})
	require.NoError(t, err)
	require.Len(t, out.Files, 2)
	for _, f := range out.Files {
		st, err := os.Stat(f)
		require.NoError(t, err)
		assert.Positive(t, st.Size())
	}
	assert.Equal(t, filepath.Join(dir, "hockey-s-01.png"), out.Files[0])
	require.Len(t, out.Skipped, 1)
	assert.Contains(t, out.Skipped[0], "hockey s-02")
}
