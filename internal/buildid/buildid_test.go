package buildid

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStampedRevisionNamesTheBuild(t *testing.T) {
	bi := &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}}
	id := Of(bi, "", "")
	assert.Equal(t, "0123456789ab+dirty", id.Short())
	assert.Contains(t, id.Long(), "vcs 0123456789abcdef0123+dirty")
	bi.Settings[1].Value = "false"
	assert.Equal(t, "0123456789ab", Of(bi, "", "").Short())
}

func TestUnstampedBuildIsNamedByItsExecutable(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "pslab")
	require.NoError(t, os.WriteFile(exe, []byte("a binary"), 0o755))
	sum := sha256.Sum256([]byte("a binary"))
	want := hex.EncodeToString(sum[:])
	id := Of(&debug.BuildInfo{}, exe, "/nowhere/internal/buildid/buildid.go")
	assert.Equal(t, "sha256:"+want[:12], id.Short(), "no +dirty: the tree of a binary not built just now is unknown")
	assert.False(t, id.DirtyKnown)
	assert.Equal(t, "source tree unknown; executable sha256:"+want, id.Long())
	assert.Equal(t, "devel", Of(nil, "", "").Short(), "nothing known")
}

// gitTree makes a git checkout of a module named pslab with one commit.
func gitTree(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.email=t@t", "-c", "user.name=t"}, args...)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "internal", "buildid"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module pslab\n\ngo 1.26\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "internal", "buildid", "buildid.go"), []byte("package buildid\n"), 0o644))
	run("init", "-q")
	run("add", ".")
	run("commit", "-q", "-m", "one")
	return root
}

// TestGoRunBuildKnowsItsTree: a binary in a go-build directory (go run, go
// test) compiled from a checkout takes the checkout's revision, and is
// dirty when a build input differs from it; output files of runs in the
// tree (not build inputs) do not make it dirty.
func TestGoRunBuildKnowsItsTree(t *testing.T) {
	root := gitTree(t)
	src := filepath.Join(root, "internal", "buildid", "buildid.go")
	exeDir := filepath.Join(t.TempDir(), "go-build123", "b001", "exe")
	require.NoError(t, os.MkdirAll(exeDir, 0o755))
	exe := filepath.Join(exeDir, "pslab")
	require.NoError(t, os.WriteFile(exe, []byte("x"), 0o755))

	id := Of(&debug.BuildInfo{}, exe, src)
	require.True(t, id.DirtyKnown)
	assert.False(t, id.Dirty)
	assert.Len(t, id.Revision, 40)
	assert.False(t, strings.HasSuffix(id.Short(), "+dirty"))
	assert.Contains(t, id.Long(), "source tree at "+id.Revision)

	require.NoError(t, os.MkdirAll(filepath.Join(root, "results", "x"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "results", "x", "records.jsonl"), []byte("{}\n"), 0o644))
	assert.False(t, Of(&debug.BuildInfo{}, exe, src).Dirty, "a run's output is no build input")

	require.NoError(t, os.WriteFile(filepath.Join(root, "new.go"), []byte("package x\n"), 0o644))
	id = Of(&debug.BuildInfo{}, exe, src)
	assert.True(t, id.Dirty, "an untracked Go file is built in")
	assert.True(t, strings.HasSuffix(id.Short(), "+dirty"), id.Short())
	assert.True(t, strings.HasPrefix(id.Short(), "sha256:"), id.Short())

	// The same tree, a binary elsewhere: built at some other time, its
	// tree unknown.
	other := filepath.Join(t.TempDir(), "pslab")
	require.NoError(t, os.WriteFile(other, []byte("x"), 0o755))
	assert.False(t, Of(&debug.BuildInfo{}, other, src).DirtyKnown)
}
