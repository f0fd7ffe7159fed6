package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCaseFilter(t *testing.T) {
	f, err := parseCaseFilter("1-4,17,x.01")
	require.NoError(t, err)
	for id, want := range map[string]bool{"01": true, "4": true, "05": false, "17": true, "x.01": true, "x.02": false} {
		assert.Equal(t, want, f(id), id)
	}
	_, err = parseCaseFilter("4-1")
	assert.Error(t, err)
	f, err = parseCaseFilter("")
	require.NoError(t, err)
	assert.Nil(t, f)
	f, err = parseCaseFilter("nats-subject.*,artemis-header.03,2-3")
	require.NoError(t, err)
	for id, want := range map[string]bool{"nats-subject.01": true, "nats-subject.36": true, "artemis-header.03": true,
		"artemis-header.04": false, "03": true, "artemis-property.01": false} {
		assert.Equal(t, want, f(id), id)
	}
	_, err = parseCaseFilter("2-x")
	assert.Error(t, err, "half a range is a typo")
}

func TestPercent(t *testing.T) {
	v, err := parsePercent("5%")
	require.NoError(t, err)
	assert.InDelta(t, 0.05, v, 1e-12)
	v, err = parsePercent("0.1")
	require.NoError(t, err)
	assert.InDelta(t, 0.1, v, 1e-12)
	for _, bad := range []string{"x", "0%", "150%"} {
		_, err := parsePercent(bad)
		assert.Error(t, err, bad)
	}
}

// TestBadInputExitsTwoAndWritesNothing: each bad input gets exit code 2 and
// no output directory.
func TestBadInputExitsTwoAndWritesNothing(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("suite: b\ncases:\n  - publishers: -1\n"), 0o644))
	good := filepath.Join(dir, "good.yaml")
	require.NoError(t, os.WriteFile(good, []byte("suite: g\ncases:\n  - window: 1s\n"), 0o644))
	out := filepath.Join(dir, "out")
	for name, args := range map[string][]string{
		"bad file":          {"run", bad, "--out", out},
		"missing file":      {"run", filepath.Join(dir, "nope.yaml"), "--out", out},
		"unknown broker":    {"run", good, "--broker", "rabbit", "--out", out},
		"unreachable url":   {"run", good, "--url", "nats=nats://127.0.0.1:1", "--out", out},
		"bad cases":         {"run", good, "--cases", "9-1", "--out", out},
		"unknown flag":      {"run", good, "--colour", "--out", out},
		"no file":           {"run"},
		"bad vary":          {"sweep", "--vary", "colour=red", "--out", out},
		"bad sweep value":   {"sweep", "--vary", "size=-1", "--out", out},
		"unknown broker op": {"broker", "start", "rabbit"},
	} {
		code := execute(args)
		assert.Equal(t, exitBadInput, code, name)
		_, err := os.Stat(out)
		assert.True(t, os.IsNotExist(err), "%s: nothing written", name)
	}
}

func TestModelMeasureRefusesUnknownExperiment(t *testing.T) {
	cmd := newModelMeasureCmd()
	cmd.SetArgs([]string{"--experiments", "grid,nonsense"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.Execute()
	if err == nil || !strings.Contains(err.Error(), `unknown experiment "nonsense"`) {
		t.Fatalf("got %v", err)
	}
}
