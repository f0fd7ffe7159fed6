package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBadRunInputIsRefusedBeforeAnything: each of these was accepted, or
// found only after the lab was built and a record written; now each exits
// 2 and writes nothing.
func TestBadRunInputIsRefusedBeforeAnything(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	require.NoError(t, os.WriteFile(good, []byte("suite: g\ncases:\n  - window: 1s\n"), 0o644))
	big := filepath.Join(dir, "big.yaml")
	require.NoError(t, os.WriteFile(big, []byte("suite: g\ncases:\n  - size: 10737418240\n"), 0o644))
	many := filepath.Join(dir, "many.yaml")
	require.NoError(t, os.WriteFile(many, []byte("suite: g\ncases:\n  - publishers: 1000000\n"), 0o644))
	long := filepath.Join(dir, "long.yaml")
	require.NoError(t, os.WriteFile(long, []byte("suite: g\ncases:\n  - window: 100000h\n"), 0o644))
	notDir := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(notDir, []byte("x"), 0o644))
	out := filepath.Join(dir, "out")
	for name, args := range map[string][]string{
		"body over 64 MiB":     {"run", big, "--out", out},
		"beyond nats MaxConn":  {"run", many, "--out", out},
		"window: 100000h":      {"run", long, "--out", out},
		"--reps 0":             {"run", good, "--reps", "0", "--out", out},
		"--out is a file":      {"run", good, "--out", notDir},
		"--out under a file":   {"run", good, "--out", filepath.Join(notDir, "sub")},
		"--network bad":        {"run", good, "--network", "wifi-moon", "--out", out},
		"--lab with bad chars": {"run", good, "--lab", "Bad Name", "--out", out},
	} {
		assert.Equal(t, exitBadInput, execute(args), name)
		_, err := os.Stat(out)
		assert.True(t, os.IsNotExist(err), "%s: nothing written", name)
		data, err := os.ReadFile(notDir)
		require.NoError(t, err)
		assert.Equal(t, "x", string(data), name)
	}
}
