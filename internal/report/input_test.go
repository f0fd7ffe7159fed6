package report

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadRecordsErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		path, want string
		line       int
	}{
		{"testdata/missing.jsonl", "no such file", 0},
		{dir, "no records file in this directory", 0},
		{"testdata/empty.jsonl", "no records in the file", 0},
		{"testdata/bad-line.jsonl", "not a result record", 2},
		{"testdata/not-record.jsonl", "no \"schema\" field", 1},
	} {
		_, err := ReadRecords(tc.path)
		require.Error(t, err, tc.path)
		var ie *InputError
		require.True(t, errors.As(err, &ie), "%s: %T", tc.path, err)
		assert.Contains(t, err.Error(), tc.want, tc.path)
		assert.Equal(t, tc.line, ie.Line, tc.path)
		if tc.line > 0 {
			assert.Contains(t, err.Error(), tc.path+":"+string(rune('0'+tc.line))+":", "file:line in %q", err.Error())
		}
	}
	_, err := ReadRecords()
	assert.Error(t, err)
}

func TestReadRecordsBundleAndSeveral(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("testdata/table.jsonl")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "records.jsonl"), data, 0o644))
	one, err := ReadRecords(dir)
	require.NoError(t, err)
	assert.Len(t, one, 6)
	two, err := ReadRecords(dir, "claims/testdata/claims.jsonl")
	require.NoError(t, err)
	assert.Len(t, two, 6+72)
}

func TestReadRecordsNewerSchema(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.jsonl")
	require.NoError(t, os.WriteFile(p, []byte(`{"schema":99,"case":"1","broker":"b","network":{"profile":"wireline"}}`+"\n"), 0o644))
	_, err := ReadRecords(p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), p+":1: record schema 99 is newer")
}

// A run directory (the --out of a run over several scenario files) is read
// as the bundles of its suites; a directory with neither is bad input.
func TestReadRecordsRunDirectory(t *testing.T) {
	data, err := os.ReadFile("testdata/table.jsonl")
	require.NoError(t, err)
	run := t.TempDir()
	for _, suite := range []string{"set-b", "set-a"} {
		require.NoError(t, os.MkdirAll(filepath.Join(run, suite), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(run, suite, "records.jsonl"), data, 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(run, "plots"), 0o755)) // no records: not a suite
	files, err := RecordFiles(run)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(run, "set-a", "records.jsonl"), filepath.Join(run, "set-b", "records.jsonl")}, files)
	recs, err := ReadRecords(run)
	require.NoError(t, err)
	assert.Len(t, recs, 12)

	_, err = ReadRecords(filepath.Join(run, "plots"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nor in a suite directory in it")
}
