package maven

import (
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLocalRepoIgnoresHOME: with HOME an empty directory other than the
// passwd home (sudo -E, a CI job that sets HOME), the local repository is
// still the one Maven uses: under Java's user.home, the passwd entry's
// home, unless Maven's settings there say otherwise.
func TestLocalRepoIgnoresHOME(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("MAVEN_OPTS", "")
	t.Setenv("MAVEN_ARGS", "")
	u, err := user.LookupId(strconv.Itoa(os.Getuid()))
	require.NoError(t, err)
	home, err := UserHome()
	require.NoError(t, err)
	assert.Equal(t, u.HomeDir, home)
	r, err := LocalRepo()
	require.NoError(t, err)
	if r.Source == "default (${user.home}/.m2/repository)" {
		assert.Equal(t, filepath.Join(u.HomeDir, ".m2", "repository"), r.Dir)
	} else {
		assert.NotEqual(t, filepath.Join(os.Getenv("HOME"), ".m2", "repository"), r.Dir, "from %s", r.Source)
	}
}

func TestLocalRepoFromMavenOptions(t *testing.T) {
	t.Setenv("MAVEN_ARGS", "")
	t.Setenv("MAVEN_OPTS", "-Xmx1g -Dmaven.repo.local=/srv/m2 -Dfoo=bar")
	r, err := LocalRepo()
	require.NoError(t, err)
	assert.Equal(t, Repo{Dir: "/srv/m2", Source: "MAVEN_OPTS"}, r)
	t.Setenv("MAVEN_ARGS", "-B -Dmaven.repo.local=/srv/other")
	r, err = LocalRepo()
	require.NoError(t, err)
	assert.Equal(t, "/srv/other", r.Dir, "MAVEN_ARGS is the command line: it wins")
	assert.Equal(t, "-Dmaven.repo.local=/srv/other", r.Property())
}

func TestSettingsLocalRepository(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "settings.xml")
	t.Setenv("PSLAB_M2", "/data")
	require.NoError(t, os.WriteFile(f, []byte(`<?xml version="1.0"?>
<settings xmlns="http://maven.apache.org/SETTINGS/1.0.0">
  <!-- <localRepository>/commented/out</localRepository> -->
  <localRepository>${env.PSLAB_M2}/m2/${user.home}</localRepository>
</settings>`), 0o644))
	got, err := settingsRepo(f, "/home/u")
	require.NoError(t, err)
	assert.Equal(t, "/data/m2//home/u", got)
	got, err = settingsRepo(filepath.Join(dir, "none.xml"), "/home/u")
	require.NoError(t, err)
	assert.Empty(t, got)
	require.NoError(t, os.WriteFile(f, []byte(`<settings><localRepository>`), 0o644))
	_, err = settingsRepo(f, "/home/u")
	assert.Error(t, err, "a broken settings file is said, not ignored")
}

func TestArtifactPath(t *testing.T) {
	r := Repo{Dir: "/m2"}
	assert.Equal(t, "/m2/org/apache/activemq/apache-artemis/2.44.0/apache-artemis-2.44.0-bin.tar.gz",
		r.ArtifactPath("org.apache.activemq", "apache-artemis", "2.44.0", "bin", "tar.gz"))
}
