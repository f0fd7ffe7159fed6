package artemis_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"pslab/internal/broker"
	"pslab/internal/brokers/artemis"
	"pslab/internal/testbroker"
)

func TestMain(m *testing.M) { broker.RunTests(m) }

var _ broker.Restartable = (*artemis.Artemis)(nil)

// A killed Artemis leaves no java process; Restart runs the same instance
// with the same endpoint.
func TestArtemisKillRestart(t *testing.T) {
	a := testbroker.Artemis(t, artemis.ArtemisConfig{Instance: "test-broker"})
	ctx := context.Background()
	if err := a.Restart(ctx); err == nil {
		t.Fatal("Restart before Start succeeded")
	}
	ep, err := a.Start(ctx, broker.LoopbackHost{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Stop(context.Background()) })
	pid := a.PID()
	if err := a.Kill(); err != nil {
		t.Fatal(err)
	}
	if a.PID() != 0 {
		t.Errorf("PID() = %d after Kill", a.PID())
	}
	if left := a.Processes(); len(left) > 0 {
		t.Errorf("java processes of the instance left after Kill: %v", left)
	}
	if err := a.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if p := a.PID(); p == 0 || p == pid {
		t.Errorf("PID() = %d after Restart, was %d", p, pid)
	}
	if _, err := artemis.CheckSTOMP(ctx, ep); err != nil {
		t.Errorf("login with the first endpoint after Restart: %v", err)
	}
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestArtemisStartStop(t *testing.T) {
	a := testbroker.Artemis(t, artemis.ArtemisConfig{Instance: "test-broker"})
	ctx := context.Background()
	ep, err := a.Start(ctx, broker.LoopbackHost{})
	if err != nil {
		t.Fatal(err)
	}
	pid := a.PID()
	if pid <= 0 {
		t.Fatalf("PID %d while running", pid)
	}
	port, core := a.Config().Port, a.Config().CorePort
	if ep.URL != fmt.Sprintf("stomp://127.0.0.1:%d", port) || ep.User != "pslab" || len(ep.Password) < 20 {
		t.Fatalf("endpoint %+v", ep)
	}
	if _, err := a.Start(ctx, broker.LoopbackHost{}); err == nil {
		t.Fatal("second Start of a running broker succeeded")
	}
	if v := a.Version(); v != "2.44.0" {
		t.Errorf("Version() = %q, want the broker's own 2.44.0", v)
	}
	s := a.Settings()
	for k, want := range map[string]string{
		"socket_buffer_bytes": "1048576",
		"heap_mb":             "256",
		"stomp_acceptor":      fmt.Sprintf("tcp://127.0.0.1:%d?protocols=STOMP;tcpSendBufferSize=1048576;tcpReceiveBufferSize=1048576", port),
		"core_acceptor":       fmt.Sprintf("tcp://127.0.0.1:%d?protocols=CORE;tcpSendBufferSize=1048576;tcpReceiveBufferSize=1048576", core),
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
	for _, arg := range []string{"-Xmx256m", "-Dpslab.socket.buffer=1048576", fmt.Sprintf("-Dpslab.stomp.port=%d", port)} {
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
	if left := a.Processes(); len(left) > 0 {
		t.Errorf("java processes of the instance left after Stop: %v", left)
	}
	if err := a.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestArtemisWrongPassword(t *testing.T) {
	a := testbroker.Artemis(t, artemis.ArtemisConfig{Instance: "test-broker"})
	orig, err := os.ReadFile(a.CredentialsFile())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.WriteFile(a.CredentialsFile(), orig, 0o600) })
	if err := os.WriteFile(a.CredentialsFile(), []byte("user=pslab\npassword=not-the-password\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = a.Start(context.Background(), broker.LoopbackHost{})
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
	if a.PID() != 0 || len(a.Processes()) > 0 {
		t.Errorf("broker left running after a failed Start")
	}
}

func TestArtemisStartTimeout(t *testing.T) {
	a := testbroker.Artemis(t, artemis.ArtemisConfig{Instance: "test-broker", StartTimeout: 50 * time.Millisecond}) // the JVM needs seconds
	_, err := a.Start(context.Background(), broker.LoopbackHost{})
	if err == nil {
		a.Stop(context.Background())
		t.Fatal("Start within 50 ms succeeded")
	}
	t.Logf("as a user sees it: %v", err)
	if !strings.Contains(err.Error(), fmt.Sprintf("did not accept STOMP logins on 127.0.0.1:%d within 50ms", a.Config().Port)) {
		t.Errorf("error %q does not say what timed out", err)
	}
	if a.PID() != 0 || len(a.Processes()) > 0 {
		t.Errorf("broker left running after a timed-out Start")
	}
}
