package nats

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"pslab/internal/broker"
	"pslab/internal/driver"
)

func TestMain(m *testing.M) { broker.RunTests(m) }

var _ broker.Restartable = (*Server)(nil)

// jsConnect connects to the NATS broker at ep.
func jsConnect(t *testing.T, ep driver.Endpoint) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(ep.URL, nats.UserInfo(ep.User, ep.Password))
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// A killed NATS comes back on the same address with the same password and
// its JetStream file store: streams and their messages survive.
func TestNATSKillRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test (a nats-server child) skipped in -short mode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n := NewServer(ServerConfig{StoreDir: t.TempDir()})
	if err := n.Restart(ctx); err == nil {
		t.Fatal("Restart before Start succeeded")
	}
	ep, err := n.Start(ctx, broker.LoopbackHost{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Stop(context.Background()) })
	nc, js := jsConnect(t, ep)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "KR", Subjects: []string{"kr.>"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := js.Publish(ctx, "kr.x", []byte("m")); err != nil {
			t.Fatal(err)
		}
	}
	nc.Close()
	store := n.Settings()["jetstream_store"]

	pid := n.PID()
	if err := n.Restart(ctx); err == nil {
		t.Error("Restart of a running broker succeeded")
	}
	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
	if n.PID() != 0 {
		t.Errorf("PID() = %d after Kill", n.PID())
	}
	if syscall.Kill(pid, 0) == nil {
		t.Errorf("process %d still exists after Kill", pid)
	}
	if err := n.Kill(); err == nil {
		t.Error("second Kill succeeded")
	}
	if err := n.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if p := n.PID(); p == 0 || p == pid {
		t.Errorf("PID() = %d after Restart, was %d", p, pid)
	}
	nc, js = jsConnect(t, ep) // the old endpoint: same address and password
	defer nc.Close()
	s, err := js.Stream(ctx, "KR")
	if err != nil {
		t.Fatalf("stream after restart: %v", err)
	}
	if got := s.CachedInfo().State.Msgs; got != 3 {
		t.Errorf("%d messages in the stream after restart, want 3", got)
	}
	if err := n.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(store); !os.IsNotExist(err) {
		t.Errorf("store %s after Stop: %v", store, err)
	}
	if err := n.Restart(ctx); err == nil {
		t.Error("Restart after Stop succeeded")
	}
}
