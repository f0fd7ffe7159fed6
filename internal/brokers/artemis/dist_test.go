package artemis

import (
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestArtemisTarballIsWhereMavenPutsIt: with HOME an empty directory other
// than the passwd home, pslab looks for the distribution where Maven puts
// it (Java's user.home is the passwd entry's home). Before, it looked in
// $HOME/.m2: after the main job had installed Artemis, a fresh clone's
// docker/build-local.sh found no tarball there and .ci/run failed.
func TestArtemisTarballIsWhereMavenPutsIt(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("MAVEN_OPTS", "")
	t.Setenv("MAVEN_ARGS", "")
	u, err := user.LookupId(strconv.Itoa(os.Getuid()))
	if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(u.HomeDir, ".m2", "settings.xml")); err == nil && strings.Contains(string(data), "<localRepository>") {
		t.Skip("the user's Maven settings name a local repository")
	}
	a := NewArtemis(ArtemisConfig{CacheDir: t.TempDir()})
	want := filepath.Join(u.HomeDir, ".m2", "repository", "org", "apache", "activemq", "apache-artemis", DefaultArtemisVersion,
		"apache-artemis-"+DefaultArtemisVersion+"-bin.tar.gz")
	if got := a.localRepoTarball(); got != want {
		t.Fatalf("tarball looked for at %s, Maven puts it at %s", got, want)
	}
}
