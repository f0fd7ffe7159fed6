package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVersionNamesTheBuild: `pslab version` names the build even without
// VCS stamping (this environment builds with -buildvcs=false, and test
// binaries are never stamped): the revision or the executable's hash, never
// "devel", with the long form on a second line.
func TestVersionNamesTheBuild(t *testing.T) {
	var out bytes.Buffer
	rootCmd.SetOut(&out)
	defer rootCmd.SetOut(nil)
	require.Equal(t, exitOK, execute([]string{"version"}))
	first, _, _ := strings.Cut(out.String(), "\n")
	assert.NotContains(t, first, "devel")
	assert.Regexp(t, `^pslab ([0-9a-f]{12}|sha256:[0-9a-f]{12})(\+dirty)? \(go`, first)
	assert.Contains(t, out.String(), "build: ")
	assert.Contains(t, out.String(), "sha256:", "the executable's hash is in the long form")
}
