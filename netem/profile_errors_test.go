package netem

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryProfileErrorIsReported: a profile file with two bad values
// reports both, each at its line (before: only the first).
func TestEveryProfileErrorIsReported(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(file, []byte("name: bad\nrate_kbit: -1\nloss_pct: 150\n"), 0o644))
	_, err := LoadProfile(file)
	require.Error(t, err)
	assert.Contains(t, err.Error(), file+":2: rate_kbit")
	assert.Contains(t, err.Error(), file+":3: loss_pct")
	assert.ErrorIs(t, err, ErrBadProfile)
}
