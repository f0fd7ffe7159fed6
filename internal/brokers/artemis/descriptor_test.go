package artemis

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestArtemisInstallNoteOnlyWhenInstalling: a new lab name with the
// distribution cached creates an instance, it does not "install Artemis
// (first use)".
func TestArtemisInstallNoteOnlyWhenInstalling(t *testing.T) {
	cache := t.TempDir()
	a := NewArtemis(ArtemisConfig{CacheDir: cache, Instance: "lab-x"})
	assert.Contains(t, InstallNote(a, "x"), "first use")
	bin := filepath.Join(a.HomeDir(), "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bin, "artemis"), nil, 0o755))
	note := InstallNote(a, "x")
	assert.NotContains(t, note, "first use")
	assert.Contains(t, note, "instance of lab x")
}
