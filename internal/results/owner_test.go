package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestBundleRefusesADuplicateRecord: a bundle holds each (suite, case,
// broker, network, repetition) once; a second record with the same key is
// refused and not written, whichever Bundle (or process) writes it. Before,
// two runs into one directory left two records called "rep 1", which
// report pooled as two repetitions.
func TestBundleRefusesADuplicateRecord(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	rec := func(rep int, net string) *Record {
		return &Record{Schema: SchemaVersion, Suite: "s", CaseID: "01", Broker: "nats", Network: Network{Profile: net}, Rep: rep}
	}
	b, err := Create(dir)
	require.NoError(t, err)
	require.NoError(t, b.Append(rec(1, "wireline")))
	require.NoError(t, b.Append(rec(1, "wifi-paper")), "another network is another key")
	require.NoError(t, b.CheckNew(rec(2, "wireline")))
	err = b.Append(rec(1, "wireline"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "already holds")
	require.Error(t, b.CheckNew(rec(1, "wireline")))

	// A second writer of the same directory sees what the first wrote.
	other, err := Create(dir)
	require.NoError(t, err)
	require.Error(t, other.Append(rec(1, "wifi-paper")))
	require.NoError(t, other.Append(rec(2, "wifi-paper")))
	require.Error(t, b.Append(rec(2, "wifi-paper")), "the first writer sees the second's record")

	recs, err := Read(dir)
	require.NoError(t, err)
	assert.Len(t, recs, 3, "refused records are not written")
}

// TestLockDirRefusesASecondWriter: an output directory held by a live
// process (here a lock taken as another process's would be) is refused
// with that process's pid; once it lets go the directory is free, and
// the lock file is gone.
func TestLockDirRefusesASecondWriter(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	require.NoError(t, unix.Flock(int(f.Fd()), unix.LOCK_EX))
	_, err = f.WriteString("4242\n")
	require.NoError(t, err)

	_, err = LockDir(dir)
	var le *LockedError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, 4242, le.PID)
	assert.Contains(t, err.Error(), "pslab pid 4242")
	held, pid := DirHolder(dir)
	assert.True(t, held)
	assert.Equal(t, 4242, pid)

	f.Close() // the holder ends
	l, err := LockDir(dir)
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(dir, LockFile))
	require.NoError(t, err)
	assert.Equal(t, os.Getpid(), atoi(t, strings.TrimSpace(string(data))))
	st, err := os.Stat(filepath.Join(dir, LockFile))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), st.Mode().Perm())
	inner, err := LockDir(filepath.Join(dir, "suite"))
	require.NoError(t, err, "a directory inside one this process holds is covered")
	inner.Release()
	l.Release()
	_, err = os.Stat(filepath.Join(dir, LockFile))
	assert.True(t, os.IsNotExist(err), "the lock file goes with its holder")
	assert.DirExists(t, dir, "a directory that was there stays")

	fresh := filepath.Join(t.TempDir(), "fresh")
	l, err = LockDir(fresh)
	require.NoError(t, err)
	l.Release()
	assert.NoDirExists(t, fresh, "a directory the lock made and nothing was written into goes")
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, c := range s {
		require.True(t, c >= '0' && c <= '9', s)
		n = n*10 + int(c-'0')
	}
	return n
}
