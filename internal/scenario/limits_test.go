package scenario

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLimitsAreCheckedWithTheirLines: a body beyond the codecs' 64 MiB and
// a phase beyond a day are refused with their lines (before, the size was
// found after the lab was built, and window: 100000h was accepted).
func TestLimitsAreCheckedWithTheirLines(t *testing.T) {
	_, err := Parse("big.yaml", []byte("suite: b\ncases:\n  - size: 10737418240\n    window: 100000h\n"), Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "big.yaml:3: size 10737418240 exceeds the 67108864-byte")
	assert.Contains(t, err.Error(), "big.yaml:4: window 100000h0m0s is longer than")
}

// TestTypeErrorIsReportedOnce: a value of the wrong type is one error, not
// also "must be at least 1, got 0" for the value it left unset.
func TestTypeErrorIsReportedOnce(t *testing.T) {
	_, err := Parse("t.yaml", []byte("suite: b\ncases:\n  - publishers: many\n"), Options{})
	require.Error(t, err)
	errs, ok := err.(Errors)
	require.True(t, ok, "%T", err)
	assert.Len(t, errs, 1, err.Error())
	assert.Contains(t, err.Error(), "t.yaml:3: publishers:")
}

// TestBinaryFileErrorHasALine: a binary file's "control characters" error
// says where (before: no line).
func TestBinaryFileErrorHasALine(t *testing.T) {
	_, err := Parse("bin.yaml", []byte("suite: b\ncases:\n\x00\x01\x02"), Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bin.yaml:3: ")
}

// TestBrokersAndNetworksLinesAreKept: MakePlan reports unknown names in
// these lists at their lines.
func TestBrokersAndNetworksLinesAreKept(t *testing.T) {
	s, err := Parse("l.yaml", []byte("suite: b\nbrokers: [nats]\nnetworks: [wireline]\ncases:\n  - id: a\n"), Options{})
	require.NoError(t, err)
	assert.Equal(t, 2, s.BrokersLine)
	assert.Equal(t, 3, s.NetworksLine)
}
