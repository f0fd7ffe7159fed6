package artemis

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"pslab/internal/broker"
)

// Installed reports whether the distribution is unpacked and the instance
// is complete (its credentials file is the last thing an install writes,
// and the instance directory only appears, by rename, once it is done).
func (a *Artemis) Installed() bool {
	if _, err := os.Stat(filepath.Join(a.HomeDir(), "bin", "artemis")); err != nil {
		return false
	}
	_, err := os.Stat(a.CredentialsFile())
	return err == nil
}

// Install fetches the distribution with Maven (the local Maven repository
// is the download cache), unpacks it, and creates the broker instance with
// a generated password. Each step works in a temporary directory that is
// renamed into place at the end, so an interrupted install never looks
// complete. Progress lines go to progress (nil: discarded). Installing what
// is already there does nothing.
func (a *Artemis) Install(ctx context.Context, progress io.Writer) error {
	if progress == nil {
		progress = io.Discard
	}
	if err := os.MkdirAll(filepath.Join(a.root(), "instances"), 0o755); err != nil {
		return fmt.Errorf("artemis install: %w", err)
	}
	if _, err := os.Stat(filepath.Join(a.HomeDir(), "bin", "artemis")); err != nil {
		if err := a.installHome(ctx, progress); err != nil {
			return err
		}
	}
	if _, err := os.Stat(a.CredentialsFile()); err != nil {
		if err := a.createInstance(ctx, progress); err != nil {
			return err
		}
	}
	fmt.Fprintf(progress, "artemis %s: instance %s (credentials in %s)\n", a.cfg.Version, a.InstanceDir(), a.CredentialsFile())
	return nil
}

// artifact is the Maven coordinate of the binary distribution.
func (a *Artemis) artifact() string {
	return "org.apache.activemq:apache-artemis:" + a.cfg.Version + ":tar.gz:bin"
}

func (a *Artemis) tarballName() string { return "apache-artemis-" + a.cfg.Version + "-bin.tar.gz" }

// localRepoTarball is where Maven keeps the tarball in the default local
// repository.
func (a *Artemis) localRepoTarball() string {
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".m2", "repository", "org", "apache", "activemq", "apache-artemis",
		a.cfg.Version, a.tarballName())
}

func (a *Artemis) installHome(ctx context.Context, progress io.Writer) error {
	tmp, err := os.MkdirTemp(a.root(), ".unpack-")
	if err != nil {
		return fmt.Errorf("artemis install: %w", err)
	}
	defer os.RemoveAll(tmp)
	tarball, err := a.fetch(ctx, progress, tmp)
	if err != nil {
		return err
	}
	fmt.Fprintf(progress, "artemis %s: unpacking %s\n", a.cfg.Version, tarball)
	out := filepath.Join(tmp, "out")
	if err := untarGz(tarball, out); err != nil {
		return fmt.Errorf("artemis install: unpack %s: %v (delete it and run the install again to fetch it anew)", tarball, err)
	}
	top := filepath.Join(out, "apache-artemis-"+a.cfg.Version)
	if _, err := os.Stat(filepath.Join(top, "bin", "artemis")); err != nil {
		return fmt.Errorf("artemis install: %s has no apache-artemis-%s/bin/artemis", tarball, a.cfg.Version)
	}
	if err := os.Rename(top, a.HomeDir()); err != nil {
		if _, e := os.Stat(filepath.Join(a.HomeDir(), "bin", "artemis")); e == nil {
			return nil // a concurrent install finished first
		}
		return fmt.Errorf("artemis install: %w", err)
	}
	return nil
}

// fetch returns the path of the distribution tarball: from the local Maven
// repository if it is there (checked against its .sha1), else fetched with
// `mvn dependency:copy` into dir (which also fills the local repository).
func (a *Artemis) fetch(ctx context.Context, progress io.Writer, dir string) (string, error) {
	local := a.localRepoTarball()
	if _, err := os.Stat(local); err == nil {
		if err := checkSHA1(local); err != nil {
			return "", fmt.Errorf("artemis install: %v: delete %s and run the install again", err, filepath.Dir(local))
		}
		return local, nil
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return "", fmt.Errorf("artemis install: Maven (mvn) is not on PATH: install it (apt-get install maven) or put %s at %s",
			a.tarballName(), local)
	}
	fmt.Fprintf(progress, "artemis %s: fetching %s with Maven\n", a.cfg.Version, a.artifact())
	cmd := exec.CommandContext(ctx, mvn, "-B", "-q", "dependency:copy",
		"-Dartifact="+a.artifact(), "-DoutputDirectory="+dir)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("artemis install: Maven could not fetch %s (%v: %s): check that Maven Central is reachable "+
			"(proxy settings in ~/.m2/settings.xml) and that version %s exists", a.artifact(), err, lastErrorLine(out), a.cfg.Version)
	}
	p := filepath.Join(dir, a.tarballName())
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("artemis install: Maven reported success but %s is missing", p)
	}
	return p, nil
}

// lastErrorLine picks the most telling line of Maven's output: the first
// [ERROR] line with text, without the "Failed to execute goal ..." preamble.
func lastErrorLine(out []byte) string {
	text := strings.ReplaceAll(string(out), "\x1b[0m", "")
	var last string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		last = l
		msg, ok := strings.CutPrefix(l, "[ERROR]")
		if msg = strings.TrimSpace(msg); !ok || msg == "" {
			continue
		}
		if _, after, ok := strings.Cut(msg, "standalone-pom: "); ok {
			msg = after
		}
		return msg
	}
	if last == "" {
		return "no output"
	}
	return last
}

