package artemis

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"pslab/internal/maven"
)

// The distribution tarball lives in Maven's local repository, found as
// Maven finds it (package maven: Java's user.home is the passwd entry's
// home, not $HOME), and pslab names that repository on the command line
// of every mvn call it makes (-Dmaven.repo.local), so Maven fetches into
// the very place pslab then looks.

// repoTarball is the tarball's place in repository repo.
func (a *Artemis) repoTarball(repo maven.Repo) string {
	return repo.ArtifactPath("org.apache.activemq", "apache-artemis", a.cfg.Version, "bin", "tar.gz")
}

// Tarball returns the path of the distribution tarball in Maven's local
// repository, fetching it with Maven first when it is not there (or does
// not match its .sha1). `pslab broker install artemis --print-path` prints
// it, for docker/build-local.sh.
func (a *Artemis) Tarball(ctx context.Context, progress io.Writer) (string, error) {
	if progress == nil {
		progress = io.Discard
	}
	repo, err := maven.LocalRepo()
	if err != nil {
		return "", err
	}
	local := a.repoTarball(repo)
	if _, err := os.Stat(local); err == nil && checkSHA1(local) == nil {
		return local, nil
	}
	if err := os.MkdirAll(a.root(), 0o755); err != nil {
		return "", fmt.Errorf("artemis: %w", err)
	}
	tmp, err := os.MkdirTemp(a.root(), ".fetch-")
	if err != nil {
		return "", fmt.Errorf("artemis: %w", err)
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(progress, "artemis %s: %s not in Maven's local repository %s (%s)\n", a.cfg.Version, filepath.Base(local), repo.Dir, repo.Source)
	if _, err := a.fetch(ctx, progress, tmp); err != nil {
		return "", err
	}
	if _, err := os.Stat(local); err != nil {
		return "", fmt.Errorf("artemis: Maven fetched %s but it is not at %s", a.artifact(), local)
	}
	return local, nil
}
