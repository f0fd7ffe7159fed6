package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/broker"
	"pslab/internal/brokers/artemis"
	"pslab/internal/maven"
)

// TestInstallPrintsTheTarballWithAnotherHOME runs `pslab broker install
// artemis --print-path` with HOME an empty directory other than the
// passwd home (as `sudo -E` and CI jobs that set HOME do): it prints, alone
// on stdout, the tarball where Maven keeps it (under Java's user.home, the
// passwd home), and puts nothing under $HOME/.m2. Before, pslab and
// docker/build-local.sh looked in $HOME/.m2, found nothing after Maven had
// filled /root/.m2, and a fresh clone's .ci/run failed after 835 s.
func TestInstallPrintsTheTarballWithAnotherHOME(t *testing.T) {
	if testing.Short() {
		t.Skip("installs Artemis through Maven (network, java)")
	}
	for _, tool := range []string{"mvn", "java"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	bin := buildPslab(t)
	home := t.TempDir()
	cmd := exec.Command(bin, "broker", "install", "artemis", "--print-path")
	cmd.Env = append(os.Environ(), "HOME="+home, "PSLAB_CACHE="+broker.CacheDir(), "MAVEN_OPTS=", "MAVEN_ARGS=")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	path := strings.TrimSpace(string(out))
	assert.NotContains(t, path, "\n", "the path alone on stdout")
	assert.FileExists(t, path)
	assert.Equal(t, "apache-artemis-"+artemis.DefaultArtemisVersion+"-bin.tar.gz", filepath.Base(path))
	assert.False(t, strings.HasPrefix(path, home), "not under $HOME: %s", path)
	t.Setenv("HOME", home)
	t.Setenv("MAVEN_OPTS", "")
	t.Setenv("MAVEN_ARGS", "")
	repo, err := maven.LocalRepo()
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(path, repo.Dir+string(filepath.Separator)), "%s is in Maven's local repository %s (%s)", path, repo.Dir, repo.Source)
	_, err = os.Stat(filepath.Join(home, ".m2"))
	assert.True(t, os.IsNotExist(err), "nothing under $HOME/.m2")
}

// TestPrintPathOfABrokerWithoutArchiveIsRefused: --print-path of a broker
// pslab keeps no distribution archive of (nats is embedded) is bad input
// that names the flag (before: "nats cannot be installed"), with nothing
// on stdout, where a script reads the path.
func TestPrintPathOfABrokerWithoutArchiveIsRefused(t *testing.T) {
	install, _, err := rootCmd.Find([]string{"broker", "install"})
	require.NoError(t, err)
	defer func() { _ = install.Flags().Set("print-path", "false") }()
	var out strings.Builder
	rootCmd.SetOut(&out)
	defer rootCmd.SetOut(nil)
	rootCmd.SetArgs([]string{"broker", "install", "nats", "--print-path"})
	err = rootCmd.Execute()
	require.Error(t, err)
	assert.Equal(t, exitBadInput, exitCodeOf(err))
	assert.Contains(t, err.Error(), "nats --print-path: pslab keeps no distribution archive")
	assert.Empty(t, out.String())
}
