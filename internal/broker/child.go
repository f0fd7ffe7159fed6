package broker

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"pslab/internal/cpuset"
	"pslab/internal/procs"
)

// childEnv names the environment variable that turns a pslab (or test)
// binary into a broker child process.
const childEnv = "PSLAB_CHILD"

// RunChildIfRequested runs the broker child named by PSLAB_CHILD and exits
// the process, or returns at once when the variable is unset. Call it first
// thing in main and in TestMain of packages that start brokers.
func RunChildIfRequested() {
	cpuset.ExecIfRequested() // a broker started on its own CPUs: exec it
	switch os.Getenv(childEnv) {
	case "":
		return
	case "nats-server":
		if err := serveNATS(); err != nil {
			fmt.Fprintln(os.Stderr, "pslab nats-server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	default:
		fmt.Fprintf(os.Stderr, "pslab: unknown %s=%q\n", childEnv, os.Getenv(childEnv))
		os.Exit(2)
	}
}

func serveNATS() error {
	host, portStr, err := net.SplitHostPort(os.Getenv("PSLAB_NATS_LISTEN"))
	if err != nil {
		return err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return err
	}
	// HTTP monitoring, on the clients' address (broker.NATS always sets
	// it; a server started by hand, as some tests do, may go without): the
	// driver reads the output buffers of core subscribers from /connz
	// (what the server still holds for them when a case's drain ends).
	var monitorHost string
	var monitorPort int
	if m := os.Getenv("PSLAB_NATS_MONITOR"); m != "" {
		h, p, err := net.SplitHostPort(m)
		if err != nil {
			return fmt.Errorf("PSLAB_NATS_MONITOR: %w", err)
		}
		if monitorPort, err = strconv.Atoi(p); err != nil {
			return fmt.Errorf("PSLAB_NATS_MONITOR: %w", err)
		}
		monitorHost = h
	}
	opts := &server.Options{
		ServerName: "pslab",
		Host:       host,
		Port:       port,
		HTTPHost:   monitorHost,
		HTTPPort:   monitorPort,
		JetStream:  true,
		StoreDir:   os.Getenv("PSLAB_NATS_STORE"),
		Username:   os.Getenv("PSLAB_NATS_USER"),
		Password:   os.Getenv("PSLAB_NATS_PASSWORD"),
		NoSigs:     true,
		// 800-connection cases: leave room.
		MaxConn: NATSMaxConn,
		// A client on the emulated 1 Mbit/s lossy link may need several
		// seconds (SYN and segment retransmissions) to send CONNECT; the
		// default 2 s would refuse it. Connection set-up is not measured.
		AuthTimeout: 30,
		// The server PINGs a new client 2 s after accepting it unless told
		// otherwise; on the lossy link a handshake still under way then sees
		// PING where nats.go expects the PONG to its own, and the connect
		// fails ("expected 'PONG', got 'PING'", seen with 100 clients on
		// wifi-paper). The regular ping interval still applies.
		DisableShortFirstPing: true,
		// A write to a client that takes longer than the write deadline
		// (10 s) closes the client as a slow consumer, by default even when
		// the write made progress. Over the emulated 1 Mbit/s link a
		// subscriber of a fan-out gets 10-20 kbit/s, so any write of more
		// than a few tens of KB outlasts the deadline: in the first
		// wifi-paper records of the reproduction (2026-11-24) the four labs'
		// servers closed 880 subscriber connections this way in 15 min, and
		// core NATS lost, JetStream redelivered, what each was owed. Retry
		// (the server's own policy for routes, gateways and leaf nodes)
		// closes only a client that takes nothing for the whole deadline;
		// with 10 s it still closed 15 of 50 subscribers of a 1/50/1 quick
		// case (TCP's retransmission back-off over the lossy link), so the
		// deadline is TCP's own longest back-off, 2 min (TCP_RTO_MAX).
		WriteTimeout:  server.WriteTimeoutPolicyRetry,
		WriteDeadline: NATSWriteDeadline,
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return err
	}
	s.ConfigureLogger()
	go s.Start()
	if !s.ReadyForConnections(15 * time.Second) {
		return fmt.Errorf("not ready for connections")
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	orphaned := make(chan struct{})
	if os.Getenv("PSLAB_NATS_DETACHED") != "true" {
		go watchParent(orphaned)
	}
	select {
	case <-sig:
	case <-orphaned:
		fmt.Fprintln(os.Stderr, "pslab nats-server: parent process gone, shutting down")
	}
	s.Shutdown()
	s.WaitForShutdown()
	return nil
}

// watchParent closes orphaned when the parent process dies (a crashed or
// killed pslab must not leave a broker behind).
func watchParent(orphaned chan<- struct{}) {
	ppid := os.Getppid()
	for {
		time.Sleep(250 * time.Millisecond)
		if os.Getppid() != ppid {
			close(orphaned)
			return
		}
	}
}

// RandomSecret returns a fresh random credential: 192 bits of crypto/rand,
// base64url (nothing that needs escaping in a URL, a STOMP header or a
// shell).
func RandomSecret() string {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// CacheDir is pslab's cache: $PSLAB_CACHE, else $XDG_CACHE_HOME/pslab, else
// ~/.cache/pslab.
func CacheDir() string {
	if d := os.Getenv("PSLAB_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "pslab")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "pslab-cache")
	}
	return filepath.Join(home, ".cache", "pslab")
}

// ProcessAlive is true for a running, non-zombie process.
func ProcessAlive(pid int) bool { return procs.Running(pid) }

// RunTests is the TestMain of every test package that starts brokers: it
// runs the broker child when the test binary was started as one, and the
// tests otherwise. Call it as func TestMain(m *testing.M) { broker.RunTests(m) }.
func RunTests(m interface{ Run() int }) {
	RunChildIfRequested()
	os.Exit(m.Run())
}

// NATSWriteDeadline is the embedded nats-server's write deadline: a
// client that takes nothing for this long is closed (see serveNATS).
const NATSWriteDeadline = 2 * time.Minute

// NATSMaxConn is the embedded nats-server's connection limit (its
// MaxConn): cases with more clients are refused before anything runs.
const NATSMaxConn = 4096

// StoreOwnerFile, in an embedded NATS store, holds the pid of the pslab
// process that started that broker (see internal/cleanup).
const StoreOwnerFile = "pslab-owner.pid"
