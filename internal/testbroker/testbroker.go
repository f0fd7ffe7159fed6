// Package testbroker starts the brokers and machines tests need, each in
// one place: an in-process nats-server with pslab's own settings
// (hermetic: no root, no child process, so tests with it run in the
// -short pass), an Artemis instance of the test's own on free ports when
// this machine has Artemis (skipped otherwise, and under -short), a
// stand-in for another host (RemoteHost, root), and RequireRoot.
package testbroker

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"pslab/internal/broker"
	"pslab/internal/brokers/artemis"
	"pslab/internal/brokers/nats"
	"pslab/internal/driver"
	"pslab/internal/labtls"
)

// RequireRoot skips t unless it runs as root (network namespaces, qdiscs,
// lock files in /run).
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (network namespaces, qdiscs, /run)")
	}
}

// SkipShort skips t in -short mode (the hermetic pass), saying what it
// needs.
func SkipShort(t testing.TB, needs string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("integration test (%s) skipped in -short mode", needs)
	}
}

// NATS starts a nats-server inside the test's process with the settings
// of pslab's embedded server (nats.Options): JetStream with its store in
// t.TempDir(), free ports on loopback for clients and for the monitoring
// endpoint, a generated password. It shuts down when the test ends.
func NATS(t testing.TB) driver.Endpoint {
	t.Helper()
	return startNATS(t, nil)
}

// NATSTLS is NATS(t) serving TLS too, as pslab's server does for a lab
// with tls: on cases: a CA and a server certificate for 127.0.0.1 made
// for the test (labtls, in t.TempDir()), plain connections allowed on the
// same port. The endpoint's TLS trusts that CA alone.
func NATSTLS(t testing.TB) (driver.Endpoint, *labtls.Material) {
	t.Helper()
	m, err := labtls.New(t.TempDir(), "test", []string{"127.0.0.1", "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	ep := startNATS(t, m)
	ep.TLS = m.ClientConfig()
	return ep, m
}

func startNATS(t testing.TB, m *labtls.Material) driver.Endpoint {
	password := broker.RandomSecret()
	opts := nats.Options("127.0.0.1", server.RANDOM_PORT, "127.0.0.1", server.RANDOM_PORT,
		t.TempDir(), "pslab", password)
	if m != nil {
		nats.WithTLS(opts, m.Cert)
	}
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatalf("in-process nats-server: %v", err)
	}
	go s.Start()
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	if !s.ReadyForConnections(15 * time.Second) {
		t.Fatal("in-process nats-server not ready for connections within 15 s")
	}
	monitor := s.MonitorAddr()
	if monitor == nil {
		t.Fatal("in-process nats-server has no monitoring endpoint")
	}
	return driver.Endpoint{URL: "nats://" + s.Addr().String(), User: "pslab", Password: password,
		MonitorURL: "http://" + monitor.String()}
}

// NATSDriver opens the NATS driver on a NATS(t) server; both end with the
// test.
func NATSDriver(t testing.TB) (*nats.Driver, driver.Endpoint) {
	t.Helper()
	ep := NATS(t)
	return OpenNATS(t, ep), ep
}

// OpenNATS opens the NATS driver on ep, closed when the test ends.
func OpenNATS(t testing.TB, ep driver.Endpoint) *nats.Driver {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := nats.NewDriver(ctx, ep)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// NATSChild starts pslab's embedded nats-server as the child process
// pslab runs (a broker.Restartable: Kill and Restart), on loopback,
// stopped when the test ends. For tests of the process itself; skipped
// under -short. The test binary's TestMain must call broker.RunTests.
func NATSChild(t testing.TB) (*nats.Server, driver.Endpoint) {
	t.Helper()
	SkipShort(t, "a nats-server child process")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := nats.NewServer(nats.ServerConfig{StoreDir: t.TempDir()})
	ep, err := b.Start(ctx, broker.LoopbackHost{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop(context.Background()) })
	return b, ep
}

// Artemis is an Artemis of the test's own instance (cfg.Instance, which
// the test must name) on free ports (where cfg leaves them 0), with a
// 256 MB heap unless cfg says otherwise, installed from what this machine
// already has (the unpacked distribution, or its tarball in the local
// Maven repository) and not started. Without either the test is skipped:
// CI runs `pslab broker install artemis` first (scripts/test.sh). Skipped
// under -short.
func Artemis(t testing.TB, cfg artemis.ArtemisConfig) *artemis.Artemis {
	t.Helper()
	SkipShort(t, "Artemis")
	if cfg.Instance == "" {
		t.Fatal("testbroker.Artemis: name the test's instance")
	}
	if cfg.HeapMB == 0 {
		cfg.HeapMB = 256
	}
	for _, p := range []*int{&cfg.Port, &cfg.CorePort, &cfg.TLSPort} {
		if *p == 0 {
			port, err := broker.FreePort()
			if err != nil {
				t.Fatal(err)
			}
			*p = port
		}
	}
	a := artemis.NewArtemis(cfg)
	if !a.Installed() {
		if missing := a.NotAtHand(); missing != "" {
			t.Skipf("Artemis %s is not installed (%s): run `go run ./cmd/pslab broker install artemis`", a.Config().Version, missing)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := a.Install(ctx, testLog{t}); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

// RunArtemis starts Artemis(t, cfg) on loopback and opens its STOMP
// driver; both end with the test.
func RunArtemis(t testing.TB, cfg artemis.ArtemisConfig) (*artemis.Artemis, driver.Endpoint, driver.Driver) {
	t.Helper()
	a := Artemis(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ep, err := a.Start(ctx, broker.LoopbackHost{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Stop(context.Background()) })
	d, err := artemis.NewSTOMP(ep)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return a, ep, d
}

// testLog writes a broker's progress to the test's log.
type testLog struct{ t testing.TB }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}
