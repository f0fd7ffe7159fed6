package artemis

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pslab/internal/broker"
)

func TestArtemisNotInstalled(t *testing.T) {
	a := NewArtemis(ArtemisConfig{CacheDir: t.TempDir()})
	if a.Installed() {
		t.Fatal("empty cache reported as installed")
	}
	_, err := a.Start(context.Background(), broker.LoopbackHost{})
	if err == nil || !strings.Contains(err.Error(), "pslab broker install artemis") {
		t.Fatalf("Start without install: %v", err)
	}
}

func TestArtemisInstallWithoutMaven(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // no local Maven repository
	t.Setenv("PATH", t.TempDir()) // no mvn
	a := NewArtemis(ArtemisConfig{CacheDir: t.TempDir()})
	err := a.Install(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "Maven (mvn) is not on PATH") {
		t.Fatalf("Install without mvn: %v", err)
	}
	t.Logf("as a user sees it: %v", err)
	if a.Installed() {
		t.Fatal("failed install reported as installed")
	}
}

// A corrupt tarball in the local Maven repository fails the unpack step and
// leaves nothing that looks installed.
func TestArtemisInstallCorruptTarball(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	a := NewArtemis(ArtemisConfig{CacheDir: t.TempDir(), Version: "9.9.9"})
	p := a.localRepoTarball()
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte("this is not gzip"), 0o644)
	err := a.Install(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "unpack") {
		t.Fatalf("Install from a corrupt tarball: %v", err)
	}
	if a.Installed() {
		t.Fatal("failed install reported as installed")
	}
	if _, err := os.Stat(a.HomeDir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("distribution directory exists after a failed unpack: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(a.root(), ".unpack-*"))
	if len(left) > 0 {
		t.Fatalf("temporary directories left: %v", left)
	}
}

func TestArtemisInstallBadVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Maven")
	}
	if _, err := os.Stat(filepath.Join(os.Getenv("HOME"), ".m2")); err != nil {
		t.Skip("no local Maven repository here")
	}
	a := NewArtemis(ArtemisConfig{CacheDir: t.TempDir(), Version: "0.0.0-does-not-exist"})
	if _, err := os.Stat(a.localRepoTarball()); err == nil {
		t.Skip("a tarball for the fake version exists")
	}
	// Maven records the failed lookup in the local repository; remove the
	// fake version's directory again.
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(a.localRepoTarball())) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := a.Install(ctx, nil)
	if err == nil {
		t.Fatal("Install of a nonexistent version succeeded")
	}
	t.Logf("as a user sees it: %v", err)
	if !strings.Contains(err.Error(), "Maven could not fetch org.apache.activemq:apache-artemis:0.0.0-does-not-exist:tar.gz:bin") ||
		!strings.Contains(err.Error(), "Could not find artifact") {
		t.Errorf("error does not name the artifact: %v", err)
	}
	if a.Installed() {
		t.Fatal("failed install reported as installed")
	}
}

func TestUntarRefusesEscapingPaths(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: "../evil", Mode: 0o644, Size: 1, Typeflag: tar.TypeReg})
	tw.Write([]byte("x"))
	tw.Close()
	zw.Close()
	p := filepath.Join(t.TempDir(), "x.tar.gz")
	os.WriteFile(p, buf.Bytes(), 0o644)
	out := t.TempDir()
	if err := untarGz(p, filepath.Join(out, "in")); err == nil || !strings.Contains(err.Error(), "unsafe path") {
		t.Fatalf("untar of ../evil: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "evil")); err == nil {
		t.Fatal("file written outside the target directory")
	}
}

func TestWriteAcceptors(t *testing.T) {
	a := NewArtemis(ArtemisConfig{SocketBufferBytes: 65536, Port: 1234, CorePort: 5678})
	p := filepath.Join(t.TempDir(), "broker.xml")
	os.WriteFile(p, []byte("<core>\n<acceptors>\n<acceptor name=\"x\">tcp://0.0.0.0:61616</acceptor>\n</acceptors>\n</core>\n"), 0o644)
	if err := a.writeAcceptors(p); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	s := string(b)
	for _, want := range []string{
		`tcp://${pslab.host:127.0.0.1}:${pslab.stomp.port:1234}?protocols=STOMP;tcpSendBufferSize=${pslab.socket.buffer:65536};tcpReceiveBufferSize=${pslab.socket.buffer:65536}`,
		`tcp://${pslab.host:127.0.0.1}:${pslab.core.port:5678}?protocols=CORE;`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("broker.xml lacks %s:\n%s", want, s)
		}
	}
	if strings.Contains(s, "0.0.0.0:61616") || strings.Count(s, "<acceptors>") != 1 {
		t.Errorf("old acceptors not replaced:\n%s", s)
	}
	os.WriteFile(p, []byte("<core/>"), 0o644)
	if err := a.writeAcceptors(p); err == nil {
		t.Error("broker.xml without <acceptors> accepted")
	}
}

