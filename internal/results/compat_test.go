package results

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCommittedRecordsReadBackTyped: every committed record reads back
// into the typed schema (network spec, link, verification, flags), and
// writing it again gives the same JSON for those parts.
func TestCommittedRecordsReadBackTyped(t *testing.T) {
	files, err := filepath.Glob("../../results/*/records.jsonl")
	require.NoError(t, err)
	more, err := filepath.Glob("../../results/*/*/records.jsonl")
	require.NoError(t, err)
	files = append(files, more...)
	if len(files) == 0 {
		t.Skip("no committed results in this tree")
	}
	var shaped, links, verified, flags int
	for _, f := range files {
		recs, err := Read(f)
		require.NoError(t, err, f)
		for _, r := range recs {
			require.NotNil(t, r.Network.Spec, "%s: %s", f, r.CaseID)
			assert.Equal(t, r.Network.Profile, r.Network.Spec.Name, f)
			if r.Network.Spec.Shaped() {
				shaped++
			}
			if r.Network.Link != nil && r.Network.Link.Counters != nil {
				links++
			}
			if r.Network.Verify != nil {
				verified++
				assert.Equal(t, r.Network.Profile, r.Network.Verify.Profile.Name, f)
			}
			for _, fl := range r.Flags {
				assert.NotEmpty(t, fl.Name, f)
				flags++
			}
		}
	}
	t.Logf("%d files: %d shaped records, %d with link counters, %d verified, %d flags", len(files), shaped, links, verified, flags)
	if shaped > 0 {
		assert.Positive(t, links, "shaped records carry typed link counters")
		assert.Positive(t, verified, "shaped records carry their profile's verification")
	}
	// The typed parts write back as they were read (the first lines of
	// each file).
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for i, line := range bytes.SplitN(data, []byte("\n"), 21)[:min(20, bytes.Count(data, []byte("\n")))] {
			var raw struct {
				Network json.RawMessage `json:"network"`
				Flags   json.RawMessage `json:"flags"`
			}
			require.NoError(t, json.Unmarshal(line, &raw))
			var r Record
			require.NoError(t, json.Unmarshal(line, &r))
			nw, err := json.Marshal(r.Network)
			require.NoError(t, err)
			assert.JSONEq(t, string(raw.Network), string(nw), "%s line %d", f, i+1)
			if len(raw.Flags) > 0 {
				fl, err := json.Marshal(r.Flags)
				require.NoError(t, err)
				assert.JSONEq(t, string(raw.Flags), string(fl), "%s line %d", f, i+1)
			}
		}
	}
}
