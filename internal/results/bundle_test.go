package results

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestBundleAppendsWholeRecordsAndMakesNoDirUntilWritten(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	b, err := Create(dir)
	require.NoError(t, err)
	_, err = os.Stat(dir)
	assert.True(t, os.IsNotExist(err), "nothing is written before the first record")
	for i := 1; i <= 3; i++ {
		require.NoError(t, b.Append(&Record{Schema: SchemaVersion, CaseID: "c", Rep: i}))
	}
	recs, err := Read(dir)
	require.NoError(t, err)
	require.Len(t, recs, 3)
	assert.Equal(t, 3, recs[2].Rep)
	left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
	assert.Empty(t, left, "no temp files left behind")
}

func TestReadNamesTheBadLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "records.jsonl")
	require.NoError(t, os.WriteFile(path, []byte("{\"case\":\"a\"}\n{\"case\":\n"), 0o644))
	_, err := Read(path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "records.jsonl:2:")
}

// A write that cannot replace its target (here a directory of that name)
// fails and leaves no temp file beside it.
func TestWriteAtomicLeavesNoTempFileWhenItFails(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out")
	require.NoError(t, os.Mkdir(target, 0o755))
	require.Error(t, WriteAtomic(target, []byte("data")))
	left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
	assert.Empty(t, left, "no temp file left beside the target")
}

// A device or a pipe at the path is never replaced by a regular file.
func TestWriteAtomicNeverReplacesAPipe(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	require.Error(t, WriteAtomic(fifo, []byte("data")))
	st, err := os.Lstat(fifo)
	require.NoError(t, err)
	assert.Equal(t, os.ModeNamedPipe, st.Mode().Type(), "still a pipe")
	left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
	assert.Empty(t, left)
}
