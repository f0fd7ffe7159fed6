package results

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFlagsKeepTheirJSON: flags are written as the "name: detail" strings
// records have always held, and committed records read back typed.
func TestFlagsKeepTheirJSON(t *testing.T) {
	old := `{"flags":["client-bound: the client process used 150% of 200% CPU","publish-errors: 2 (fake: x: y)","loopback"]}`
	var r Record
	require.NoError(t, json.Unmarshal([]byte(old), &r))
	require.Len(t, r.Flags, 3)
	f, ok := Flagged(r.Flags, FlagClientBound)
	require.True(t, ok)
	assert.Equal(t, "the client process used 150% of 200% CPU", f.Detail)
	assert.Equal(t, Flag{Name: FlagPublishErrors, Detail: "2 (fake: x: y)"}, r.Flags[1], "the name ends at the first ':'")
	assert.Equal(t, Flag{Name: FlagLoopback}, r.Flags[2])
	_, ok = Flagged(r.Flags, FlagAuditFailed)
	assert.False(t, ok)

	out, err := json.Marshal(struct {
		Flags []Flag `json:"flags"`
	}{r.Flags})
	require.NoError(t, err)
	assert.JSONEq(t, old, string(out))
	assert.Equal(t, "drain-incomplete: 3 of 9", NewFlag(FlagDrainIncomplete, "%d of %d", 3, 9).String())
}
