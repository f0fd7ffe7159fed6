package broker

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"pslab/internal/maven"
)

// testArtemis returns an Artemis with its own instance ("test-broker") and
// ports, installed from the distribution already on this machine (unpacked
// in the cache, or its tarball in the local Maven repository). Without one
// the test is skipped: CI runs `pslab broker install artemis` first (scripts/test.sh).
func testArtemis(t *testing.T) *Artemis {
	t.Helper()
	if testing.Short() {
		t.Skip("artemis integration test skipped in -short mode")
	}
	a := NewArtemis(ArtemisConfig{Instance: "test-broker", Port: 61713, CorePort: 61716, HeapMB: 256})
	if !a.Installed() {
		_, errHome := os.Stat(filepath.Join(a.HomeDir(), "bin", "artemis"))
		_, errTar := os.Stat(a.localRepoTarball())
		if errHome != nil && errTar != nil {
			t.Skipf("Artemis %s is not installed (no %s, no %s): run `go run ./cmd/pslab broker install artemis`",
				a.cfg.Version, a.HomeDir(), a.localRepoTarball())
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := a.Install(ctx, testWriter{t}); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// javaOf lists PIDs of processes whose command line runs this instance.
func javaOf(instance string) []int {
	var pids []int
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		var pid int
		if _, err := fmt.Sscanf(d.Name(), "%d", &pid); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), "-Dartemis.instance="+instance+"\x00") {
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestArtemisStartStop(t *testing.T) {
	a := testArtemis(t)
	ctx := context.Background()
	ep, err := a.Start(ctx, LoopbackHost{})
	if err != nil {
		t.Fatal(err)
	}
	pid := a.PID()
	if pid <= 0 {
		t.Fatalf("PID %d while running", pid)
	}
	if ep.URL != "stomp://127.0.0.1:61713" || ep.User != "pslab" || len(ep.Password) < 20 {
		t.Fatalf("endpoint %+v", ep)
	}
	if _, err := a.Start(ctx, LoopbackHost{}); err == nil {
		t.Fatal("second Start of a running broker succeeded")
	}
	if v := a.Version(); v != "2.44.0" {
		t.Errorf("Version() = %q, want the broker's own 2.44.0", v)
	}
	s := a.Settings()
	for k, want := range map[string]string{
		"socket_buffer_bytes": "1048576",
		"heap_mb":             "256",
		"stomp_acceptor":      "tcp://127.0.0.1:61713?protocols=STOMP;tcpSendBufferSize=1048576;tcpReceiveBufferSize=1048576",
		"core_acceptor":       "tcp://127.0.0.1:61716?protocols=CORE;tcpSendBufferSize=1048576;tcpReceiveBufferSize=1048576",
		"persistence_enabled": "true",
	} {
		if s[k] != want {
			t.Errorf("Settings()[%q] = %q, want %q", k, s[k], want)
		}
	}
	if s["journal_type"] == "" {
		t.Errorf("Settings() lacks journal_type: %v", s)
	}
	// The heap and acceptor settings reached the JVM.
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	for _, arg := range []string{"-Xmx256m", "-Dpslab.socket.buffer=1048576", "-Dpslab.stomp.port=61713"} {
		if !bytes.Contains(cmdline, []byte(arg+"\x00")) {
			t.Errorf("broker command line lacks %s", arg)
		}
	}
	// The credentials file is private.
	if st, err := os.Stat(a.CredentialsFile()); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("credentials file mode: %v %v", st.Mode(), err)
	}
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if a.PID() != 0 {
		t.Errorf("PID() = %d after Stop", a.PID())
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("broker PID %d still exists after Stop", pid)
	}
	if left := javaOf(a.InstanceDir()); len(left) > 0 {
		t.Errorf("java processes of the instance left after Stop: %v", left)
	}
	if err := a.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestArtemisWrongPassword(t *testing.T) {
	a := testArtemis(t)
	orig, err := os.ReadFile(a.CredentialsFile())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.WriteFile(a.CredentialsFile(), orig, 0o600) })
	if err := os.WriteFile(a.CredentialsFile(), []byte("user=pslab\npassword=not-the-password\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = a.Start(context.Background(), LoopbackHost{})
	if err == nil {
		a.Stop(context.Background())
		t.Fatal("Start with a wrong password succeeded")
	}
	t.Logf("as a user sees it: %v", err)
	for _, want := range []string{"refused user \"pslab\"", a.CredentialsFile(), "pslab broker install artemis"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if a.PID() != 0 || len(javaOf(a.InstanceDir())) > 0 {
		t.Errorf("broker left running after a failed Start")
	}
}

func TestArtemisStartTimeout(t *testing.T) {
	a := testArtemis(t)
	a.cfg.StartTimeout = 50 * time.Millisecond // the JVM needs seconds
	_, err := a.Start(context.Background(), LoopbackHost{})
	if err == nil {
		a.Stop(context.Background())
		t.Fatal("Start within 50 ms succeeded")
	}
	t.Logf("as a user sees it: %v", err)
	if !strings.Contains(err.Error(), "did not accept STOMP logins on 127.0.0.1:61713 within 50ms") {
		t.Errorf("error %q does not say what timed out", err)
	}
	if a.PID() != 0 || len(javaOf(a.InstanceDir())) > 0 {
		t.Errorf("broker left running after a timed-out Start")
	}
}

func TestArtemisNotInstalled(t *testing.T) {
	a := NewArtemis(ArtemisConfig{CacheDir: t.TempDir()})
	if a.Installed() {
		t.Fatal("empty cache reported as installed")
	}
	_, err := a.Start(context.Background(), LoopbackHost{})
	if err == nil || !strings.Contains(err.Error(), "pslab broker install artemis") {
		t.Fatalf("Start without install: %v", err)
	}
}

func TestArtemisInstallWithoutMaven(t *testing.T) {
	t.Setenv("MAVEN_ARGS", "")
	t.Setenv("MAVEN_OPTS", "-Dmaven.repo.local="+t.TempDir()) // an empty local Maven repository
	t.Setenv("PATH", t.TempDir())                             // no mvn
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
	t.Setenv("MAVEN_ARGS", "")
	t.Setenv("MAVEN_OPTS", "-Dmaven.repo.local="+t.TempDir()) // a local Maven repository of the test's
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
	if repo, err := maven.LocalRepo(); err != nil {
		t.Skipf("no local Maven repository here: %v", err)
	} else if _, err := os.Stat(repo.Dir); err != nil {
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
	if s := tailFile(p, 2); s != "c | d" {
		t.Errorf("tailFile = %q", s)
	}
	mvnOut := "\x1b[0m[ERROR] Failed to execute goal x:copy (default-cli) on project standalone-pom: Unable to find artifact.\n[ERROR] \n[ERROR] [Help 1] http://x\n"
	if s := lastErrorLine([]byte(mvnOut)); s != "Unable to find artifact." {
		t.Errorf("lastErrorLine = %q", s)
	}
	if s := lastErrorLine([]byte("java: not found\n")); s != "java: not found" {
		t.Errorf("lastErrorLine without [ERROR] = %q", s)
	}
	pw := RandomSecret()
	if len(pw) != 32 || strings.ContainsAny(pw, ":\n\\ ") {
		t.Errorf("RandomSecret = %q", pw)
	}
	pw2 := RandomSecret()
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
