package lab

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVersionNamesTheBuild: without a VCS stamp (go test binaries have
// none, nor does go build -buildvcs=false) pslab's version is the SHA-256
// of its executable, not "devel": builds can be told apart in records and
// run.json. Before, every such build said "devel".
func TestVersionNamesTheBuild(t *testing.T) {
	v := Version()
	assert.NotEqual(t, "devel", v)
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				assert.True(t, strings.HasPrefix(v, s.Value[:12]), v)
				return
			}
		}
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	data, err := os.ReadFile(exe)
	require.NoError(t, err)
	sum := sha256.Sum256(data)
	assert.Equal(t, "sha256:"+hex.EncodeToString(sum[:])[:12], strings.TrimSuffix(v, "+dirty"))
}
