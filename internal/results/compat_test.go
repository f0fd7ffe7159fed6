package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// committedRecordFiles are every records file under results/, superseded
// ones included.
func committedRecordFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir("../../results", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() && strings.HasPrefix(e.Name(), "records") && strings.HasSuffix(e.Name(), ".jsonl") {
			files = append(files, p)
		}
		return nil
	})
	require.NoError(t, err)
	return files
}

// TestCommittedRecordsWriteBackByteIdentically: every line of every
// committed records file (superseded ones too) reads into the typed
// record (network spec, link counters, verification, flags) and writes
// back to the same bytes: no key added (a late key an old record lacks
// stays absent, record.LateKeys), none lost, none reordered, no number
// written differently. Bundle rewrites (pslab bundle set-aside, resume)
// can therefore go through the types. With the race detector it checks
// every 25th line of each file (71 MB take minutes there);
// scripts/test.sh runs it whole without.
func TestCommittedRecordsWriteBackByteIdentically(t *testing.T) {
	files := committedRecordFiles(t)
	if len(files) == 0 {
		t.Skip("no committed results in this tree")
	}
	every := 1
	if raceEnabled {
		every = 25
	}
	var n, superseded, shaped, links, verified, flags int
	for _, f := range files {
		fh, err := os.Open(f)
		require.NoError(t, err)
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
		line := 0
		for sc.Scan() {
			line++
			if (line-1)%every != 0 {
				continue
			}
			in := sc.Bytes()
			var r Record
			require.NoError(t, json.Unmarshal(in, &r), "%s:%d", f, line)
			require.NotNil(t, r.Network.Spec, "%s:%d", f, line)
			assert.Equal(t, r.Network.Profile, r.Network.Spec.Name, "%s:%d", f, line)
			if r.Network.Spec.Shaped() {
				shaped++
			}
			if r.Network.Link != nil && r.Network.Link.Counters != nil {
				links++
			}
			if r.Network.Verify != nil {
				verified++
				assert.Equal(t, r.Network.Profile, r.Network.Verify.Profile.Name, "%s:%d", f, line)
			}
			for _, fl := range r.Flags {
				assert.NotEmpty(t, fl.Name, "%s:%d", f, line)
				flags++
			}
			out, err := json.Marshal(r)
			require.NoError(t, err, "%s:%d", f, line)
			if !bytes.Equal(in, out) {
				i := 0
				for i < len(in) && i < len(out) && in[i] == out[i] {
					i++
				}
				from := max(i-80, 0)
				t.Fatalf("%s:%d differs at byte %d:\n read  %s\n wrote %s", f, line, i,
					in[from:min(i+80, len(in))], out[from:min(i+80, len(out))])
			}
			n++
			if strings.Contains(f, "superseded") {
				superseded++
			}
		}
		require.NoError(t, sc.Err(), f)
		require.NoError(t, fh.Close())
	}
	t.Logf("%d records (every %d. line) in %d files (%d superseded) write back byte-identically; %d shaped, %d with link counters, %d verified, %d flags",
		n, every, len(files), superseded, shaped, links, verified, flags)
	assert.Positive(t, superseded, "the superseded records are read too")
	if shaped > 0 {
		assert.Positive(t, links, "shaped records carry typed link counters")
		assert.Positive(t, verified, "shaped records carry their profile's verification")
	}
}