// checkSHA1 compares a file with the .sha1 Maven stored beside it, if any.
func checkSHA1(path string) error {
	want, err := os.ReadFile(path + ".sha1")
	if err != nil {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha1.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	got := hex.EncodeToString(h.Sum(nil))
	if w := strings.Fields(string(want)); len(w) == 0 || w[0] != got {
		return fmt.Errorf("%s does not match its .sha1", path)
	}
	return nil
}

// untarGz unpacks regular files and directories of a .tar.gz into dir,
// refusing paths that leave dir.
func untarGz(path, dir string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Clean(h.Name)
		if filepath.IsAbs(name) || name == ".." || strings.HasPrefix(name, ".."+string(filepath.Separator)) {
			return fmt.Errorf("unsafe path %q in archive", h.Name)
		}
		target := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			if err := writeFile(target, tr, os.FileMode(h.Mode)&0o777); err != nil {
				return err
			}
		default:
			return fmt.Errorf("unexpected entry type %q for %s in archive", h.Typeflag, h.Name)
		}
	}
}

func writeFile(path string, r io.Reader, mode os.FileMode) error {
	w, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// createInstance runs `artemis create` in a temporary directory, rewrites
// its acceptors, stores the credentials, points the scripts at the final
// path and renames it into place.
func (a *Artemis) createInstance(ctx context.Context, progress io.Writer) error {
	if _, err := exec.LookPath("java"); err != nil && os.Getenv("JAVA_HOME") == "" {
		return errors.New("artemis install: java is not on PATH and JAVA_HOME is unset: install a JDK or JRE 17+ (apt-get install openjdk-17-jre-headless)")
	}
	tmp, err := os.MkdirTemp(filepath.Join(a.root(), "instances"), ".create-")
	if err != nil {
		return fmt.Errorf("artemis install: %w", err)
	}
	defer os.RemoveAll(tmp)
	inst := filepath.Join(tmp, "instance")
	pass := broker.RandomSecret()
	fmt.Fprintf(progress, "artemis %s: creating instance %s\n", a.cfg.Version, a.InstanceDir())
	cmd := exec.CommandContext(ctx, filepath.Join(a.HomeDir(), "bin", "artemis"), "create",
		"--silent", "--require-login", "--user", artemisUser, "--password", pass,
		"--no-web", "--name", "pslab", "--host", "127.0.0.1",
		"--java-memory", fmt.Sprintf("%dM", a.cfg.HeapMB),
		"--no-amqp-acceptor", "--no-mqtt-acceptor", "--no-hornetq-acceptor",
		inst)
	cmd.Env = cleanEnv(os.Environ())
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("artemis install: artemis create failed (%v): %s", err, lastErrorLine(out))
	}
	if err := a.writeAcceptors(filepath.Join(inst, "etc", "broker.xml")); err != nil {
		return fmt.Errorf("artemis install: %w", err)
	}
	creds := "user=" + artemisUser + "\npassword=" + pass + "\n"
	if err := os.WriteFile(filepath.Join(inst, "pslab-credentials"), []byte(creds), 0o600); err != nil {
		return fmt.Errorf("artemis install: %w", err)
	}
	if err := relocate(inst, a.InstanceDir()); err != nil {
		return fmt.Errorf("artemis install: %w", err)
	}
	if _, err := os.Stat(a.InstanceDir()); err == nil {
		if _, err := os.Stat(a.CredentialsFile()); err == nil {
			return nil // a concurrent install finished first
		}
		if err := os.RemoveAll(a.InstanceDir()); err != nil { // an incomplete leftover
			return fmt.Errorf("artemis install: %w", err)
		}
	}
	if err := os.Rename(inst, a.InstanceDir()); err != nil {
		if _, e := os.Stat(a.CredentialsFile()); e == nil {
			return nil
		}
		return fmt.Errorf("artemis install: %w", err)
	}
	return nil
}

// instanceFilesWithPath are the files `artemis create` writes its own
// absolute path into.
var instanceFilesWithPath = []string{
	"bin/artemis", "etc/artemis.profile", "etc/artemis-utility.profile", "etc/bootstrap.xml",
}

// relocate rewrites the instance's absolute path from its temporary place
// (from) to where it will be renamed (to), and checks nothing still points
// at the temporary place.
func relocate(from, to string) error {
	for _, rel := range instanceFilesWithPath {
		p := filepath.Join(from, rel)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !strings.Contains(string(b), from) {
			return fmt.Errorf("%s does not name the instance path %s: cannot relocate it", rel, from)
		}
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(b), from, to)), st.Mode()); err != nil {
			return err
		}
	}
	for _, sub := range []string{"bin", "etc"} {
		entries, err := os.ReadDir(filepath.Join(from, sub))
		if err != nil {
			return err
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(from, sub, e.Name()))
			if err == nil && strings.Contains(string(b), from) {
				return fmt.Errorf("%s/%s still names the temporary path %s", sub, e.Name(), from)
			}
		}
	}
	return nil
}

// HomeInstalled reports whether the distribution is unpacked (an instance
// may still have to be created).
func (a *Artemis) HomeInstalled() bool {
	_, err := os.Stat(filepath.Join(a.HomeDir(), "bin", "artemis"))
	return err == nil
}
