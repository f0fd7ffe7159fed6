// Package maven finds Maven's local repository the way Maven itself finds
// it, so that pslab knows where an artifact Maven fetched is, and passes
// it to every mvn call it makes (-Dmaven.repo.local) so that Maven and
// pslab agree by construction.
//
// Maven (3.x) takes, in this order:
//
//  1. -Dmaven.repo.local=DIR in MAVEN_ARGS (the command line Maven 3.9
//     adds) or MAVEN_OPTS (the JVM's system properties);
//  2. <localRepository> of the user settings, ${user.home}/.m2/settings.xml;
//  3. <localRepository> of the global settings, ${maven.home}/conf/
//     settings.xml (maven.home: where the mvn on PATH lives, symbolic
//     links followed; Debian's /usr/share/maven/conf is /etc/maven);
//  4. ${user.home}/.m2/repository.
//
// Java's user.home is the home directory of the user's passwd entry, not
// $HOME: under `sudo -E`, or in a CI job that sets HOME, the two differ,
// and a look at $HOME/.m2 finds nothing Maven fetched. In settings,
// ${user.home} and ${env.NAME} are expanded; a relative path is taken
// from the working directory. Not followed: a settings file given with
// mvn -s/-gs (pslab gives none), profiles, and .mvn/maven.config of a
// project (pslab runs mvn outside any project).
package maven

import (
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
)

// Repo is a local repository and how it was found.
type Repo struct {
	Dir    string
	Source string // e.g. "MAVEN_OPTS", "/root/.m2/settings.xml", "default"
}

// UserHome is Java's user.home: the home directory of the passwd entry of
// this process's (real) user.
func UserHome() (string, error) {
	u, err := user.LookupId(strconv.Itoa(os.Getuid()))
	if err != nil {
		return "", fmt.Errorf("maven: the passwd entry of uid %d (Java's user.home): %w", os.Getuid(), err)
	}
	if u.HomeDir == "" {
		return "", fmt.Errorf("maven: the passwd entry of uid %d has no home directory", os.Getuid())
	}
	return u.HomeDir, nil
}

// LocalRepo is Maven's local repository on this machine, for this user.
func LocalRepo() (Repo, error) {
	for _, v := range []string{"MAVEN_ARGS", "MAVEN_OPTS"} {
		if dir, ok := repoLocalProperty(os.Getenv(v)); ok {
			return Repo{Dir: absolute(dir), Source: v}, nil
		}
	}
	home, err := UserHome()
	if err != nil {
		return Repo{}, err
	}
	settings := []string{filepath.Join(home, ".m2", "settings.xml")}
	if mh := mavenHome(); mh != "" {
		settings = append(settings, filepath.Join(mh, "conf", "settings.xml"))
	}
	for _, f := range settings {
		dir, err := settingsRepo(f, home)
		if err != nil {
			return Repo{}, err
		}
		if dir != "" {
			return Repo{Dir: absolute(dir), Source: f}, nil
		}
	}
	return Repo{Dir: filepath.Join(home, ".m2", "repository"), Source: "default (" + filepath.Join("${user.home}", ".m2", "repository") + ")"}, nil
}

// Property is the system property that names the local repository, for
// the command line of mvn: -Dmaven.repo.local=DIR.
func (r Repo) Property() string { return "-Dmaven.repo.local=" + r.Dir }

// ArtifactPath is where the repository keeps groupId:artifactId:version's
// file artifactId-version[-classifier].ext.
func (r Repo) ArtifactPath(group, artifact, version, classifier, ext string) string {
	name := artifact + "-" + version
	if classifier != "" {
		name += "-" + classifier
	}
	parts := append([]string{r.Dir}, strings.Split(group, ".")...)
	return filepath.Join(append(parts, artifact, version, name+"."+ext)...)
}

// repoLocalProperty finds -Dmaven.repo.local=DIR among options (the last
// one wins, as on a command line).
func repoLocalProperty(opts string) (string, bool) {
	var dir string
	found := false
	for _, f := range strings.Fields(opts) {
		if v, ok := strings.CutPrefix(f, "-Dmaven.repo.local="); ok && v != "" {
			dir, found = strings.Trim(v, `"'`), true
		}
	}
	return dir, found
}

// settingsRepo reads <localRepository> of a settings file ("" when the
// file or the element is absent).
func settingsRepo(path, home string) (string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("maven: %w", err)
	}
	var s struct {
		LocalRepository string `xml:"localRepository"`
	}
	if err := xml.Unmarshal(data, &s); err != nil {
		return "", fmt.Errorf("maven: %s: %w", path, err)
	}
	return expand(strings.TrimSpace(s.LocalRepository), home), nil
}

// expand replaces ${user.home} and ${env.NAME} as Maven's settings do.
func expand(v, home string) string {
	v = strings.ReplaceAll(v, "${user.home}", home)
	for {
		i := strings.Index(v, "${env.")
		if i < 0 {
			return v
		}
		j := strings.Index(v[i:], "}")
		if j < 0 {
			return v
		}
		v = v[:i] + os.Getenv(v[i+len("${env."):i+j]) + v[i+j+1:]
	}
}

// mavenHome is the directory of the mvn on PATH (its bin/ parent, links
// followed), as the mvn script finds its own home; "" without mvn.
func mavenHome() string {
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return ""
	}
	real, err := filepath.EvalSymlinks(mvn)
	if err != nil {
		return ""
	}
	return filepath.Dir(filepath.Dir(real))
}

func absolute(dir string) string {
	if a, err := filepath.Abs(dir); err == nil {
		return a
	}
	return dir
}