func TestRelocate(t *testing.T) {
	from := filepath.Join(t.TempDir(), "tmp-inst")
	to := "/final/instance"
	for _, rel := range instanceFilesWithPath {
		os.MkdirAll(filepath.Join(from, filepath.Dir(rel)), 0o755)
		os.WriteFile(filepath.Join(from, rel), []byte("X='"+from+"'\n"), 0o755)
	}
	if err := relocate(from, to); err != nil {
		t.Fatal(err)
	}
	for _, rel := range instanceFilesWithPath {
		b, _ := os.ReadFile(filepath.Join(from, rel))
		if string(b) != "X='"+to+"'\n" {
			t.Errorf("%s = %q", rel, b)
		}
	}
	st, _ := os.Stat(filepath.Join(from, "bin", "artemis"))
	if st.Mode().Perm() != 0o755 {
		t.Errorf("bin/artemis lost its mode: %v", st.Mode())
	}
	// A file that still names the temporary path is an error.
	os.WriteFile(filepath.Join(from, "etc", "other.xml"), []byte(from), 0o644)
	for _, rel := range instanceFilesWithPath {
		os.WriteFile(filepath.Join(from, rel), []byte(from), 0o644)
	}
	if err := relocate(from, to); err == nil {
		t.Error("relocate left etc/other.xml naming the temporary path without error")
	}
}

func TestArtemisHelpers(t *testing.T) {
	if v := versionFromServer("ActiveMQ-Artemis/2.44.0 ActiveMQ Artemis Messaging Engine", "x"); v != "2.44.0" {
		t.Errorf("versionFromServer = %q", v)
	}
	if v := versionFromServer("", "2.44.0"); v != "2.44.0" {
		t.Errorf("versionFromServer fallback = %q", v)
	}
	env := cleanEnv([]string{"PATH=/bin", "JAVA_ARGS=-Xmx9g", "ARTEMIS_INSTANCE=/x", "HOME=/root", "JAVA_ARGS_APPEND=y"})
	if strings.Join(env, " ") != "PATH=/bin HOME=/root" {
		t.Errorf("cleanEnv = %v", env)
	}
	p := filepath.Join(t.TempDir(), "log")
	os.WriteFile(p, []byte("a\n\nb\nc\nd\n"), 0o644)
	if s := broker.TailFile(p, 2); s != "c | d" {
		t.Errorf("tailFile = %q", s)
	}
	mvnOut := "\x1b[0m[ERROR] Failed to execute goal x:copy (default-cli) on project standalone-pom: Unable to find artifact.\n[ERROR] \n[ERROR] [Help 1] http://x\n"
	if s := lastErrorLine([]byte(mvnOut)); s != "Unable to find artifact." {
		t.Errorf("lastErrorLine = %q", s)
	}
	if s := lastErrorLine([]byte("java: not found\n")); s != "java: not found" {
		t.Errorf("lastErrorLine without [ERROR] = %q", s)
	}
	pw := broker.RandomSecret()
	if len(pw) != 32 || strings.ContainsAny(pw, ":\n\\ ") {
		t.Errorf("RandomSecret = %q", pw)
	}
	pw2 := broker.RandomSecret()
	if pw == pw2 {
		t.Error("two generated passwords are equal")
	}
	a := NewArtemis(ArtemisConfig{CacheDir: t.TempDir(), Instance: "x"})
	os.MkdirAll(a.InstanceDir(), 0o755)
	os.WriteFile(a.CredentialsFile(), []byte("user=u\npassword=p=q\n"), 0o600)
	if u, pw, err := a.Credentials(); u != "u" || pw != "p=q" || err != nil {
		t.Errorf("Credentials = %q %q %v", u, pw, err)
	}
}
