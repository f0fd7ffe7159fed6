package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/netem"
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

// TestContradictionsAreRefusedBeforeAnything: flags that contradict each
// other, the file or the broker are bad input (exit 2), reported with
// every other problem of the flags and the files at once, and nothing is
// written. Before, each of these ran (exit 0), and a flag error hid the
// file's errors.
func TestContradictionsAreRefusedBeforeAnything(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PSLAB_CACHE", filepath.Join(dir, "cache"))
	good := filepath.Join(dir, "good.yaml")
	require.NoError(t, os.WriteFile(good, []byte(fakeSuite), 0o644))
	ciFile := filepath.Join(dir, "ci.yaml")
	require.NoError(t, os.WriteFile(ciFile, []byte(strings.Replace(fakeSuite, "networks:", "ci: 5%\nmax_reps: 2\nnetworks:", 1)), 0o644))
	negative := filepath.Join(dir, "negative.yaml")
	require.NoError(t, os.WriteFile(negative, []byte("suite: n\ncases:\n  - publishers: -1\n"), 0o644))
	empty := filepath.Join(dir, "empty.yaml")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	nats := "nats://u:pw@" + natsJetStream(t, "pw")
	out := filepath.Join(dir, "out")
	for name, tc := range map[string]struct {
		args []string
		want []string
	}{
		"reps over max-reps":      {[]string{good, "--ci", "5%", "--reps", "5", "--max-reps", "2"}, []string{"--reps 5", "--max-reps 2"}},
		"reps over file max_reps": {[]string{ciFile, "--reps", "5"}, []string{"--reps 5", "max_reps: 2"}},
		"force without resume":    {[]string{good, "--force"}, []string{"--force", "--resume"}},
		"empty lab":               {[]string{good, "--lab", ""}, []string{"--lab"}},
		"url scheme":              {[]string{good, "--broker", "nats", "--url", "nats=" + strings.Replace(nats, "nats://", "http://", 1)}, []string{"--url nats=", "scheme http", "nats"}},
		"flag and file errors":    {[]string{negative, "--reps", "0"}, []string{"--reps must be at least 1", negative + ":3:"}},
		"empty file":              {[]string{empty}, []string{empty + ":1:", "empty"}},
	} {
		log, err := runCmd(append(tc.args, "--out", out)...)
		if !assert.Error(t, err, "%s: accepted", name) {
			require.NoError(t, os.RemoveAll(out))
			continue
		}
		assert.True(t, isBadInput(err), "%s: %v", name, err)
		for _, w := range tc.want {
			assert.Contains(t, err.Error(), w, name)
		}
		assert.NotContains(t, log, "suite ", "%s: no banner", name)
		_, statErr := os.Stat(out)
		assert.True(t, os.IsNotExist(statErr), "%s: nothing written", name)
	}
}

// TestUnsupportedProfileIsRefusedBeforeAnything: a profile this kernel's
// backend cannot emulate (wifi-bursty needs sch_netem's loss correlation;
// this kernel has tbf+nftables) is refused as `pslab netem up` refuses it,
// with exit 2, before the run's banner and run.json. Before, the run
// printed its banner, wrote run.json, built the lab and exited 1.
func TestUnsupportedProfileIsRefusedBeforeAnything(t *testing.T) {
	if testing.Short() {
		t.Skip("asks the kernel in a network namespace (root)")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	b, err := netem.KernelBackend()
	require.NoError(t, err)
	if b == netem.BackendNetem {
		t.Skip("this kernel has sch_netem: a profile asking for netem is supported")
	}
	// Delay is the relay's where the kernel has no sch_netem; a profile
	// that insists on netem cannot run here.
	dir := t.TempDir()
	prof := filepath.Join(dir, "netem-only.yaml")
	require.NoError(t, os.WriteFile(prof, []byte("delay_ms: 5\nbackend: netem\n"), 0o644))
	good := filepath.Join(dir, "good.yaml")
	require.NoError(t, os.WriteFile(good, []byte("suite: g\ncases:\n  - window: 1s\n"), 0o644))
	out := filepath.Join(dir, "out")
	log, err := runCmd(good, "--broker", "nats", "--network", prof, "--out", out, "--lab", "unsup")
	require.Error(t, err)
	assert.True(t, isBadInput(err), err)
	assert.Contains(t, err.Error(), "netem-only")
	assert.Contains(t, err.Error(), "sch_netem")
	assert.NotContains(t, log, "suite g:", "no banner")
	_, statErr := os.Stat(out)
	assert.True(t, os.IsNotExist(statErr), "nothing written")
	assert.Equal(t, exitBadInput, execute([]string{"netem", "up", prof, "--lab", "unsup"}), "as netem up refuses it")
}
